// Must NOT compile: .ci/check-compile-failures typechecks this file against the library and
// expects each `// expected-error:` text below among the compiler's errors.
//
// A provider whose value is not Sendable builds a new one on every resolve. No override may
// turn that into one instance handed to every caller: not a caching scope, not a value. Each
// case has a class of its own, so that each error names its case.
import ProviderPod

final class IntoSingleton {}
final class GivenValue {}
final class PodIntoSingleton {}
final class PodGivenValue {}
final class ContextIntoSingleton {}
final class ContextGivenValue {}
final class FamilyIntoSingleton {}
final class PodFamilyIntoSingleton {}
final class ContextFamilyIntoSingleton {}
final class ThrowingIntoSingleton {}
final class ThrowingGivenValue {}
final class PodThrowingIntoSingleton {}
final class PodThrowingGivenValue {}
final class ContextThrowingIntoSingleton {}
final class ContextThrowingGivenValue {}

let intoSingleton = Provider(scope: AlwaysCreateNewScope()) { _ in IntoSingleton() }
let givenValue = Provider(scope: AlwaysCreateNewScope()) { _ in GivenValue() }
let podIntoSingleton = Provider(scope: AlwaysCreateNewScope()) { _ in PodIntoSingleton() }
let podGivenValue = Provider(scope: AlwaysCreateNewScope()) { _ in PodGivenValue() }
let contextIntoSingleton = Provider(scope: AlwaysCreateNewScope()) { _ in ContextIntoSingleton() }
let contextGivenValue = Provider(scope: AlwaysCreateNewScope()) { _ in ContextGivenValue() }
let familyIntoSingleton = ProviderFamily(scope: AlwaysCreateNewScope()) { (_, id: Int) in
  FamilyIntoSingleton()
}
let podFamilyIntoSingleton = ProviderFamily(scope: AlwaysCreateNewScope()) { (_, id: Int) in
  PodFamilyIntoSingleton()
}
let contextFamilyIntoSingleton = ProviderFamily(scope: AlwaysCreateNewScope()) {
  (_, id: Int) in ContextFamilyIntoSingleton()
}
let throwingIntoSingleton = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in
  ThrowingIntoSingleton()
}
let throwingGivenValue = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in
  ThrowingGivenValue()
}
let podThrowingIntoSingleton = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in
  PodThrowingIntoSingleton()
}
let podThrowingGivenValue = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in
  PodThrowingGivenValue()
}
let contextThrowingIntoSingleton = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in
  ContextThrowingIntoSingleton()
}
let contextThrowingGivenValue = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in
  ContextThrowingGivenValue()
}

// Overrides for a new pod.
let overrides = [
  // expected-error: type 'IntoSingleton' does not conform to the 'Sendable' protocol
  intoSingleton.override(scope: SingletonScope()) { _ in IntoSingleton() },
  // expected-error: type 'GivenValue' does not conform to the 'Sendable' protocol
  givenValue.override(withValue: GivenValue()),
  // expected-error: type 'FamilyIntoSingleton' does not conform to the 'Sendable' protocol
  familyIntoSingleton.override(scope: SingletonScope()) { _, _ in FamilyIntoSingleton() },
  // expected-error: type 'ThrowingIntoSingleton' does not conform to the 'Sendable' protocol
  throwingIntoSingleton.override(scope: SingletonScope()) { _ in ThrowingIntoSingleton() },
  // expected-error: type 'ThrowingGivenValue' does not conform to the 'Sendable' protocol
  throwingGivenValue.override(withValue: ThrowingGivenValue()),
]

// Overrides of a live pod.
func overrideLive(_ pod: Pod) {
  // expected-error: type 'PodIntoSingleton' does not conform to the 'Sendable' protocol
  pod.overrideProvider(podIntoSingleton, scope: SingletonScope()) { _ in PodIntoSingleton() }
  // expected-error: type 'PodGivenValue' does not conform to the 'Sendable' protocol
  pod.overrideProvider(podGivenValue, withValue: PodGivenValue())
  // expected-error: type 'PodFamilyIntoSingleton' does not conform to the 'Sendable' protocol
  pod.overrideProvider(podFamilyIntoSingleton, scope: SingletonScope()) { _, _ in
    PodFamilyIntoSingleton()
  }
  // expected-error: type 'PodThrowingIntoSingleton' does not conform to the 'Sendable' protocol
  pod.overrideProvider(podThrowingIntoSingleton, scope: SingletonScope()) { _ in
    PodThrowingIntoSingleton()
  }
  // expected-error: type 'PodThrowingGivenValue' does not conform to the 'Sendable' protocol
  pod.overrideProvider(podThrowingGivenValue, withValue: PodThrowingGivenValue())
}

// Overrides from inside a build.
let overridingBuilder = Provider { pod in
  // expected-error: type 'ContextIntoSingleton' does not conform to the 'Sendable' protocol
  pod.overrideProvider(contextIntoSingleton, scope: SingletonScope()) { _ in
    ContextIntoSingleton()
  }
  // expected-error: type 'ContextGivenValue' does not conform to the 'Sendable' protocol
  pod.overrideProvider(contextGivenValue, withValue: ContextGivenValue())
  // expected-error: type 'ContextFamilyIntoSingleton' does not conform to the 'Sendable' protocol
  pod.overrideProvider(contextFamilyIntoSingleton, scope: SingletonScope()) { _, _ in
    ContextFamilyIntoSingleton()
  }
  // expected-error: type 'ContextThrowingIntoSingleton' does not conform to the 'Sendable' protocol
  pod.overrideProvider(contextThrowingIntoSingleton, scope: SingletonScope()) { _ in
    ContextThrowingIntoSingleton()
  }
  // expected-error: type 'ContextThrowingGivenValue' does not conform to the 'Sendable' protocol
  pod.overrideProvider(contextThrowingGivenValue, withValue: ContextThrowingGivenValue())
  return 0
}
