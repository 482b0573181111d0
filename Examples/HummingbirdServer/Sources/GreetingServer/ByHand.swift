import Hummingbird
import ProviderPod

/// The same server written without ProviderPod: its singletons made once at start-up and a
/// handler made by hand for each request. It exists to measure what a pod per request costs
/// (`swift run -c release RequestCost`), not as a way to write a server.
public func buildApplicationByHand(
  configuration: ApplicationConfiguration? = nil
) -> some ApplicationProtocol {
  let settings = Configuration()
  let database = Database(log: nil)
  let service = LiveGreetingService(greeting: settings.greeting)
  let router = Router(context: BasicRequestContext.self)
  router.get("hello") { request, _ -> String in
    let incoming = IncomingRequest(
      path: request.uri.path, user: request.uri.queryParameters.get("user"))
    let connection = database.connect()
    let body = GreetingHandler(
      request: incoming, connection: connection, service: service, configuration: settings
    ).respond()
    await connection.release()
    return body
  }
  return Application(
    router: router,
    configuration: configuration
      ?? .init(address: .hostname(settings.host, port: settings.port)))
}

/// What the example's middleware and route do for one request, without Hummingbird: the
/// request's pod given the request, the handler resolved there, the pod shut down (the
/// connection returned). For measuring ProviderPod's own share of a request
/// (`RequestCost --direct`); `observer` is the middleware's logging observer, or nil.
public func respondThroughRequestPod(
  app: Pod, user: String, observer: (any PodObserver)? = nil
) async throws -> String {
  let requestPod = Pod(
    parent: app, scopes: [RequestScope()],
    overrides: [
      incomingRequestProvider.override(withValue: IncomingRequest(path: "/hello", user: user))
    ],
    observer: observer)
  let body = requestPod.resolve(greetingHandlerProvider).respond()
  try await requestPod.shutdown()
  return body
}

/// What the same request costs when its pod is not shut down but released, its cleanups left
/// to the release: the middleware before request pods were shut down at the end of a request.
public func respondThroughReleasedRequestPod(app: Pod, user: String) -> String {
  let requestPod = Pod(
    parent: app, scopes: [RequestScope()],
    overrides: [
      incomingRequestProvider.override(withValue: IncomingRequest(path: "/hello", user: user))
    ])
  return requestPod.resolve(greetingHandlerProvider).respond()
}

/// The same request by hand: the handler made from singletons the caller keeps, the
/// connection lent and returned by hand.
public struct ByHandResponder: Sendable {
  let settings = Configuration()
  let database = Database(log: nil)
  let service: LiveGreetingService

  /// The singletons, made once.
  public init() {
    service = LiveGreetingService(greeting: settings.greeting)
  }

  /// One request's handler, made and asked for its response; its connection returned.
  public func respond(user: String) async -> String {
    let incoming = IncomingRequest(path: "/hello", user: user)
    let connection = database.connect()
    let body = GreetingHandler(
      request: incoming, connection: connection, service: service, configuration: settings
    ).respond()
    await connection.release()
    return body
  }
}
