import ProviderPod
import Testing

@Suite("Shutdown: after it, cancellation and the timeout")
struct ShutdownLimitsTests {
  @Test("a resolve through a shut-down pod, or its child, stops the program with the provider")
  func resolveAfterShutdownStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let session = Provider(name: "session") { _ in Resource("session") }
      let pod = Pod()
      let child = Pod(parent: pod, scopes: [FlowScope()])
      _ = child.resolve(session)
      try? await pod.shutdown()
      _ = child.resolve(session)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("ProviderPod: session was resolved through a pod that was shut down"))
  }

  @Test("a child made from a shut-down pod is shut down too")
  func childOfShutDownPodStops() async {
    await #expect(processExitsWith: .failure) {
      let always = Provider(scope: AlwaysCreateNewScope(), name: "always") { _ in 1 }
      let pod = Pod()
      try? await pod.shutdown()
      _ = Pod(parent: pod).resolve(always)
    }
  }

  @Test("an async resolve through a shut-down pod throws, naming the provider")
  func asyncResolveAfterShutdownThrows() async throws {
    let database = AsyncProvider(name: "database") { _ in Resource("database") }
    let pod = Pod()
    _ = try await pod.resolve(database)
    try await pod.shutdown()
    do {
      _ = try await pod.resolve(database)
      Issue.record("resolved through a shut-down pod")
    } catch let error as ResolveAfterShutdownError {
      #expect(error.provider == "database")
      #expect(error.description.contains("shut down"))
    }
  }

  @Test(
    "cancelling the shutdown cancels the running cleanups; the rest still run, in order",
    arguments: [nil, 60])
  func cancellation(timeoutSeconds: Int?) async throws {
    let log = CloseLog()
    let sessionStarted = OneShot()
    let sawCancellation = OneShot()
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in await db.close(log: log) }
    ) { _ in Resource("database") }
    let session = Provider(
      name: "session",
      onDiscard: { (session: Resource) in
        // Waits until it is cancelled: only the shutdown's cancellation ends it.
        await withTaskCancellationHandler {
          sessionStarted.set()
          await sawCancellation.wait()
        } onCancel: {
          sawCancellation.set()
        }
        await session.close(log: log)
      }
    ) { pod in Resource("session", builtFrom: [pod.resolve(database)]) }
    let pod = Pod()
    _ = pod.resolve(session)
    let shutdown = Task { try await pod.shutdown(timeout: timeoutSeconds.map { .seconds($0) }) }
    await sessionStarted.wait()
    shutdown.cancel()
    try await shutdown.value
    #expect(sawCancellation.isSet)
    #expect(log.order == ["session", "database"])
  }

  @Test("at the timeout, shutdown reports what had not finished; it still finishes, in order")
  func timeout() async {
    let log = CloseLog()
    let release = OneShot()
    let databaseClosed = OneShot()
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in
        await db.close(log: log)
        databaseClosed.set()
      }
    ) { _ in Resource("database") }
    let cancelledAtTimeout = OneShot()
    let stuck = Provider(
      name: "stuck",
      onDiscard: { (stuck: Resource) in
        // Ignores cancellation: it ends only when the test releases it.
        await release.wait()
        if Task.isCancelled { cancelledAtTimeout.set() }
        await stuck.close(log: log)
      }
    ) { pod in Resource("stuck", builtFrom: [pod.resolve(database)]) }
    let pod = Pod()
    _ = pod.resolve(stuck)
    do {
      try await pod.shutdown(timeout: .milliseconds(50))
      Issue.record("the shutdown did not time out")
    } catch {
      #expect(Set(error.unfinished) == ["stuck", "database"])
      #expect(error.failures.isEmpty)
      #expect(error.description.contains("stuck: onDiscard had not finished at the timeout"))
    }
    #expect(log.order.isEmpty)
    release.set()
    await withWatchdog("the database's cleanup after the timeout") { await databaseClosed.wait() }
    #expect(cancelledAtTimeout.isSet)
    #expect(log.order == ["stuck", "database"])
  }

  @Test("a pod released without shutdown still starts its async cleanups, in order")
  func releasedWithoutShutdown() async {
    let log = CloseLog()
    let databaseClosed = OneShot()
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in
        await db.close(log: log)
        databaseClosed.set()
      }
    ) { _ in
      log.built("database")
    }
    // Slow to close, so that the database's cleanup, started later in a task of its own,
    // would end first if it did not wait for the session's.
    let session = Provider(
      scope: FlowScope(), name: "session",
      onDiscard: { (session: Resource) in
        for _ in 0..<10_000 { await Task.yield() }
        await session.close(log: log)
      }
    ) { pod in
      log.built("session", from: [pod.resolve(database)])
    }
    var pod: Pod? = Pod()
    var child: Pod? = Pod(parent: pod!, scopes: [FlowScope()])
    _ = child?.resolve(session)
    child = nil
    pod = nil
    await withWatchdog("the cleanups of a released pod") { await databaseClosed.wait() }
    #expect(log.order == ["session", "database"])
    #expect(log.tooEarly.isEmpty)
  }

  @Test("a shutdown first awaits the cleanups a released child pod started before it")
  func shutdownAwaitsEarlierBackgroundCleanups() async throws {
    let observer = ShutdownBegan()
    let log = CloseLog()
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in db.closeNow(log: log) }
    ) { _ in
      log.built("database")
    }
    let session = Provider(
      scope: FlowScope(), name: "session",
      onDiscard: { (session: Resource) in
        // Still running when the shutdown begins, and slow to finish.
        await observer.began.wait()
        for _ in 0..<10_000 { await Task.yield() }
        await session.close(log: log)
      }
    ) { pod in
      log.built("session", from: [pod.resolve(database)])
    }
    let pod = Pod(observer: observer)
    var request: Pod? = Pod(parent: pod, scopes: [FlowScope()])
    _ = request?.resolve(session)
    request = nil
    try await pod.shutdown()
    #expect(log.order == ["session", "database"])
    #expect(log.tooEarly.isEmpty)
  }

  @Test("a shutdown of the app's pod awaits a request pod's shutdown still in progress")
  func shutdownAwaitsChildShutdownInProgress() async throws {
    let observer = ShutdownBegan()
    let log = CloseLog()
    let sessionCleanupStarted = OneShot()
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in db.closeNow(log: log) }
    ) { _ in
      log.built("database")
    }
    let session = Provider(
      scope: FlowScope(), name: "session",
      onDiscard: { (session: Resource) in
        sessionCleanupStarted.set()
        await observer.began.wait()
        for _ in 0..<10_000 { await Task.yield() }
        await session.close(log: log)
      }
    ) { pod in
      log.built("session", from: [pod.resolve(database)])
    }
    let pod = Pod(observer: observer)
    let request = Pod(parent: pod, scopes: [FlowScope()])
    _ = request.resolve(session)
    let requestShutdown = Task { try await request.shutdown() }
    await sessionCleanupStarted.wait()
    try await pod.shutdown()
    try await requestShutdown.value
    #expect(log.order == ["session", "database"])
    #expect(log.tooEarly.isEmpty)
  }

  @Test("a clear starts async cleanups in order; synchronous hooks after them wait their turn")
  func clearWithAsyncHooks() async {
    let log = CloseLog()
    let databaseClosed = OneShot()
    let database = Provider(
      scope: FlowScope(), name: "database",
      onDiscard: { (db: Resource) in
        db.closeNow(log: log)
        databaseClosed.set()
      }
    ) { _ in
      log.built("database")
    }
    let session = Provider(
      name: "session",
      onDiscard: { (session: Resource) in await session.close(log: log) }
    ) { pod in
      log.built("session", from: [pod.resolve(database)])
    }
    let pod = Pod(parent: Pod(), scopes: [FlowScope()])
    _ = pod.resolve(session)
    pod.clearCachedInstances(forScope: FlowScope())
    await withWatchdog("the cleanups of a clear") { await databaseClosed.wait() }
    #expect(log.order == ["session", "database"])
    #expect(log.tooEarly.isEmpty)
  }

  @Test("a sync hook written as a closure still runs before the clear returns")
  func syncHookStaysSync() {
    let closed = Counter()
    let database = Provider(scope: FlowScope(), onDiscard: { _ in closed.next() }) { _ in
      Resource("database")
    }
    let pod = Pod(parent: Pod(), scopes: [FlowScope()])
    _ = pod.resolve(database)
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(closed.value == 1)
  }
}
