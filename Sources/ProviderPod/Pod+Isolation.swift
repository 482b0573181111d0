internal import CProviderPod

extension Pod {
  /// Runs `operation` with this pod isolated: on this thread and task, and in every task it
  /// starts, everything done through this pod goes to a new pod of the operation's own.
  ///
  /// ```swift
  /// let appPod = Pod()  // a global the code under test resolves through
  ///
  /// appPod.withIsolation(overrides: [httpClientProvider.override { _ in FakeHTTPClient() }]) {
  ///   testPod in
  ///   #expect(SignUpCommand().run() == "signed up")  // resolves through appPod: the fake
  /// }
  /// ```
  ///
  /// The operation's pod starts empty, with this pod's overrides of the moment and then
  /// `overrides`; it shares no instance with this pod, so nothing built inside leaks out,
  /// and code outside the operation (another test running at the same time, say) sees this
  /// pod unchanged. Resolves of every kind, overrides, clears and the dependency graph through
  /// this pod all reach the operation's pod, as does a child pod made from this pod inside the
  /// operation: its parent is the operation's pod. A child pod made before the operation
  /// began cannot move: it goes on sharing this pod's instances, and a resolve through it
  /// inside the operation is reported (see `reportIssue`).
  ///
  /// Tasks the operation starts with `Task { }`, `async let` or a task group carry the
  /// isolation, even a task that runs on after the operation returned. A detached task, a
  /// thread, or a Dispatch queue does not: through this pod it sees this pod itself. Hand
  /// such code the operation's pod (`testPod` above) instead.
  ///
  /// Swift Testing users write the `.isolated(_:overrides:clock:)` trait of the
  /// `ProviderPodTesting` library instead, which also fails the test when a provider that
  /// tests must replace is built (see ``BuildContext/requireReplacementInTests()``).
  ///
  /// - Parameters:
  ///   - overrides: Providers to build differently in the operation's pod, after this pod's
  ///     own overrides. An isolation inside another of the same pod starts from the outer
  ///     one's pod.
  ///   - clock: What retry back-offs sleep on in the operation's pod; this pod's clock if nil.
  ///   - observer: Told about what the operation's pod does; this pod's observer is not.
  ///   - reportIssue: Called with a message when the operation's pod builds a provider
  ///     that requires replacement in tests with its own builder, or when the operation
  ///     resolves through a child pod made from this pod before the operation began; nil
  ///     keeps the reporter of an outer isolation, if any, else ignores both. A test framework
  ///     records a failure here. It is called on the operation's task or one it started, so
  ///     that the framework fails the right test: a build on a detached task or a thread
  ///     reports when the operation returns (or at once, if it returned before).
  ///   - operation: The code to run, given the operation's pod.
  public func withIsolation<Result>(
    overrides: [ProviderOverride] = [],
    clock: (any Clock<Duration>)? = nil,
    observer: (any PodObserver)? = nil,
    reportIssue: (@Sendable (String) -> Void)? = nil,
    _ operation: (Pod) throws -> Result
  ) rethrows -> Result {
    let isolation = makeIsolation(
      overrides: overrides, clock: clock, observer: observer, reportIssue: reportIssue)
    defer { isolation.reports?.end() }
    return try PodIsolation.$current.withValue(isolation) { try operation(isolation.isolated) }
  }

  /// Runs the async `operation` with this pod isolated; see
  /// ``withIsolation(overrides:clock:observer:reportIssue:_:)``.
  public func withIsolation<Result>(
    overrides: [ProviderOverride] = [],
    clock: (any Clock<Duration>)? = nil,
    observer: (any PodObserver)? = nil,
    reportIssue: (@Sendable (String) -> Void)? = nil,
    isolation callerIsolation: isolated (any Actor)? = #isolation,
    _ operation: (Pod) async throws -> Result
  ) async rethrows -> Result {
    let isolation = makeIsolation(
      overrides: overrides, clock: clock, observer: observer, reportIssue: reportIssue)
    defer { isolation.reports?.end() }
    return try await PodIsolation.$current.withValue(
      isolation, operation: { try await operation(isolation.isolated) },
      isolation: callerIsolation)
  }

  /// Whether an isolation of any pod runs anywhere in the process: one load of a counter.
  @inline(__always)
  static var isolationsRunning: Bool { pp_isolations_running() }

  /// The pod that everything done through this pod goes to on this task right now: inside an
  /// isolation of this pod, the isolation's pod; else nil. While no isolation runs anywhere in
  /// the process, one load of a counter.
  @inline(__always)
  var isolatedPod: Pod? {
    guard Pod.isolationsRunning else { return nil }
    return isolatedPodInRunningIsolation()
  }

  /// The isolation's pod inside an isolation of this pod, else this pod. Out of line: a child
  /// pod made per request pays only the check of `isolationsRunning`.
  @inline(never)
  func isolatedPodOrSelf() -> Pod {
    isolatedPodInRunningIsolation() ?? self
  }

  /// `resolve(_:)` of a plain provider in this pod, an isolation's, without looking for an
  /// isolation again: a test's resolves through the pod it isolates look it up once.
  @inline(never)
  func resolveInThisPod<Value>(_ provider: Provider<Value>) -> Value {
    if let held = engine.cachedValue(of: provider.info) { return held.value(as: Value.self) }
    return engine.resolve(provider, from: nil, callerUnknown: true)
  }

  @inline(never)
  private func isolatedPodInRunningIsolation() -> Pod? {
    guard let isolation = PodIsolation.current else { return nil }
    if let isolated = isolation.isolatedPod(for: self) { return isolated }
    if parent != nil { isolation.reportIfMadeBeforeAnIsolation(child: self) }
    return nil
  }

  /// A new isolation of this pod, inside the ones this task runs in.
  private func makeIsolation(
    overrides: [ProviderOverride], clock: (any Clock<Duration>)?, observer: (any PodObserver)?,
    reportIssue: (@Sendable (String) -> Void)?
  ) -> PodIsolation {
    let outer = PodIsolation.current
    let source = outer?.isolatedPod(for: self) ?? self
    precondition(
      source.parent == nil,
      """
      ProviderPod: only a pod without a parent can be isolated, and this one is a child pod. \
      Isolate the pod it was made from (the app's pod): child pods made from that one inside \
      the isolation are made from the isolation's pod.
      """)
    let engine = source.engine
    let record = engine.pod
    let inherited = engine.state.withLock { _ in Array(record.overrides.values) }
    let reports = reportIssue.map(IsolationReports.init)
    let settings = PodSettings(
      clock: clock ?? engine.settings.clock,
      reportIssue: reports.map { reports in reports.report }
        ?? engine.settings.reportIssue)
    let pod = Pod(
      overrides: inherited + overrides.map(\.record), observer: observer, settings: settings)
    return PodIsolation(original: self, isolated: pod, outer: outer, reports: reports)
  }
}

/// One pod isolated on a task, and the isolations it runs inside: a short list, innermost
/// first, bound to the task that runs the isolation and inherited by the tasks it starts.
final class PodIsolation: Sendable {
  @TaskLocal static var current: PodIsolation?

  /// The pod that is isolated; held, so that its identity is not reused while it is.
  let original: Pod
  /// The isolation's own pod.
  let isolated: Pod
  let outer: PodIsolation?
  /// Where this isolation's own reporter is called, if it was given one.
  let reports: IsolationReports?
  /// The child pods made before this isolation that it has reported.
  private let childrenReported = Locked<Set<ObjectIdentifier>>([])

  /// Counted among the running isolations from now until no task holds it any more: a task
  /// the operation started and did not wait for goes on seeing the isolation's pod after the
  /// operation returned.
  init(original: Pod, isolated: Pod, outer: PodIsolation?, reports: IsolationReports?) {
    self.original = original
    self.isolated = isolated
    self.outer = outer
    self.reports = reports
    pp_isolations_begin()
  }

  deinit {
    pp_isolations_end()
  }

  /// The pod that `pod` stands for here, if an isolation of it runs on this task.
  func isolatedPod(for pod: Pod) -> Pod? {
    var next: PodIsolation? = self
    while let isolation = next {
      if isolation.original === pod { return isolation.isolated }
      next = isolation.outer
    }
    return nil
  }

  /// A child pod made before an isolation of one of its ancestors shares that ancestor's
  /// instances, not the isolation's pod's: used inside the isolation, it reads and builds in
  /// the pod every other test sees, and the isolation's overrides do not reach it. It cannot
  /// be moved to the isolation's pod, so the test is told, once for each such child.
  ///
  /// Only a pod without a parent can be isolated, so the one ancestor to look for is the root
  /// of the child's tree, found at once: a walk up the parents made a chain of pods made
  /// inside an isolation, each used once, quadratic.
  func reportIfMadeBeforeAnIsolation(child: Pod) {
    guard let root = child.engine.withTreeRoot({ $0.owner }), root !== child,
      let isolated = isolatedPod(for: root),
      let report = isolated.engine.settings.reportIssue
    else { return }
    let id = ObjectIdentifier(child)
    let first = childrenReported.withLock { reported in
      reported.insert(id).inserted
    }
    guard first else { return }
    report(
      """
      ProviderPod: this test resolves through a child pod made before the test isolated \
      the pod it was made from, so the child still shares that pod's instances: the \
      test's overrides do not reach what it shares, and what it builds there stays for \
      other tests. Make the child pod inside the test (a child made there from the \
      isolated pod is a child of the test's pod), or make it lazily rather than at launch.
      """)
  }

  /// Whether this task runs inside an isolation whose reporter is `reports`.
  static func isRunning(_ reports: IsolationReports) -> Bool {
    var next = current
    while let isolation = next {
      if isolation.reports === reports { return true }
      next = isolation.outer
    }
    return false
  }
}
