import Dispatch
import Testing

@testable import ProviderPod

// A server's request pod ends with `await shutdown()`, so that its connection is back in the
// pool before the response goes out. Those shutdowns run beside each other's work, and beside
// other requests' builds: each must still clean up its own instances in order, report them,
// and be awaited by the app's own shutdown.

/// A request's own name, given to its pod as an override.
private let requestName = Provider<String>(scope: StepScope(), name: "requestName") { _ in "" }

@Suite("Request pods shut down beside each other")
struct RequestPodShutdownTests {
  @Test("a request pod's shutdown cleans up in order and reports it, waiting for no sibling")
  func shutdownInOrderBesideSiblings() async throws {
    let log = CloseLog()
    let database = Provider(name: "database") { _ in log.built("database") }
    let connection = Provider(
      scope: StepScope(), name: "connection",
      onDiscard: { (connection: Resource) in await connection.close(log: log) }
    ) { pod in log.built("connection", from: [pod.resolve(database)]) }
    let handler = Provider(
      scope: StepScope(), name: "handler",
      onDiscard: { (handler: Resource) in handler.closeNow(log: log) }
    ) { pod in log.built("handler", from: [pod.resolve(connection), pod.resolve(database)]) }
    let app = Pod()
    _ = app.resolve(database)
    // The first request after the app cached the database reads it through the app's lock,
    // once: every request after it reads it without.
    let first = Provider(scope: StepScope(), name: "first") { pod in
      pod.resolve(database) === pod.resolve(database)
    }
    _ = Pod(parent: app, scopes: [StepScope()]).resolve(first)
    let before = app.exclusiveSectionsEntered
    let events = EventRecorder()
    do {
      let request = Pod(parent: app, scopes: [StepScope()], observer: events)
      _ = request.resolve(handler)
      _ = events.take()
      try await request.shutdown()
      #expect(log.order == ["handler", "connection"])
      #expect(log.tooEarly.isEmpty)
      #expect(
        Set(events.take().map(String.init(describing:))) == [
          "\(PodEvent.discarded(provider: "handler", scope: "StepScope", reason: .podShutDown))",
          "\(PodEvent.discarded(provider: "connection", scope: "StepScope", reason: .podShutDown))",
        ])
    }
    // Its build, its reads of the app's database, its shutdown and its release.
    #expect(app.exclusiveSectionsEntered == before)
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
    // The app's database was not the request's to close.
    #expect(log.order == ["handler", "connection"])
  }

  @Test("the app's shutdown awaits a request pod's cleanups that its own shutdown started")
  func appShutdownAwaitsRequestCleanups() async throws {
    let log = CloseLog()
    let appShutdownBegan = ShutdownBegan()
    let connectionCleanupStarted = OneShot()
    let databaseCleanupStarted = DispatchSemaphore(value: 0)
    let database = databaseSignallingItsCleanup(log: log, cleanupStarted: databaseCleanupStarted)
    // The app's pod begins its shutdown while this hook runs; its database must not close
    // until the hook has ended.
    let connection = Provider(
      scope: StepScope(), name: "connection",
      onDiscard: hookWatchingForAnEarlyClose(
        log: log, started: connectionCleanupStarted, shutdownBegan: appShutdownBegan.began,
        builtFromCleanupStarted: databaseCleanupStarted)
    ) { pod in log.built("connection", from: [pod.resolve(database)]) }
    let app = Pod(observer: appShutdownBegan)
    _ = app.resolve(database)
    let request = Pod(parent: app, scopes: [StepScope()])
    _ = request.resolve(connection)
    let before = app.exclusiveSectionsEntered
    let requestShutdown = Task.detached { try await request.shutdown() }
    await withWatchdog("the request's cleanup to start") { await connectionCleanupStarted.wait() }
    #expect(app.exclusiveSectionsEntered == before)
    try await app.shutdown()
    try await requestShutdown.value
    #expect(log.order == ["connection", "database"])
    #expect(log.tooEarly.isEmpty)
  }

  @Test("a request's shutdown does not wait for another request's cleanup still running")
  func shutdownDoesNotWaitForSiblings() async throws {
    let slowCleanupStarted = OneShot()
    let finishSlowCleanup = OneShot()
    let closed = Shared([String]())
    let connection = Provider(
      scope: StepScope(), name: "connection",
      onDiscard: { (connection: Resource) in
        if connection.name == "slow" {
          slowCleanupStarted.set()
          await finishSlowCleanup.wait()
        }
        closed.withLock { $0.append(connection.name) }
      }
    ) { pod in Resource(pod.resolve(requestName)) }
    let app = Pod()
    let slow = Pod(
      parent: app, scopes: [StepScope()], overrides: [requestName.override(withValue: "slow")])
    let quick = Pod(
      parent: app, scopes: [StepScope()], overrides: [requestName.override(withValue: "quick")])
    _ = slow.resolve(connection)
    _ = quick.resolve(connection)
    let slowShutdown = Task.detached { try await slow.shutdown() }
    await withWatchdog("the slow request's cleanup to start") { await slowCleanupStarted.wait() }
    // The other request ends while the first one's hook still runs: it closes only its own.
    await withWatchdog("the quick request's shutdown") { try? await quick.shutdown() }
    #expect(closed.withLock { $0 } == ["quick"])
    finishSlowCleanup.set()
    try await slowShutdown.value
    #expect(closed.withLock { $0 } == ["quick", "slow"])
    // The app's shutdown still waits for every request's cleanup.
    try await app.shutdown()
  }

  @Test("a request's shutdown waits for the cleanups of its own instances a clear started")
  func shutdownWaitsForOwnClear() async throws {
    let log = CloseLog()
    let sessionCleanupStarted = OneShot()
    let shutdownReturned = DispatchSemaphore(value: 0)
    let session = Provider(
      scope: LeafScope(), name: "session",
      onDiscard: { (session: Resource) in
        sessionCleanupStarted.set()
        // A shutdown that did not wait for this hook would return meanwhile. Give it the
        // time to show.
        if shutdownReturned.wait(timeout: .now() + .milliseconds(300)) == .success {
          log.record(Resource("the shutdown returned before the clear's hook ended"))
        }
        await session.close(log: log)
      }
    ) { _ in log.built("session") }
    let app = Pod()
    let request = Pod(parent: app, scopes: [StepScope()])
    _ = request.resolve(session)
    request.clearCachedInstances(forScope: LeafScope())
    await withWatchdog("the clear's hook to start") { await sessionCleanupStarted.wait() }
    try await request.shutdown()
    shutdownReturned.signal()
    #expect(log.order == ["session"])
  }

  @Test(
    "a pod's shutdown waits for the cleanups of a child it had, let go of or shut down",
    arguments: [false, true])
  func shutdownWaitsForFormerChildren(childShutDown: Bool) async throws {
    let log = CloseLog()
    let stepCleanupStarted = OneShot()
    let window = Provider(
      scope: AppWindowScope(), name: "window",
      onDiscard: { (window: Resource) in await window.close(log: log) }
    ) { _ in log.built("window") }
    let step = Provider(
      scope: WindowStepScope(), name: "step",
      onDiscard: { (step: Resource) in
        stepCleanupStarted.set()
        // The window must not close while this hook runs. Give a wrongly started close the
        // time to show, without holding a thread of the pool the window's cleanup runs on.
        try? await Task.sleep(for: .milliseconds(300))
        await step.close(log: log)
      }
    ) { pod in log.built("step", from: [pod.resolve(window)]) }
    let app = Pod()
    let windowPod = Pod(parent: app, scopes: [AppWindowScope()])
    var stepShutdown: Task<Void, any Error>?
    do {
      let stepPod = Pod(parent: windowPod, scopes: [WindowStepScope()])
      _ = stepPod.resolve(step)
      if childShutDown { stepShutdown = Task.detached { try await stepPod.shutdown() } }
    }
    await withWatchdog("the step's cleanup to start") { await stepCleanupStarted.wait() }
    try await windowPod.shutdown()
    try await stepShutdown?.value
    #expect(log.order == ["step", "window"])
    #expect(log.tooEarly.isEmpty)
  }

  @Test("requests on many tasks shut down beside each other, each cleaning up its own")
  func manyRequestsShutDown() async throws {
    let log = DisposalLog()
    let counter = Counter()
    let database = instanceProvider("database")
    let connection = Provider(
      scope: StepScope(), name: "connection",
      onDiscard: { (connection: Instance) async in log.record(connection) }
    ) { pod in
      Instance("connection", serial: counter.next(), dependencies: [pod.resolve(database)])
    }
    let handler = Provider(
      scope: StepScope(), name: "handler", onDiscard: log.record
    ) { pod in
      Instance("handler", serial: 0, dependencies: [pod.resolve(connection)])
    }
    let app = Pod()
    let appDatabase = app.resolve(database)
    let mismatches = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask {
          for _ in 0..<100 {
            let request = Pod(parent: app, scopes: [StepScope()])
            let built = request.resolve(handler)
            if built.dependencies[0].dependencies[0] !== appDatabase { mismatches.next() }
            try await request.shutdown()
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(mismatches.value == 0)
    let disposed = log.take()
    // Each request's handler, then its own connection: 800 of each, every connection once.
    #expect(disposed.filter { $0 == "handler#0" }.count == 800)
    #expect(Set(disposed.filter { $0.hasPrefix("connection#") }).count == 800)
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
    // The app's database is still there, and still the app's.
    #expect(app.resolve(database) === appDatabase)
  }

  @Test("a request pod used after its own shutdown stops the program, naming the provider")
  func useAfterOwnShutdownStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let session = Provider(scope: StepScope(), name: "session") { _ in Resource("session") }
      let app = Pod()
      let request = Pod(parent: app, scopes: [StepScope()])
      _ = request.resolve(session)
      try? await request.shutdown()
      _ = request.resolve(session)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("ProviderPod: session was resolved through a pod that was shut down"))
  }

  @Test("a request pod shut down before its first use stops the program when used")
  func useAfterShutdownBeforeFirstUseStops() async {
    await #expect(processExitsWith: .failure) {
      let session = Provider(scope: StepScope(), name: "session") { _ in Resource("session") }
      let app = Pod()
      let request = Pod(parent: app, scopes: [StepScope()])
      try? await request.shutdown()
      _ = request.resolve(session)
    }
  }
}
