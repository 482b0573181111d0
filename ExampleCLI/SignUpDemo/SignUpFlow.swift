import ProviderPod

/// The app's navigation through a sign-up, driving a pod the way screens would, and showing
/// each screen as a line of text.
///
/// Like a navigation stack, it holds the view models of the screens it shows: moving forward
/// keeps the email screen, going back clears the scope of the screen being left, and
/// finishing or cancelling clears the whole flow. Each pod call is shown (`▸`) with what the
/// pod did, unless tracing is off.
@MainActor
final class SignUpFlow {
  /// Where the user is.
  enum Screen: String, Sendable {
    case none = "no sign-up in progress"
    case email = "the email screen"
    case profile = "the profile screen"
  }

  /// Something the user cannot do right now; printed as a one-line error.
  struct Refusal: Error, Equatable, CustomStringConvertible {
    let message: String
    var description: String { message }
  }

  let pod: Pod
  /// Numbers the pod's instances and prints its events.
  let trace: TraceObserver
  /// What the code shown for each pod call names the pod: `pod`, `firstWindow`.
  let podExpression: String
  private let transcript: Transcript
  private var emailScreen: EmailStepViewModel?
  private var profileScreen: ProfileStepViewModel?

  /// A flow on a new pod of its own.
  convenience init(transcript: Transcript, overrides: [ProviderOverride] = []) {
    let trace = TraceObserver(transcript: transcript)
    self.init(pod: Pod(overrides: overrides, observer: trace), trace: trace, transcript: transcript)
  }

  /// A flow on `pod`, whose observer is `trace`; the code it shows calls the pod
  /// `podExpression`.
  init(pod: Pod, trace: TraceObserver, transcript: Transcript, podExpression: String = "pod") {
    self.pod = pod
    self.trace = trace
    self.podExpression = podExpression
    self.transcript = transcript
  }

  /// The session of the sign-up in progress.
  var session: SignUpSession? { emailScreen?.session }

  var screen: Screen {
    profileScreen != nil ? .profile : emailScreen != nil ? .email : .none
  }

  /// Where the user is, in a few words: `on the profile screen, editing SignUpSession#2
  /// (holding ada@example.com)`.
  var summary: String {
    guard let session = emailScreen?.session else { return screen.rawValue }
    let contents = [session.email, session.name].compactMap { $0 }
    return "on \(screen.rawValue), editing \(label(signUpSessionProvider)) "
      + (contents.isEmpty ? "(empty)" : "(holding \(contents.joined(separator: " and ")))")
  }

  /// The user taps "Sign up".
  func start() throws(Refusal) {
    guard screen == .none else {
      throw Refusal(message: "a sign-up is already in progress: finish or cancel it first")
    }
    let viewModel = trace.show("\(podExpression).resolve(emailStepViewModelProvider)") {
      pod.resolve(emailStepViewModelProvider)
    }
    emailScreen = viewModel
    let contents = viewModel.session.email.map { "holding \($0)" } ?? "empty"
    say("on \(screen.rawValue), editing \(label(signUpSessionProvider)) (\(contents))")
  }

  /// The user enters an email and continues.
  func enterEmail(_ email: String) throws(Refusal) {
    guard let viewModel = emailScreen else {
      throw Refusal(message: "no sign-up in progress: type 'start' first")
    }
    guard profileScreen == nil else {
      throw Refusal(message: "you are on the profile screen: go 'back' first")
    }
    let problem = viewModel.submit(email) { email in
      trace.show("\(podExpression).resolve(emailAvailabilityProvider(\"\(email)\"))") {
        pod.resolve(emailAvailabilityProvider(email))
      }
    }
    if let problem {
      say("✗ \(problem)")
      return
    }
    say("✓ \(label(signUpSessionProvider)) now holds email \(email)")
    showProfileScreen()
  }

  /// The user enters a display name (moving to the profile screen if they went back).
  func enterName(_ name: String) throws(Refusal) {
    guard let emailScreen else {
      throw Refusal(message: "no sign-up in progress: type 'start' first")
    }
    if profileScreen == nil {
      guard emailScreen.session.email != nil else {
        throw Refusal(message: "enter an email first: email <address>")
      }
      showProfileScreen()
    }
    if let problem = profileScreen?.submit(name) {
      say("✗ \(problem)")
      return
    }
    say("✓ \(label(signUpSessionProvider)) now holds name \(name)")
  }

  /// The user goes back from the profile screen to the email screen.
  func back() throws(Refusal) {
    guard profileScreen != nil, let emailScreen else {
      throw Refusal(
        message: screen == .none
          ? "no sign-up in progress: type 'start' first"
          : "the email screen is the first one: use 'cancel' to leave the sign-up")
    }
    trace.show("\(podExpression).clearCachedInstances(forScope: ProfileStepScope())") {
      pod.clearCachedInstances(forScope: ProfileStepScope())
    }
    profileScreen = nil
    say("back on \(screen.rawValue): it still shows \(emailScreen.session.email ?? "nothing")")
  }

  /// The user submits the sign-up. On success the whole flow scope is cleared.
  @discardableResult
  func finish() async throws(Refusal) -> Bool {
    guard let session = emailScreen?.session else {
      throw Refusal(message: "no sign-up in progress: type 'start' first")
    }
    guard let email = session.email, let name = session.name else {
      throw Refusal(message: "the sign-up needs an email and a name before it can finish")
    }
    let configuration: SignUpConfiguration
    do {
      configuration = try await trace.showAwaiting(
        "try await \(podExpression).resolve(signUpConfigurationProvider)"
      ) {
        try await pod.resolve(signUpConfigurationProvider)
      }
    } catch {
      throw Refusal(message: "the sign-up configuration did not load: \(error)")
    }
    let service = trace.show("\(podExpression).resolve(signUpServiceProvider)") {
      pod.resolve(signUpServiceProvider)
    }
    let status = service.submit(
      email: email, name: name, termsVersion: configuration.termsVersion)
    say(
      "\(label(signUpServiceProvider)) sent the sign-up through \(type(of: service.client)): "
        + "status \(status)")
    guard status == 201 else {
      say("✗ the server did not accept it: the sign-up stays open")
      return false
    }
    say("✓ signed up")
    clearFlow()
    return true
  }

  /// The user abandons the sign-up.
  func cancel() throws(Refusal) {
    guard screen != .none else { throw Refusal(message: "no sign-up in progress") }
    clearFlow()
    say("sign-up cancelled")
  }

  /// Ends the sign-up: one clear of the flow scope discards the session, every address
  /// checked, and, through the scope tree, both screens.
  private func clearFlow() {
    let session = emailScreen?.session
    let sessionLabel = label(signUpSessionProvider)
    trace.show("\(podExpression).clearCachedInstances(forScope: SignUpFlowScope())") {
      pod.clearCachedInstances(forScope: SignUpFlowScope())
    }
    emailScreen = nil
    profileScreen = nil
    if let session, session.isClosed {
      say("✓ \(sessionLabel)'s onDiscard closed it: its email and name are erased")
    }
  }

  /// Where the user is and what the pod holds, without building anything. In a child pod
  /// (a window's), its own instances, then those of the parent that it shares.
  func status() {
    say("screen: \(screen.rawValue)")
    guard let parent = pod.parent, let parentTrace = trace.parent else {
      list("cached instances", pod.dependencyGraph().nodes, trace: trace)
      return
    }
    // A child's graph also lists the parent's instances its own were built from.
    let own = pod.dependencyGraph().nodes.filter { trace.holds($0.provider) }
    list("cached in [\(trace.podName)]", own, trace: trace)
    list(
      "cached in [\(parentTrace.podName)], shared by every window", parent.dependencyGraph().nodes,
      trace: parentTrace)
  }

  private func list(_ title: String, _ nodes: [DependencyGraph.Node], trace: TraceObserver) {
    say("\(title): \(nodes.count)")
    for node in nodes {
      say("  \(trace.label(node.provider).padded(to: 40)) \(node.scope)")
    }
  }

  private func showProfileScreen() {
    let viewModel = trace.show("\(podExpression).resolve(profileStepViewModelProvider)") {
      pod.resolve(profileStepViewModelProvider)
    }
    profileScreen = viewModel
    say("on \(screen.rawValue), editing \(label(signUpSessionProvider))")
  }

  /// The label of the instance the provider built last, such as `SignUpSession#2`.
  private func label(_ provider: some CustomStringConvertible) -> String {
    trace.label(provider.description)
  }

  /// Writes a line of the screens' story, broken to fit the terminal: it holds what the user
  /// typed, which can be long.
  private func say(_ line: String) { transcript.write(("  " + line).fitted(indent: "    ")) }
}
