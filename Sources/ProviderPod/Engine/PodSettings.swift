/// What a pod is given besides its overrides and observer, and hands on to its children: read
/// by retries and by builders that ask, never on the resolve path.
struct PodSettings: Sendable {
  /// What retry back-offs sleep on, unless a policy brings its own `sleep`.
  let clock: any Clock<Duration>
  /// Where a build of a provider that tests must replace reports itself, unreplaced: set in
  /// the pods an isolation makes for a test (and so in their children), nil elsewhere.
  let reportUnreplaced: (@Sendable (String) -> Void)?

  static let standard = PodSettings(clock: ContinuousClock(), reportUnreplaced: nil)
}
