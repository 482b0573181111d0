import Foundation
import ProviderPod
import Testing

@testable import SignUpDemo

/// A server double: answers every request with the status the test chose for its path, and
/// records the requests.
private final class ScriptedServer: HTTPClient, @unchecked Sendable {
  private let lock = NSLock()
  private var recorded: [String] = []
  private let statuses: [String: Int]

  init(statuses: [String: Int] = [:]) { self.statuses = statuses }

  var requests: [String] { lock.withLock { recorded } }

  func post(_ path: String, body: String) -> Int {
    lock.withLock { recorded.append("\(path) \(body)") }
    return statuses[path] ?? (path == "/signup" ? 201 : 200)
  }
}

@Suite("App model")
@MainActor
struct AppModelTests {
  @Test("the observer numbers instances from the pod's build events, per provider")
  func labelsFromBuildEvents() {
    let transcript = Transcript()
    let trace = TraceObserver(transcript: transcript)
    let pod = Pod(observer: trace)
    #expect(trace.label("SignUpSession") == "SignUpSession")
    _ = pod.resolve(signUpSessionProvider)
    #expect(trace.label("SignUpSession") == "SignUpSession#1")
    _ = pod.resolve(signUpSessionProvider)
    #expect(trace.label("SignUpSession") == "SignUpSession#1")
    pod.clearCachedInstances(forScope: SignUpFlowScope())
    _ = pod.resolve(signUpSessionProvider)
    #expect(trace.label("SignUpSession") == "SignUpSession#2")
    #expect(trace.label("EmailValidator") == "EmailValidator")
  }

  @Test("a window's pod owns its sign-up and shares the app's singletons")
  func windowPods() async throws {
    let app = Pod()
    let first = Pod(parent: app, scopes: [WindowScope()])
    let second = Pod(parent: app, scopes: [WindowScope()])
    let session = second.resolve(signUpSessionProvider)
    #expect(first.resolve(signUpSessionProvider) !== session)
    #expect(second.resolve(profileStepViewModelProvider).session === session)
    let configuration = try await first.resolve(signUpConfigurationProvider)
    #expect(try await second.resolve(signUpConfigurationProvider) === configuration)
    #expect(try await app.resolve(signUpConfigurationProvider) === configuration)
    session.email = "grace@example.com"
    first.clearCachedInstances(forScope: SignUpFlowScope())
    #expect(second.resolve(signUpSessionProvider) === session)
    #expect(session.email == "grace@example.com")
  }

  @Test("the trace numbers instances across a tree of pods and says which pod reported each")
  func traceOfATree() {
    let transcript = Transcript()
    let appTrace = TraceObserver(transcript: transcript)
    let app = Pod(observer: appTrace)
    let windowTrace = TraceObserver(childOf: appTrace, podName: "window 1")
    let window = Pod(parent: app, scopes: [WindowScope()], observer: windowTrace)
    let otherTrace = TraceObserver(childOf: appTrace, podName: "window 2")
    let other = Pod(parent: app, scopes: [WindowScope()], observer: otherTrace)
    windowTrace.show("window.resolve(nameValidatorProvider)") {
      _ = window.resolve(nameValidatorProvider)
    }
    otherTrace.show("other.resolve(nameValidatorProvider)") {
      _ = other.resolve(nameValidatorProvider)
    }
    #expect(
      transcript.output.split(separator: "\n") == [
        "  ▸ window.resolve(nameValidatorProvider)",
        // Built through window 1, but cached in the app's pod, which reports it.
        "    + built      AppConfiguration#1       SingletonScope   [app]",
        "    + built      NameValidator#1          ProfileStepScope [window 1]",
        "  ▸ other.resolve(nameValidatorProvider)",
        "    + built      NameValidator#2          ProfileStepScope [window 2]",
        "    = reused     AppConfiguration#1 [app]",
      ])
    #expect(windowTrace.label("NameValidator") == "NameValidator#1")
    #expect(otherTrace.label("NameValidator") == "NameValidator#2")
    #expect(windowTrace.label("AppConfiguration") == "AppConfiguration#1")
    #expect(!windowTrace.holds("AppConfiguration"))
    #expect(appTrace.holds("AppConfiguration"))
    #expect(
      windowTrace.labeledGraphLines(of: window) == [
        "AppConfiguration#1 [app] (SingletonScope)",
        "NameValidator#1 (ProfileStepScope) <- AppConfiguration#1 [app]",
      ])
    windowTrace.isEnabled = false
    #expect(!appTrace.isEnabled)
  }

  @Test("clearing the flow scope closes the session: its form data is erased")
  func sessionClosedOnDiscard() {
    let pod = Pod()
    let session = pod.resolve(signUpSessionProvider)
    session.email = "ada@example.com"
    session.name = "Ada"
    pod.clearCachedInstances(forScope: EmailStepScope())
    #expect(session.email == "ada@example.com")
    pod.clearCachedInstances(forScope: SignUpFlowScope())
    #expect(session.email == nil)
    #expect(session.name == nil)
    #expect(pod.resolve(signUpSessionProvider) !== session)
  }

  @Test("the server is asked once per address per sign-up")
  func availabilityPerAddress() {
    let server = ScriptedServer(statuses: ["/email-available": 409])
    let pod = Pod(overrides: [httpClientProvider.override(withValue: server)])
    #expect(!pod.resolve(emailAvailabilityProvider("ada@example.com")).isAvailable)
    _ = pod.resolve(emailAvailabilityProvider("ada@example.com"))
    _ = pod.resolve(emailAvailabilityProvider("grace@example.com"))
    #expect(server.requests.count == 2)
    pod.clearCachedInstances(forScope: SignUpFlowScope())
    _ = pod.resolve(emailAvailabilityProvider("ada@example.com"))
    #expect(server.requests.count == 3)
  }

  @Test("a sign-up the server refuses stays open, with its data")
  func refusedSignUp() async throws {
    let transcript = Transcript()
    let server = ScriptedServer(statuses: ["/signup": 503])
    let flow = SignUpFlow(
      transcript: transcript, overrides: [httpClientProvider.override(withValue: server)])
    try flow.start()
    try flow.enterEmail("ada@example.com")
    try flow.enterName("Ada Lovelace")
    let finished = try await flow.finish()
    #expect(!finished)
    #expect(flow.screen == .profile)
    #expect(transcript.output.contains("✗ the server did not accept it: the sign-up stays open"))
    #expect(!transcript.output.contains("- discarded"))
    #expect(
      server.requests.last == "/signup email=ada@example.com name=Ada Lovelace terms=2026-01")
  }

  @Test("the view models are built on the main actor, from the flow's session")
  func viewModelsShareTheSession() {
    let pod = Pod()
    let email = pod.resolve(emailStepViewModelProvider)
    let profile = pod.resolve(profileStepViewModelProvider)
    #expect(email.session === profile.session)
    #expect(
      email.submit("ada@example.com") { EmailAvailability(email: $0, isAvailable: true) } == nil)
    #expect(profile.session.email == "ada@example.com")
  }
}
