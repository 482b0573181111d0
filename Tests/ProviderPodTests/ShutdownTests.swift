import ProviderPod
import Testing

@Suite("Shutdown")
struct ShutdownTests {
  @Test("shutdown awaits async cleanups, dependents first, across child pods")
  func dependentsFirstAcrossChildPods() async throws {
    let log = CloseLog()
    let database = Provider(
      name: "database", onDiscard: { (db: Resource) in await db.close(log: log) }
    ) { _ in
      log.built("database")
    }
    let cache = Provider(
      name: "cache", onDiscard: { (cache: Resource) in await cache.close(log: log) }
    ) { pod in
      log.built("cache", from: [pod.resolve(database)])
    }
    let session = Provider(
      scope: FlowScope(), name: "session", onDiscard: { (s: Resource) in await s.close(log: log) }
    ) { pod in
      log.built("session", from: [pod.resolve(cache), pod.resolve(database)])
    }
    let request = Provider(
      scope: StepScope(), name: "request", onDiscard: { (r: Resource) in await r.close(log: log) }
    ) { pod in
      log.built("request", from: [pod.resolve(session)])
    }
    let app = Pod()
    let flow = Pod(parent: app, scopes: [FlowScope()])
    let step = Pod(parent: flow, scopes: [StepScope()])
    _ = step.resolve(request)
    try await app.shutdown()
    #expect(log.order == ["request", "session", "cache", "database"])
    #expect(log.tooEarly.isEmpty)
  }
}

@Suite("Shutdown: concurrency, failures and repeats")
struct ShutdownOrderTests {
  @Test("cleanups with no order between them run at the same time")
  func independentCleanupsOverlap() async throws {
    // Each cleanup waits for the other to have started: run one after the other, they would
    // wait forever, and the timeout (a watchdog) would report both unfinished.
    let leftStarted = OneShot()
    let rightStarted = OneShot()
    let left = Provider(
      name: "left",
      onDiscard: { (_: Resource) in
        leftStarted.set()
        await rightStarted.wait()
      }
    ) { _ in Resource("left") }
    let right = Provider(
      name: "right",
      onDiscard: { (_: Resource) in
        rightStarted.set()
        await leftStarted.wait()
      }
    ) { _ in Resource("right") }
    let pod = Pod()
    _ = pod.resolve(left)
    _ = pod.resolve(right)
    do {
      try await pod.shutdown(timeout: .seconds(hangWatchdogSeconds))
    } catch {
      Issue.record("the cleanups did not overlap: \(error)")
      leftStarted.set()
      rightStarted.set()
    }
  }

  @Test("a cleanup that throws does not stop the others; the errors come together")
  func throwingCleanupDoesNotStopOthers() async {
    struct CloseFailed: Error, CustomStringConvertible {
      let name: String
      var description: String { "\(name) failed to close" }
    }
    let log = CloseLog()
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in await db.close(log: log) }
    ) { _ in Resource("database") }
    let flaky = Provider(
      name: "flaky",
      onDiscard: { (_: Resource) in throw CloseFailed(name: "flaky") }
    ) { pod in Resource("flaky", builtFrom: [pod.resolve(database)]) }
    let broken = ProviderFamily(
      name: "broken",
      onDiscard: { (_: Resource) in throw CloseFailed(name: "broken") }
    ) { (_, id: Int) in Resource("broken \(id)") }
    let pod = Pod()
    _ = pod.resolve(flaky)
    _ = pod.resolve(broken(1))
    do {
      try await pod.shutdown()
      Issue.record("the shutdown did not report the failures")
    } catch {
      #expect(Set(error.failures.map(\.provider)) == ["flaky", "broken(1)"])
      #expect(error.unfinished.isEmpty)
      #expect(error.description.contains("flaky: onDiscard threw flaky failed to close"))
      #expect(error.description.contains("broken(1): onDiscard threw broken failed to close"))
    }
    // What the failed cleanup's instance was built from is still cleaned up, after it.
    #expect(log.order == ["database"])
  }

  @Test("a second shutdown, of the pod or of a child, waits for the first and throws nothing")
  func secondShutdownIsHarmless() async throws {
    let release = OneShot()
    let started = OneShot()
    let closes = Counter()
    let slow = Provider(
      name: "slow",
      onDiscard: { (_: Resource) in
        started.set()
        await release.wait()
        closes.next()
      }
    ) { _ in Resource("slow") }
    let pod = Pod()
    let child = Pod(parent: pod, scopes: [FlowScope()])
    _ = child.resolve(slow)
    let first = Task { try await pod.shutdown() }
    await started.wait()
    let second = Task { try await pod.shutdown() }
    let ofChild = Task { try await child.shutdown() }
    release.set()
    try await first.value
    try await second.value
    try await ofChild.value
    try await pod.shutdown()
    #expect(closes.value == 1)
  }

  @Test("synchronous hooks run once, in the same order, and not again when the pod goes")
  func syncHooksRunOnceInOrder() async throws {
    let log = CloseLog()
    let counts = Counter()
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in
        counts.next()
        db.closeNow(log: log)
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
    var pod: Pod? = Pod()
    _ = pod?.resolve(session)
    try await pod?.shutdown()
    pod = nil
    #expect(log.order == ["session", "database"])
    #expect(log.tooEarly.isEmpty)
    #expect(counts.value == 1)
  }

  @Test("observers see each instance discarded by the shutdown")
  func observersSeeDisposals() async throws {
    let recorder = EventRecorder()
    let database = Provider(name: "database", onDiscard: { (_: Resource) in }) { _ in
      Resource("database")
    }
    let session = Provider(name: "session") { pod in
      Resource("session", builtFrom: [pod.resolve(database)])
    }
    let pod = Pod(observer: recorder)
    _ = pod.resolve(session)
    _ = recorder.take()
    try await pod.shutdown()
    let discarded = recorder.take().compactMap { event -> String? in
      guard case .discarded(let provider, _, let reason) = event else { return nil }
      #expect(reason == .podShutDown)
      return provider
    }
    #expect(Set(discarded) == ["database", "session"])
  }

  @Test("every provider kind's async hook is awaited")
  func everyKindsAsyncHook() async throws {
    let closed = Shared([String]())
    let plain = Provider(onDiscard: { (r: Resource) in closed.withLock { $0.append(r.name) } }) {
      _ in Resource("plain")
    }
    let family = ProviderFamily(
      onDiscard: { (r: Resource) in closed.withLock { $0.append(r.name) } }
    ) { (_, id: Int) in Resource("family \(id)") }
    let throwing = ThrowingProvider(
      onDiscard: { (r: Resource) in closed.withLock { $0.append(r.name) } }
    ) { _ in Resource("throwing") }
    let async = AsyncProvider(
      onDiscard: { (r: Resource) in closed.withLock { $0.append(r.name) } }
    ) { _ in Resource("async") }
    let asyncFamily = AsyncProviderFamily(
      onDiscard: { (r: Resource) in closed.withLock { $0.append(r.name) } }
    ) { (_, id: Int) in Resource("async family \(id)") }
    let pod = Pod()
    _ = pod.resolve(plain)
    _ = pod.resolve(family(1))
    _ = try pod.resolve(throwing)
    _ = try await pod.resolve(async)
    _ = try await pod.resolve(asyncFamily(2))
    try await pod.shutdown()
    #expect(
      Set(closed.withLock { $0 })
        == ["plain", "family 1", "throwing", "async", "async family 2"])
  }
}

@Suite("Shutdown: main-actor hooks")
@MainActor
struct ShutdownMainActorTests {
  @Test("shutdown awaits a main-actor hook on the main actor, before what it was built from")
  func mainActorHookAwaitedInOrder() async throws {
    let order = Shared([String]())
    let service = Provider(
      name: "service",
      onDiscard: { (_: Resource) in
        // At once: a main-actor hook only scheduled, not awaited, would not have run yet.
        order.withLock { $0.append("service") }
      }
    ) { _ in Resource("service") }
    let screen = MainActorProvider(
      name: "screen",
      onDiscard: { (_: ScreenModel) in
        MainActor.assertIsolated()
        order.withLock { $0.append("screen") }
      }
    ) { pod in
      ScreenModel(serial: 1, instance: Instance(pod.resolve(service).name, serial: 1))
    }
    let pod = Pod()
    _ = pod.resolve(screen)
    try await pod.shutdown()
    #expect(order.withLock { $0 } == ["screen", "service"])
  }
}
