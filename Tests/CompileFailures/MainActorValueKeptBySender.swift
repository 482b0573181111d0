// Must NOT compile: .ci/check-compile-failures typechecks this file against the library and
// expects each `// expected-error:` text below among the compiler's errors.
//
// A main-actor provider's value lives on the main actor. A value given to its override from
// another thread is handed over: the code that made it may not keep using it there.
import ProviderPod

final class Counter {
  var count = 0
}

let counterProvider = MainActorProvider { _ in Counter() }

func overrideFromAnotherThread() async {
  let counter = Counter()
  let override = counterProvider.override(withValue: counter)
  _ = Pod(overrides: [override])
  counter.count += 1
}

// expected-error: sending 'counter' risks causing data races
