extension BuildContext {
  /// Says that tests must replace this provider: it reaches something live (the network, the
  /// disk, the real clock, a payment service). Call it first thing in the builder.
  ///
  /// ```swift
  /// let httpClientProvider = Provider { pod in
  ///   pod.requireReplacementInTests()
  ///   return URLSessionHTTPClient()
  /// }
  /// ```
  ///
  /// Outside a test it does nothing. Inside a test's isolation of a pod (the `.isolated`
  /// trait of `ProviderPodTesting`, or ``Pod/withIsolation(overrides:clock:observer:reportIssue:_:)``
  /// with `reportIssue`), the builder only runs when nothing replaced the provider, and
  /// the call fails the test with a message that names the provider and how to replace it,
  /// without stopping the process.
  ///
  /// The builder then goes on, so by default the resolve returns the live instance, as
  /// swift-dependencies returns a live value it has reported: a value of a type that is not
  /// optional has nothing else to be. To keep the live dependency out of the failing test
  /// too, return a stand-in when the call says it failed the test:
  ///
  /// ```swift
  /// let paymentsProvider = Provider { pod in
  ///   if pod.requireReplacementInTests() { return UnimplementedPayments() }
  ///   return StripePayments()
  /// }
  /// ```
  ///
  /// An async or throwing builder may throw instead.
  ///
  /// - Returns: Whether this build runs, unreplaced, in a test's isolated pod, and the test
  ///   has been failed.
  @discardableResult
  public func requireReplacementInTests() -> Bool {
    guard let report = engine.settings.reportIssue else { return false }
    let frame = self.frame
    let (label, isFamilyMember) = engine.state.withLock { _ in
      (frame.info?.cycleLabel ?? "a provider", frame.info?.family != nil)
    }
    // A family's override takes the argument too: the example must be one that compiles.
    let (replaced, build) =
      isFamilyMember ? ("family", "{ _, argument in Fake() }") : ("provider", "{ _ in Fake() }")
    report(
      """
      ProviderPod: \(label) must be replaced in tests, and this test built it with its own \
      builder, which reaches something live. Replace it in the test's overrides, for example \
      .isolated(appPod, overrides: [\(replaced).override \(build)]), or with \
      appPod.overrideProvider(\(replaced)) \(build) inside the test.
      """)
    return true
  }
}
