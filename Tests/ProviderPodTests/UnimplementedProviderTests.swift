import Testing

@testable import ProviderPod

/// A request a server hands each request's pod.
private struct IncomingRequest: Sendable, Equatable {
  let path: String
}

private struct RequestDataScope: ProviderScope {
  static let requiresOwningPod = true
}

private let currentRequestProvider = Provider<IncomingRequest>.unimplemented(
  scope: RequestDataScope(), name: "currentRequest")
private let currentRequestLine = #line - 2
private let greetingProvider = Provider(scope: RequestDataScope(), name: "greeting") { pod in
  "hello from \(pod.resolve(currentRequestProvider).path)"
}
private let greetingLine = #line - 3
private let asyncTokenProvider = AsyncProvider<String>.unimplemented(name: "token")

@Suite("Providers whose value each pod is given")
struct UnimplementedProviderTests {
  @Test("each request's pod gives its own value, and what is built from it stays there")
  func eachPodGivesItsOwn() {
    let app = Pod()
    func requestPod(_ path: String) -> Pod {
      Pod(
        parent: app, scopes: [RequestDataScope()],
        overrides: [currentRequestProvider.override(withValue: IncomingRequest(path: path))])
    }
    let first = requestPod("/a")
    let second = requestPod("/b")
    #expect(first.resolve(greetingProvider) == "hello from /a")
    #expect(second.resolve(greetingProvider) == "hello from /b")
    #expect(app.dependencyGraph().nodes.isEmpty)
  }

  @Test("an override of the root pod gives it to the whole app, as any override does")
  func rootOverride() async throws {
    let pod = Pod(overrides: [asyncTokenProvider.override(withValue: "secret")])
    #expect(try await pod.resolve(asyncTokenProvider) == "secret")
  }

  @Test("resolved where no pod gives it, it stops, naming itself, who asked and how to give it")
  func missingValueStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let app = Pod()
      _ = Pod(parent: app, scopes: [RequestDataScope()]).resolve(greetingProvider)
    }
    let message = standardError(result)
    #expect(
      message.contains(
        "currentRequest (UnimplementedProviderTests.swift:\(currentRequestLine)) has no builder"))
    #expect(
      message.contains("(greeting (UnimplementedProviderTests.swift:\(greetingLine)) asked for it)")
    )
    #expect(message.contains("overrides: [provider.override(withValue: value)]"))
  }

  @Test("resolved through a pod itself, it stops, saying no build asked for it")
  func missingValueResolvedDirectlyStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let app = Pod()
      _ = Pod(parent: app, scopes: [RequestDataScope()]).resolve(currentRequestProvider)
    }
    let message = standardError(result)
    #expect(message.contains("currentRequest (UnimplementedProviderTests.swift:"))
    #expect(message.contains("(it was resolved through a pod, not from a builder)"))
  }

  @Test("an async one stops the same way")
  func asyncMissingValueStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = try? await Pod().resolve(asyncTokenProvider)
    }
    #expect(standardError(result).contains("token (UnimplementedProviderTests.swift:"))
  }

  @Test("a value returned from a request's pod has been disposed once the pod is gone")
  func escapingValueIsDisposed() {
    final class Connection: Sendable {
      let closed = Shared(false)
    }
    let connectionProvider = Provider(
      scope: RequestDataScope(), name: "connection",
      onDiscard: { (connection: Connection) in connection.closed.withLock { $0 = true } }
    ) { _ in Connection() }
    let app = Pod()
    func handle() -> (Connection, Bool) {
      let request = Pod(parent: app, scopes: [RequestDataScope()])
      let connection = request.resolve(connectionProvider)
      // What the docs advise: copy what the response needs while the request's pod is alive.
      let wasOpen = !connection.closed.withLock { $0 }
      return (connection, wasOpen)
    }
    let (escaped, copiedWhileOpen) = handle()
    #expect(escaped.closed.withLock { $0 }, "the request's pod went away and closed it")
    #expect(copiedWhileOpen, "read before the pod went, it was still open")
  }
}
