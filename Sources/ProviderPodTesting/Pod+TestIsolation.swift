public import ProviderPod
public import Testing

extension Pod {
  /// Runs `operation` with this pod isolated, as the `isolated(_:overrides:clock:sourceLocation:)`
  /// trait runs a test: for part of a test, or a helper that several tests call. A provider
  /// that tests must replace, built unreplaced, records an issue in the current test.
  ///
  /// ```swift
  /// try await appPod.withTestIsolation(overrides: [clockProvider.override(withValue: fixed)]) {
  ///   testPod in
  ///   #expect(try await ReportCommand().run() == expected)
  /// }
  /// ```
  public func withTestIsolation<Result>(
    overrides: [ProviderOverride] = [],
    clock: (any Clock<Duration>)? = nil,
    observer: (any PodObserver)? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    isolation: isolated (any Actor)? = #isolation,
    _ operation: (Pod) async throws -> Result
  ) async rethrows -> Result {
    try await withIsolation(
      overrides: overrides, clock: clock, observer: observer,
      reportIssue: { message in
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
      },
      isolation: isolation, operation)
  }

  /// Runs the synchronous `operation` with this pod isolated; see the async
  /// `withTestIsolation(overrides:clock:observer:sourceLocation:isolation:_:)`.
  public func withTestIsolation<Result>(
    overrides: [ProviderOverride] = [],
    clock: (any Clock<Duration>)? = nil,
    observer: (any PodObserver)? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ operation: (Pod) throws -> Result
  ) rethrows -> Result {
    try withIsolation(
      overrides: overrides, clock: clock, observer: observer,
      reportIssue: { message in
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
      },
      operation)
  }
}
