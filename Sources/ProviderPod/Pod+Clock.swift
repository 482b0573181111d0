extension Pod {
  /// Creates a pod whose retry back-offs sleep on `clock`, here and in its child pods.
  ///
  /// ```swift
  /// let testPod = Pod(overrides: [serverProvider.override { _ in FlakyServer() }], clock: fastClock)
  /// ```
  ///
  /// A test gives a clock that does not wait (`ImmediateClock` of `ProviderPodTesting`), so
  /// that a retry's back-off takes no real time. A ``RetryPolicy`` given its own `sleep`
  /// uses that instead. Other pods sleep on `ContinuousClock`.
  ///
  /// - Parameters:
  ///   - overrides: Providers to build differently in this pod; see ``init(overrides:observer:)``.
  ///   - observer: Told about everything the pod does; see ``PodObserver``.
  ///   - clock: What retry back-offs sleep on.
  public convenience init(
    overrides: [ProviderOverride] = [], observer: (any PodObserver)? = nil,
    clock: any Clock<Duration>
  ) {
    self.init(
      overrides: overrides.map(\.record), observer: observer,
      settings: PodSettings(clock: clock, reportIssue: nil))
  }
}
