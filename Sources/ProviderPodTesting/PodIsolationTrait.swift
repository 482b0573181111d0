public import ProviderPod
public import Testing

/// Isolates a pod for each test it applies to; see `isolated(_:overrides:clock:sourceLocation:)`.
public struct PodIsolationTrait: TestTrait, SuiteTrait, TestScoping {
  /// The pod the code under test resolves through.
  public let pod: Pod
  /// What the test's pod builds differently.
  public let overrides: [ProviderOverride]
  /// What retry back-offs sleep on in the test's pod; the pod's own clock if nil.
  public let clock: (any Clock<Duration>)?
  /// Where the trait is applied, where failures for unreplaced providers point.
  let sourceLocation: SourceLocation

  /// On a suite, every test in it (and each case of a parameterized test) gets a pod of its
  /// own: tests in a suite run in parallel, and none may see another's instances.
  public var isRecursive: Bool { true }

  /// Runs the test inside an isolation of ``pod``.
  public func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    try await pod.withTestIsolation(
      overrides: overrides, clock: clock, sourceLocation: sourceLocation
    ) { _ in
      try await function()
    }
  }
}

extension Trait where Self == PodIsolationTrait {
  /// Gives the test a pod of its own in place of `pod`: whatever the test (and every task it
  /// starts) does through `pod` goes to the test's pod, which starts empty with `pod`'s
  /// overrides and then `overrides`. Tests running at the same time never see each other's
  /// overrides or instances, and `pod` itself is left unchanged.
  ///
  /// ```swift
  /// @Test(.isolated(AppPod.shared, overrides: [httpClientProvider.override { _ in FakeHTTP() }]))
  /// func signUpSendsTheForm() async throws {
  ///   try await SignUpCommand(email: "ada@example.com").run()  // resolves AppPod.shared
  /// }
  /// ```
  ///
  /// A provider whose builder calls `BuildContext.requireReplacementInTests()`
  /// fails the test when the test's pod builds it unreplaced, and so does a resolve through a
  /// child pod made from `pod` before the test; the process goes on. On a suite,
  /// each of its tests gets its own pod. Detached tasks and threads the test starts see `pod`
  /// itself: start them inside `pod.withTestIsolation { testPod in ... }` and hand them
  /// `testPod`, a pod of their own that starts from the test's overrides. See
  /// `Pod.withIsolation(overrides:clock:observer:reportIssue:_:)`.
  ///
  /// - Parameters:
  ///   - pod: The pod the code under test resolves through, usually a global. A pod without
  ///     a parent: child pods the test makes from it are made from the test's pod.
  ///   - overrides: What the test's pod builds differently.
  ///   - clock: What retry back-offs sleep on in the test's pod, such as ``ImmediateClock``;
  ///     `pod`'s clock if nil.
  ///   - sourceLocation: Where the trait is applied; filled in by the compiler.
  public static func isolated(
    _ pod: Pod, overrides: [ProviderOverride] = [], clock: (any Clock<Duration>)? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> Self {
    PodIsolationTrait(
      pod: pod, overrides: overrides, clock: clock, sourceLocation: sourceLocation)
  }
}
