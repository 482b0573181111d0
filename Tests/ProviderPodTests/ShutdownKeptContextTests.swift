import Testing

@testable import ProviderPod

// An instance that keeps its build's context keeps its pod's tables alive through it. A pod
// that was shut down keeps what it knows of its shutdown, for a second call to wait on; that
// must not include the instances it cleaned up, or each of them keeps itself alive.

private struct KeptContextRequestScope: ProviderScope {}

@Suite("Pods shut down free the instances that kept their context")
struct ShutdownKeptContextTests {
  @Test("a request pod shut down and let go of frees its instance that kept its context")
  func requestPodFreesKeeper() async throws {
    let keeper = Provider<ContextKeeper>(
      scope: KeptContextRequestScope(), name: "keeper", onDiscard: { _ in }
    ) { context in ContextKeeper(context) }
    let app = Pod()
    weak var weakKeeper: ContextKeeper?
    do {
      let request = Pod(parent: app, scopes: [KeptContextRequestScope()])
      weakKeeper = request.resolve(keeper)
      try await request.shutdown()
    }
    #expect(weakKeeper == nil, "the shut-down request pod kept its instance alive")
    #expect(app.invariantViolations == [])
  }

  @Test("an app's pod shut down and let go of frees its instance that kept its context")
  func rootPodFreesKeeper() async throws {
    let keeper = Provider<ContextKeeper>(name: "keeper", onDiscard: { _ in }) { context in
      ContextKeeper(context)
    }
    weak var weakKeeper: ContextKeeper?
    do {
      let pod = Pod()
      weakKeeper = pod.resolve(keeper)
      try await pod.shutdown()
    }
    #expect(weakKeeper == nil, "the shut-down pod kept its instance alive")
  }

  @Test("a pod whose async cleanup ran under a timeout frees its instance that kept its context")
  func asyncCleanupFreesKeeper() async throws {
    let cleaned = Counter()
    let keeper = Provider<ContextKeeper>(
      scope: KeptContextRequestScope(), name: "keeper",
      onDiscard: { (_: ContextKeeper) async in cleaned.next() }
    ) { context in ContextKeeper(context) }
    let app = Pod()
    weak var weakKeeper: ContextKeeper?
    do {
      let request = Pod(parent: app, scopes: [KeptContextRequestScope()])
      weakKeeper = request.resolve(keeper)
      try await request.shutdown(timeout: .seconds(hangWatchdogSeconds))
    }
    #expect(cleaned.value == 1)
    // The task that ran the cleanup lets go of it once it has ended, which may be just after
    // the shutdown returned: waited for, with a hang watchdog only.
    let deadline = ContinuousClock.now + .seconds(hangWatchdogSeconds)
    while weakKeeper != nil, ContinuousClock.now < deadline { await Task.yield() }
    #expect(weakKeeper == nil, "the shut-down request pod kept its instance alive")
  }

  @Test("a shutdown still names the cleanup that failed, once it no longer keeps the instance")
  func shutdownNamesFailedCleanup() async {
    struct CleanupFailed: Error {}
    let keeper = Provider<ContextKeeper>(
      scope: KeptContextRequestScope(), name: "keeper",
      onDiscard: { (_: ContextKeeper) async throws in throw CleanupFailed() }
    ) { context in ContextKeeper(context) }
    let app = Pod()
    let request = Pod(parent: app, scopes: [KeptContextRequestScope()])
    _ = request.resolve(keeper)
    do {
      try await request.shutdown()
      Issue.record("the failed cleanup was not reported")
    } catch {
      #expect(error.failures.map(\.provider) == ["keeper"])
      #expect(error.failures.first?.error is CleanupFailed)
      #expect(error.unfinished == [])
    }
  }
}
