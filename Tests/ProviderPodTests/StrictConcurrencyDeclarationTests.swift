import ProviderPod
import Testing

// Declared the way users will: globals next to their types, in Swift 6 mode with complete
// strict concurrency. This file compiling without warnings is half of the test. What a pod may
// hand to several callers is Sendable; what is not Sendable is built anew for each resolve.

/// A non-Sendable class with mutable state, the common case in app code.
final class FormState {
  var email = ""
}

/// A protocol existential; what a pod shares must be Sendable, so the protocol says so.
protocol Analytics: AnyObject, Sendable {
  func track(_ event: String) -> String
}

final class ConsoleAnalytics: Analytics {
  func track(_ event: String) -> String { "tracked \(event)" }
}

/// A non-Sendable class built from other providers, shared ones and its own.
final class SignUpModel {
  let form: FormState
  let analytics: any Analytics
  let makeID: () -> Int

  init(form: FormState, analytics: any Analytics, makeID: @escaping () -> Int) {
    self.form = form
    self.analytics = analytics
    self.makeID = makeID
  }
}

let formStateProvider = Provider(scope: AlwaysCreateNewScope()) { _ in FormState() }
let appAnalyticsProvider = Provider<any Analytics> { _ in ConsoleAnalytics() }
let idFactoryProvider = Provider<() -> Int>(scope: AlwaysCreateNewScope()) { _ in
  var next = 0
  return {
    next += 1
    return next
  }
}
let sendableClosureProvider = Provider<@Sendable (Int) -> Int> { _ in { $0 * 2 } }
let signUpModelProvider = Provider(scope: AlwaysCreateNewScope()) { pod in
  SignUpModel(
    form: pod.resolve(formStateProvider),
    analytics: pod.resolve(appAnalyticsProvider),
    makeID: pod.resolve(idFactoryProvider))
}

@Suite("Strict concurrency declarations")
struct StrictConcurrencyDeclarationTests {
  @Test("non-Sendable classes and closures are each caller's own; Sendable ones are cached")
  func nonSendableValues() {
    let pod = Pod()
    let model = pod.resolve(signUpModelProvider)
    model.form.email = "ada@example.com"
    let other = pod.resolve(signUpModelProvider)
    #expect(other.form !== model.form)
    #expect(other.form.email == "")
    #expect(other.analytics === model.analytics)  // the cached, Sendable one
    #expect(model.analytics.track("start") == "tracked start")
    #expect(model.makeID() == 1)
    #expect(model.makeID() == 2)
    #expect(other.makeID() == 1)  // a counter of its own
    #expect(pod.resolve(sendableClosureProvider)(21) == 42)
  }

  @Test("overrides replace Sendable values, and non-Sendable ones with a new one per resolve")
  func overrides() {
    final class FakeAnalytics: Analytics {
      func track(_ event: String) -> String { "fake \(event)" }
    }
    let pod = Pod(overrides: [
      appAnalyticsProvider.override { _ in FakeAnalytics() },
      formStateProvider.override { _ in
        let form = FormState()
        form.email = "preset"
        return form
      },
    ])
    let model = pod.resolve(signUpModelProvider)
    #expect(model.analytics.track("x") == "fake x")
    #expect(model.form.email == "preset")
    #expect(pod.resolve(signUpModelProvider).form !== model.form)
  }

  @Test("a pod is usable from a task and a detached task")
  func podCrossesIsolation() async {
    let pod = Pod()
    let fromTask = await Task { pod.resolve(sendableClosureProvider)(1) }.value
    let fromDetached = await Task.detached { pod.resolve(sendableClosureProvider)(2) }.value
    #expect(fromTask == 2)
    #expect(fromDetached == 4)
  }
}
