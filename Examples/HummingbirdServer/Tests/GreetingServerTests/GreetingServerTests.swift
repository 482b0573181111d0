import GreetingServer
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
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
        #expect(String(buffer: response.body).hasPrefix("Hi from a fake, Ada | handler "))
      }
    }
  }

  @Test("a graceful shutdown awaits the database's async close, after the last request's cleanup")
  func shutdownClosesDatabase() async throws {
    let log = ResourceLog()
    let appPod = Pod(overrides: [resourceLogProvider.override(withValue: log)])
    let database = appPod.resolve(databaseProvider)
    let app = buildApplication(
      app: appPod, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    // The live test client runs the app in a `ServiceGroup`, shuts it down gracefully at the
    // end, and returns once every service of the group has returned.
    try await app.test(.live) { client in
      for user in ["ada", "grace"] {
        try await client.execute(uri: "/hello?user=\(user)", method: .get) { response in
          #expect(response.status == .ok)
        }
      }
      #expect(
        log.recorded == ["connection 1 returned", "connection 2 returned"],
        "each request's pod was shut down before its response went out")
      #expect(!database.isClosed, "the database stays open while the server runs")
    }
    #expect(database.isClosed, "the shutdown returned after the database's async close")
    #expect(log.recorded == ["connection 1 returned", "connection 2 returned", "database closed"])
    #expect(database.connectionsOutWhenClosed == 0)
  }

  @Test(
    "a request's pod logs its builds, and its disposals at the end of the request, to the request's logger"
  )
  func requestPodLogs() async throws {
    let handler = InMemoryLogHandler()
    var logger = Logger(label: "GreetingServerTests") { _ in handler }
    logger.logLevel = .debug
    let app = buildApplication(app: Pod(), logger: logger)
    try await app.test(.router) { client in
      try await client.execute(uri: "/hello?user=ada", method: .get) { response in
        #expect(response.status == .ok)
      }
    }
    let messages = handler.entries.map { "\($0.message)" }
    let built = try #require(
      handler.entries.first { "\($0.message)" == "built greetingHandler in RequestScope" },
      "\(messages)")
    let discarded = try #require(
      handler.entries.first {
        "\($0.message)".hasPrefix("discarded greetingHandler in RequestScope")
      },
      "\(messages)")
    let requestID = try #require(
      built.metadata["hb.request.id"], "logged with the request's logger")
    #expect(discarded.metadata["hb.request.id"] == requestID)
    #expect(messages.contains { $0.hasPrefix("discarded connection in RequestScope") })
  }

  @Test(
    "live: 1,000 requests, 8 at a time, never share request data or a handler, share the service, and leave none alive",
    .timeLimit(.minutes(2)))
  func liveRequests() async throws {
    let appPod = Pod()
    let database = appPod.resolve(databaseProvider)
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
              let body = String(buffer: response.body ?? ByteBuffer())
              #expect(body.hasPrefix("Hello, U\(worker)-\(index) | "), "greets its own user")
              bodies.append(body)
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
    #expect(
      database.connectionsOutWhenClosed == 0,
      "the app's pod was shut down with the server, after every connection was returned")
  }
}
