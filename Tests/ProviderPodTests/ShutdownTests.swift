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
      let db = Resource("database")
      log.noteBuilt(db)
      return db
    }
    let cache = Provider(
      name: "cache", onDiscard: { (cache: Resource) in await cache.close(log: log) }
    ) { pod in
      let cache = Resource("cache", builtFrom: [pod.resolve(database)])
      log.noteBuilt(cache)
      return cache
    }
    let session = Provider(
      scope: FlowScope(), name: "session", onDiscard: { (s: Resource) in await s.close(log: log) }
    ) { pod in
      let session = Resource("session", builtFrom: [pod.resolve(cache), pod.resolve(database)])
      log.noteBuilt(session)
      return session
    }
    let request = Provider(
      scope: StepScope(), name: "request", onDiscard: { (r: Resource) in await r.close(log: log) }
    ) { pod in
      let request = Resource("request", builtFrom: [pod.resolve(session)])
      log.noteBuilt(request)
      return request
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
