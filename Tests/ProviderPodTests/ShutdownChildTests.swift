import Testing

@testable import ProviderPod

@Suite("Shutdown of a child pod")
struct ShutdownChildTests {
  @Test("a child's shutdown takes its own instances only; the parent goes on, its books in order")
  func childShutdownLeavesParent() async throws {
    let closed = Shared([String]())
    let database = Provider(
      name: "database",
      onDiscard: { (db: Resource) in closed.withLock { $0.append(db.name) } }
    ) { _ in Resource("database") }
    let session = Provider(
      scope: FlowScope(), name: "session",
      onDiscard: { (session: Resource) in closed.withLock { $0.append(session.name) } }
    ) { pod in Resource("session", builtFrom: [pod.resolve(database)]) }
    let pod = Pod()
    let request = Pod(parent: pod, scopes: [FlowScope()])
    let shared = request.resolve(database)
    _ = request.resolve(session)
    let other = Pod(parent: pod, scopes: [FlowScope()])
    let otherSession = other.resolve(session)
    try await request.shutdown()
    #expect(closed.withLock { $0 } == ["session"])
    #expect(pod.resolve(database) === shared)
    #expect(other.resolve(session) === otherSession)
    #expect(pod.invariantViolations == [])
    // The other child's session goes with the database; a clear starts async hooks in a task.
    pod.clearCachedInstance(of: database)
    #expect(pod.invariantViolations == [])
    #expect(await eventually { closed.withLock { $0 }.count == 3 })
    #expect(closed.withLock { $0 } == ["session", "session", "database"])
  }

  @Test("after the root's shutdown, nothing of the tree is published or cached")
  func rootShutdownEmptiesTree() async throws {
    let database = Provider(name: "database") { _ in Resource("database") }
    let session = Provider(scope: FlowScope(), name: "session") { pod in
      Resource("session", builtFrom: [pod.resolve(database)])
    }
    let pod = Pod()
    let request = Pod(parent: pod, scopes: [FlowScope()])
    // Twice each, so the second read publishes the instance for lock-free reads.
    for _ in 0..<2 {
      _ = request.resolve(session)
      _ = pod.resolve(database)
    }
    try await pod.shutdown()
    #expect(pod.slotCount == 0 || pod.dependencyGraph().nodes.isEmpty)
    #expect(request.dependencyGraph().nodes.isEmpty)
  }
}
