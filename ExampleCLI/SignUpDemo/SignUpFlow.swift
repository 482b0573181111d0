import ProviderPod

/// The app's navigation through a sign-up, driving a pod the way screens would.
///
/// Moving forward keeps the previous screen's instances (a navigation stack); going back
/// clears the scope of the screen being left; finishing or cancelling clears the whole flow.
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
  private(set) var screen: Screen = .none
  private let transcript: Transcript

  init(pod: Pod, transcript: Transcript) {
    self.pod = pod
    self.transcript = transcript
  }

  /// The user taps "Sign up".
  func start() throws(Refusal) {
    guard screen == .none else {
      throw Refusal(message: "a sign-up is already in progress: finish or cancel it first")
    }
    let viewModel = pod.resolve(emailStepViewModelProvider)
    screen = .email
    let contents = viewModel.session.email.map { "holding \($0)" } ?? "empty"
    say("on \(screen.rawValue): \(viewModel), editing \(viewModel.session) (\(contents))")
  }

  /// The user enters an email and continues.
  func enterEmail(_ email: String) throws(Refusal) {
    switch screen {
    case .none: throw Refusal(message: "no sign-up in progress: type 'start' first")
    case .profile: throw Refusal(message: "you are on the profile screen: go 'back' first")
    case .email: break
    }
    let viewModel = pod.resolve(emailStepViewModelProvider)
    if let problem = viewModel.submit(email) {
      say("✗ \(problem)")
      return
    }
    say("✓ \(viewModel.session) now holds email \(email)")
    showProfileScreen()
  }

  /// The user enters a display name (moving to the profile screen if they went back).
  func enterName(_ name: String) throws(Refusal) {
    guard screen != .none else {
      throw Refusal(message: "no sign-up in progress: type 'start' first")
    }
    if screen == .email {
      guard pod.resolve(signUpSessionProvider).email != nil else {
        throw Refusal(message: "enter an email first: email <address>")
      }
      showProfileScreen()
    }
    let viewModel = pod.resolve(profileStepViewModelProvider)
    if let problem = viewModel.submit(name) {
      say("✗ \(problem)")
      return
    }
    say("✓ \(viewModel.session) now holds name \(name)")
  }

  /// The user goes back from the profile screen to the email screen.
  func back() throws(Refusal) {
    guard screen == .profile else {
      throw Refusal(
        message: screen == .none
          ? "no sign-up in progress: type 'start' first"
          : "the email screen is the first one: use 'cancel' to leave the sign-up")
    }
    say("leaving the profile screen clears ProfileStepScope:")
    pod.clearCachedInstances(forScope: ProfileStepScope())
    let viewModel = pod.resolve(emailStepViewModelProvider)
    screen = .email
    say(
      "back on \(screen.rawValue): \(viewModel) still shows \(viewModel.session.email ?? "nothing")"
    )
  }

  /// The user submits the sign-up. On success the whole flow scope is cleared.
  @discardableResult
  func finish() throws(Refusal) -> Bool {
    guard screen != .none else {
      throw Refusal(message: "no sign-up in progress: type 'start' first")
    }
    let session = pod.resolve(signUpSessionProvider)
    guard let email = session.email, let name = session.name else {
      throw Refusal(message: "the sign-up needs an email and a name before it can finish")
    }
    let service = pod.resolve(signUpServiceProvider)
    let status = service.submit()
    say("\(service) sent \(email) / \(name) with \(service.client): status \(status)")
    guard status == 201 else {
      say("✗ the server did not accept it: the sign-up stays open")
      return false
    }
    say("✓ signed up. Finishing clears SignUpFlowScope and, through the tree, both step scopes:")
    clearFlow()
    return true
  }

  /// The user abandons the sign-up.
  func cancel() throws(Refusal) {
    guard screen != .none else { throw Refusal(message: "no sign-up in progress") }
    say("cancelling clears SignUpFlowScope and both step scopes:")
    clearFlow()
  }

  /// Clears the flow scope and shows what the discarded instances' hooks did.
  private func clearFlow() {
    let analytics = pod.resolve(analyticsLogProvider)
    let before = analytics.events.count
    pod.clearCachedInstances(forScope: SignUpFlowScope())
    for event in analytics.events[before...] where event.contains("onDiscard") {
      say("✓ \(event)")
    }
    screen = .none
  }

  /// Where the user is and what the pod holds, without building anything.
  func status() {
    say("screen: \(screen.rawValue)")
    let graph = pod.dependencyGraph().withoutDemoPlumbing
    say("cached instances: \(graph.nodes.count)")
    for node in graph.nodes {
      say("  \(pod.latestLabel(for: node.provider).padded(to: 24)) \(node.scope)")
    }
  }

  private func showProfileScreen() {
    let viewModel = pod.resolve(profileStepViewModelProvider)
    screen = .profile
    say("on \(screen.rawValue): \(viewModel), editing \(viewModel.session)")
  }

  private func say(_ line: String) { transcript.write("  " + line) }
}

extension Pod {
  /// The dependency graph with each instance's visible label, one line per instance:
  /// `EmailStepViewModel#2 (EmailStepScope) <- SignUpSession#2, EmailValidator#2`.
  func labeledGraphLines() -> [String] {
    let graph = dependencyGraph().withoutDemoPlumbing
    return graph.nodes.map { node in
      let line = "\(latestLabel(for: node.provider)) (\(node.scope))"
      let dependencies = graph.dependencies(of: node).map { latestLabel(for: $0.provider) }
      return dependencies.isEmpty ? line : line + " <- " + dependencies.joined(separator: ", ")
    }
  }
}

extension DependencyGraph {
  /// The graph without the demo's label counter, which every instance uses.
  var withoutDemoPlumbing: DependencyGraph {
    let hidden = instanceLabelsProvider.name
    return DependencyGraph(
      nodes: nodes.filter { $0.provider != hidden },
      edges: edges.filter { $0.dependency.provider != hidden && $0.dependent.provider != hidden })
  }
}
