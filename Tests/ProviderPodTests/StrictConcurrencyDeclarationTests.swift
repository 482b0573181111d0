import ProviderPod
import Testing

// Declared the way users will: globals next to their types, in Swift 6 mode with complete
// strict concurrency. This file compiling without warnings is half of the test.

/// A non-Sendable class with mutable state, the common case in app code.
final class FormState {
  var email = ""
}

/// A protocol existential.
protocol Analytics {
  func track(_ event: String) -> String
}

final class ConsoleAnalytics: Analytics {
  func track(_ event: String) -> String { "tracked \(event)" }
}

/// A non-Sendable class built from other providers.
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

let formStateProvider = Provider(scope: StepScope()) { _ in FormState() }
let appAnalyticsProvider = Provider<any Analytics> { _ in ConsoleAnalytics() }
let idFactoryProvider = Provider<() -> Int> { _ in
  var next = 0
  return {
    next += 1
    return next
  }
}
let sendableClosureProvider = Provider<@Sendable (Int) -> Int> { _ in { $0 * 2 } }
let signUpModelProvider = Provider(scope: StepScope()) { pod in
  SignUpModel(
    form: pod.resolve(formStateProvider),
    analytics: pod.resolve(appAnalyticsProvider),
    makeID: pod.resolve(idFactoryProvider))
}

@Suite("Strict concurrency declarations")
struct StrictConcurrencyDeclarationTests {
  @Test("providers of non-Sendable classes, existentials and closures resolve and cache")
  func nonSendableValues() {
    let pod = Pod()
    let model = pod.resolve(signUpModelProvider)
    model.form.email = "ada@example.com"
    #expect(pod.resolve(formStateProvider).email == "ada@example.com")
    #expect(model.analytics.track("start") == "tracked start")
    #expect(model.makeID() == 1)
    #expect(pod.resolve(idFactoryProvider)() == 2)  // the same cached closure
    #expect(pod.resolve(sendableClosureProvider)(21) == 42)
  }

  @Test("overrides accept non-Sendable values")
  func nonSendableOverrides() {
    final class FakeAnalytics: Analytics {
      func track(_ event: String) -> String { "fake \(event)" }
    }
    let form = FormState()
    form.email = "preset"
    let pod = Pod(overrides: [
      appAnalyticsProvider.override { _ in FakeAnalytics() },
      formStateProvider.override(withValue: form),
    ])
    #expect(pod.resolve(signUpModelProvider).analytics.track("x") == "fake x")
    #expect(pod.resolve(signUpModelProvider).form === form)
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
