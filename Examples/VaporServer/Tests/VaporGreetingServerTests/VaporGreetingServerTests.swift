import InMemoryLogging
import Logging
import ProviderPod
import Testing
import VaporGreetingServer
import VaporTesting

/// A fake service: what a test pod gives the app instead of the live one.
private struct FakeGreetingService: GreetingService {
  let serial = -1
  func greet(_ name: String) -> String { "Hi from a fake, \(name)" }
}

// One at a time: the live tests count handlers and databases made and alive across the process.
@Suite("The Vapor greeting server", .serialized)
struct VaporGreetingServerTests {
  @Test("a test pod's fake service reaches the handler, with the user id from the header")
  func fakeService() async throws {
    let testPod = Pod(overrides: [greetingServiceProvider.override { _ in FakeGreetingService() }])
    try await withApp(configure: { $0.configure(pod: testPod) }) { app in
      try await app.testing().test(.GET, "hello", headers: ["X-User-ID": "ada"]) { response in
        #expect(response.status == .ok)
        #expect(response.body.string.hasPrefix("Hi from a fake, Ada | handler "))
      }
    }
  }

  @Test("without an override the live service greets, and a request without a user id is a guest")
  func liveService() async throws {
    try await withApp(configure: { $0.configure(pod: Pod()) }) { app in
      try await app.testing().test(.GET, "hello") { response in
        #expect(response.status == .ok)
        #expect(response.body.string.hasPrefix("Hello, Guest | handler "))
      }
    }
  }

  @Test("a shutdown awaits the database's async close, after the last request's cleanup")
  func shutdownClosesDatabase() async throws {
    let log = ResourceLog()
    let appPod = Pod(overrides: [resourceLogProvider.override(withValue: log)])
    let database = appPod.resolve(databaseProvider)
    let app = try await Application.make(.testing)
    app.configure(pod: appPod)
    // Returns once the application has shut down.
    try await serve(app) { port in
      for user in ["ada", "grace"] {
        let response = try await app.client.get(
          "http://127.0.0.1:\(port)/hello", headers: ["X-User-ID": user])
        #expect(response.status == .ok)
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
    "a request in flight when the shutdown begins is answered, and its connection returned, before the database closes",
    .timeLimit(.minutes(1)))
  func requestInFlightAtShutdown() async throws {
    let log = ResourceLog()
    let appPod = Pod(overrides: [resourceLogProvider.override(withValue: log)])
    let database = appPod.resolve(databaseProvider)
    let app = try await Application.make(.testing)
    app.configure(pod: appPod)
    let arrived = Gate()
    let shutdownBegun = Gate()
    // Held until the shutdown has begun, then answered through the request's pod.
    app.get("slow") { request async -> String in
      arrived.open()
      await shutdownBegun.wait()
      return request.pod.resolve(greetingHandlerProvider).respond()
    }
    // Registered last, so Vapor calls it first when the application shuts down.
    app.lifecycle.use(OnShutdown { shutdownBegun.open() })
    let body = try await serve(app) { port in
      // Not `app.client`: the application shuts its client down too, perhaps before the
      // response has been read.
      let response = Task {
        let request = try HTTPClient.Request(
          url: "http://127.0.0.1:\(port)/slow", method: .GET, headers: ["X-User-ID": "ada"])
        return try await HTTPClient.shared.execute(request: request).get()
      }
      await arrived.wait()
      return response
    }
    // `serve` has shut the application down: the request was answered first.
    let response = try await body.value
    #expect(response.status == .ok)
    #expect(response.body.map { String(buffer: $0) }?.hasPrefix("Hello, Ada | ") == true)
    #expect(log.recorded == ["connection 1 returned", "database closed"])
    #expect(database.connectionsOutWhenClosed == 0)
  }

  @Test(
    "a request's pod logs its builds, and its disposals at the end of the request, to the request's logger"
  )
  func requestPodLogs() async throws {
    let handler = InMemoryLogHandler()
    try await withApp(configure: { app in
      app.logger = Logger(label: "VaporGreetingServerTests") { _ in handler }
      app.logger.logLevel = .debug
      app.configure(pod: Pod())
    }) { app in
      try await app.testing().test(.GET, "hello", headers: ["X-User-ID": "ada"]) { response in
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
      }, "\(messages)")
    let requestID = try #require(built.metadata["request-id"], "logged with the request's logger")
    #expect(discarded.metadata["request-id"] == requestID)
    #expect(messages.contains { $0.hasPrefix("discarded connection in RequestScope") })
  }

  @Test(
    "live: 1,000 requests, 8 at a time, never share request data or a handler, share the service, and leave none alive",
    .timeLimit(.minutes(2)))
  func liveRequests() async throws {
    let appPod = Pod()
    let database = appPod.resolve(databaseProvider)
    let app = try await Application.make(.testing)
    app.logger.logLevel = .warning  // not a line for each of the 1,000 requests
    app.configure(pod: appPod)
    let handlersBefore = GreetingHandler.instances.madeCount
    let responses: [(user: String, body: String)] = try await serve(app) { port in
      try await withThrowingTaskGroup(of: [(String, String)].self) { group in
        for worker in 0..<8 {
          group.addTask {
            var responses: [(String, String)] = []
            for index in 0..<125 {
              let user = "u\(worker)-\(index)"
              let response = try await app.client.get(
                "http://127.0.0.1:\(port)/hello", headers: ["X-User-ID": user])
              responses.append((user, response.body.map { String(buffer: $0) } ?? ""))
            }
            return responses
          }
        }
        return try await group.reduce(into: []) { $0 += $1 }
      }
    }
    #expect(responses.count == 1_000)
    for (user, body) in responses {
      #expect(body.hasPrefix("Hello, U\(user.dropFirst()) | "), "each request greets its own user")
    }
    let handlers = responses.map { $0.body.components(separatedBy: " | ")[1] }
    let services = Set(responses.map { $0.body.components(separatedBy: " | ")[2] })
    #expect(Set(handlers).count == 1_000, "each request had its own handler")
    #expect(services.count == 1, "every request shared the app's service: \(services)")
    #expect(GreetingHandler.instances.madeCount - handlersBefore == 1_000)
    // The application has shut down: every request's pod has gone, the app's pod after them.
    #expect(GreetingHandler.instances.aliveCount == 0, "no request's handler outlived it")
    #expect(database.isClosed)
    #expect(database.connectionsOutWhenClosed == 0, "every connection was returned first")
  }

  /// Starts the application as the executable does (`serve`, on 127.0.0.1, on a port the
  /// system picks), runs `body` with the port, and shuts the application down as the
  /// executable does after a signal: returns once the shutdown has finished.
  private func serve<Result>(
    _ app: Application, _ body: (Int) async throws -> Result
  ) async throws -> Result {
    let result: Result
    do {
      app.environment.arguments = [
        "VaporServer", "serve", "--hostname", "127.0.0.1", "--port", "0",
      ]
      try await app.startup()
      let port = try #require(app.http.server.shared.localAddress?.port)
      result = try await body(port)
    } catch {
      try? await app.asyncShutdown()
      throw error
    }
    try await app.asyncShutdown()
    return result
  }
}

/// Opened once; `wait` returns once it is open.
private final class Gate: Sendable {
  private let stream: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation

  init() { (stream, continuation) = AsyncStream.makeStream() }

  func open() { continuation.finish() }

  /// For one waiter.
  func wait() async {
    for await _ in stream {}
  }
}

/// Runs `action` when the application starts shutting down.
private struct OnShutdown: LifecycleHandler {
  let action: @Sendable () -> Void

  func shutdownAsync(_ application: Application) async { action() }
}
