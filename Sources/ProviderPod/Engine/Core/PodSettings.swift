/// What a pod is given besides its overrides and observer, and hands on to its children: read
/// by retries and by builders that ask, never on the resolve path. A class, so that a child
/// pod takes one reference to its parent's rather than copying an existential; pods given
/// none (most) share `standard`.
final class PodSettings: Sendable {
  /// What retry back-offs sleep on, unless a policy brings its own `sleep`.
  let clock: any Clock<Duration>
  /// Where a build of a provider that tests must replace reports itself, unreplaced: set in
  /// the pods an isolation makes for a test (and so in their children), nil elsewhere.
  let reportIssue: (@Sendable (String) -> Void)?

  init(clock: any Clock<Duration>, reportIssue: (@Sendable (String) -> Void)?) {
    self.clock = clock
    self.reportIssue = reportIssue
  }

  static let standard = PodSettings(clock: ContinuousClock(), reportIssue: nil)
}
