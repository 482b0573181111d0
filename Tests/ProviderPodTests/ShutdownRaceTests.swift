import Foundation
import ProviderPod
import Testing

@Suite("Shutdown: racing other shutdowns")
struct ShutdownRaceTests {
  /// Reports the moment a shutdown has discarded the database, before any hook of the
  /// shutdown runs.
  final class DatabaseShutdownBegan: PodObserver {
    let began = DispatchSemaphore(value: 0)
    func pod(_ pod: Pod, didReport event: PodEvent) {
      if case .discarded("database", _, .podShutDown) = event { began.signal() }
    }
  }

  @Test(
    "the app's shutdown awaits a request pod's synchronous hooks still running on another thread")
  func parentAwaitsChildsSynchronousHooks() async throws {
    let observer = DatabaseShutdownBegan()
    let log = CloseLog()
    let sessionCleanupStarted = OneShot()
    let databaseCleanupStarted = DispatchSemaphore(value: 0)
    let database = databaseSignallingItsCleanup(log: log, cleanupStarted: databaseCleanupStarted)
    let session = Provider(
      scope: FlowScope(), name: "session",
      onDiscard: { (session: Resource) in
        sessionCleanupStarted.set()
        // The app's pod begins its shutdown while this hook runs; its database must not
        // close until the hook has ended. Give a wrongly started close the time to show.
        _ = observer.began.wait(timeout: .now() + .seconds(hangWatchdogSeconds))
        if databaseCleanupStarted.wait(timeout: .now() + .milliseconds(300)) == .success {
          databaseCleanupStarted.signal()
        }
        session.closeNow(log: log)
      }
    ) { pod in
      log.built("session", from: [pod.resolve(database)])
    }
    let pod = Pod(observer: observer)
    let request = Pod(parent: pod, scopes: [FlowScope()])
    _ = request.resolve(session)
    // A request pod with synchronous hooks only runs them on the thread that shuts it down.
    let requestShutdown = Task.detached { try await request.shutdown() }
    await sessionCleanupStarted.wait()
    try await pod.shutdown()
    try await requestShutdown.value
    #expect(log.order == ["session", "database"])
    #expect(log.tooEarly.isEmpty)
  }

  @Test("an app shutdown that begins right after a clear waits for the async hooks it started")
  func shutdownRightAfterClearWaitsForItsHooks() async throws {
    // The app's observer hears of the clear's discard after the clear's locked step and before
    // its hooks start: there it starts the app's shutdown and lets the clear go on only once
    // the shutdown has taken the database out.
    final class ShutDownOnClear: PodObserver, @unchecked Sendable {
      let pod = Shared<Pod?>(nil)
      let shutdownTook = DispatchSemaphore(value: 0)
      let shutdown = Shared<Task<Void, any Error>?>(nil)
      func pod(_ pod: Pod, didReport event: PodEvent) {
        switch event {
        case .discarded("session", _, .scopeCleared):
          guard let app = self.pod.withLock({ $0 }) else { return }
          shutdown.withLock { $0 = Task.detached { try await app.shutdown() } }
          _ = waitWithWatchdog(shutdownTook)
        case .discarded("database", _, .podShutDown):
          shutdownTook.signal()
        default: break
        }
      }
    }
    let log = CloseLog()
    let observer = ShutDownOnClear()
    let database = Provider(
      name: "database", onDiscard: { (database: Resource) in await database.close(log: log) }
    ) { _ in log.built("database") }
    let session = Provider(
      scope: UnrelatedScope(), name: "session",
      onDiscard: { (session: Resource) in await session.close(log: log) }
    ) { pod in log.built("session", from: [pod.resolve(database)]) }
    let app = Pod(observer: observer)
    observer.pod.withLock { $0 = app }
    _ = app.resolve(session)
    // On a thread of its own, awaited without holding one of the pool's: the observer holds
    // it while the shutdown runs in the pool.
    let cleared = OneShot()
    _ = startThread {
      app.clearCachedInstances(forScope: UnrelatedScope())
      cleared.set()
    }
    await withWatchdog("the clear") { await cleared.wait() }
    try await observer.shutdown.withLock({ $0 })?.value
    observer.pod.withLock { $0 = nil }
    #expect(log.order == ["session", "database"])
    #expect(log.tooEarly.isEmpty)
  }
}

@Suite("Shutdown: called from inside a cleanup")
struct ShutdownFromCleanupTests {
  @Test("a cleanup that shuts its own pod down again returns rather than waiting for itself")
  func cleanupShutsItsOwnPodDown() async {
    let pods = Shared([Pod]())
    let closed = OneShot()
    let connection = Provider(
      name: "connection",
      onDiscard: { (_: Resource) in
        try await pods.withLock { $0 }.first?.shutdown()
        closed.set()
      }
    ) { _ in Resource("connection") }
    let pod = Pod()
    pods.withLock { $0 = [pod] }
    _ = pod.resolve(connection)
    await withWatchdog("a shutdown called from its own cleanup") {
      try? await pod.shutdown()
    }
    #expect(closed.isSet)
  }

  @Test("a request pod's cleanup that shuts the app's pod down does not wait for itself")
  func childCleanupShutsParentDown() async {
    let pods = Shared([Pod]())
    let log = CloseLog()
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in await db.close(log: log) }
    ) { _ in Resource("database") }
    let session = Provider(
      scope: FlowScope(), name: "session",
      onDiscard: { (session: Resource) in
        await session.close(log: log)
        try await pods.withLock { $0 }.first?.shutdown()
      }
    ) { pod in Resource("session", builtFrom: [pod.resolve(database)]) }
    let pod = Pod()
    pods.withLock { $0 = [pod] }
    let request = Pod(parent: pod, scopes: [FlowScope()])
    _ = request.resolve(session)
    await withWatchdog("an app's shutdown called from a request pod's cleanup") {
      try? await request.shutdown()
    }
    #expect(log.order == ["session", "database"])
  }
}
