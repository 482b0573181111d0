import GreetingServer
import Hummingbird
import HummingbirdTesting
import ProviderPod
import Testing

/// A fake service: what a test pod gives the app instead of the live one.
private struct FakeGreetingService: GreetingService {
  let serial = -1
  func greet(_ name: String) -> String { "Hi from a fake, \(name)" }
}

// One at a time: the live tests count handlers and databases made and alive across the process.
@Suite("The greeting server", .serialized)
struct GreetingServerTests {
  @Test("a test pod's fake service reaches the handler")
  func fakeService() async throws {
    let testPod = Pod(overrides: [greetingServiceProvider.override { _ in FakeGreetingService() }])
    let app = buildApplication(app: testPod)
    try await app.test(.router) { client in
      try await client.execute(uri: "/hello?user=ada", method: .get) { response in
        #expect(response.status == .ok)
        #expect(String(buffer: response.body).hasPrefix("Hi from a fake, ada | handler "))
      }
    }
  }

  @Test("a server that shuts down gracefully lets its app's pod go, which closes the database")
  func shutdownClosesDatabase() async throws {
    let database = try await serveOneRequestThenShutDown()
    // The server's connections let go of the app's pod on their own threads, shortly after
    // the server has stopped: wait for that (a watchdog, not a speed check).
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .seconds(60))
    while !database.isClosed, clock.now < deadline { await Task.yield() }
    #expect(database.isClosed)
  }

  /// The shape of `serveUntilShutdown`, with the test client's live server in place of the
  /// signals: the app's pod lives in this function only.
  private func serveOneRequestThenShutDown() async throws -> Database {
    let appPod = Pod()
    let database = appPod.resolve(databaseProvider)
    let app = buildApplication(
      app: appPod, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    try await app.test(.live) { client in
      try await client.execute(uri: "/hello?user=ada", method: .get) { response in
        #expect(response.status == .ok)
      }
      #expect(!database.isClosed, "the database stays open while the server runs")
    }
    return database
  }

  @Test(
    "live: 1,000 requests, 8 at a time, never share a handler, share the service, and leave none alive",
    .timeLimit(.minutes(2)))
  func liveRequests() async throws {
    let appPod = Pod()
    let app = buildApplication(
      app: appPod, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    let handlersBefore = GreetingHandler.instances.madeCount
    let bodies = try await app.test(.live) { client in
      let port = try #require(client.port)
      return try await withThrowingTaskGroup(of: [String].self) { group in
        for worker in 0..<8 {
          group.addTask {
            // A connection each: the test client sends one request at a time on its own.
            let connection = TestClient(
              host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(20)))
            connection.connect()
            var bodies: [String] = []
            for index in 0..<125 {
              let response = try await connection.get("/hello?user=u\(worker)-\(index)")
              bodies.append(String(buffer: response.body ?? ByteBuffer()))
            }
            try await connection.shutdown()
            return bodies
          }
        }
        return try await group.reduce(into: []) { $0 += $1 }
      }
    }
    #expect(bodies.count == 1_000)
    let handlers = bodies.map { $0.components(separatedBy: " | ")[1] }
    let services = Set(bodies.map { $0.components(separatedBy: " | ")[2] })
    #expect(Set(handlers).count == 1_000, "each request had its own handler")
    #expect(services.count == 1, "every request shared the app's service: \(services)")
    #expect(GreetingHandler.instances.madeCount - handlersBefore == 1_000)
    // The live server has shut down gracefully by now: every request's pod has gone.
    #expect(GreetingHandler.instances.aliveCount == 0, "no request's handler outlived it")
    withExtendedLifetime(appPod) {}
  }
}
