import Hummingbird
import ProviderPod

/// The same server written without ProviderPod: its singletons made once at start-up and a
/// handler made by hand for each request. It exists to measure what a pod per request costs
/// (`swift run -c release RequestCost`), not as a way to write a server.
public func buildApplicationByHand(
  configuration: ApplicationConfiguration? = nil
) -> some ApplicationProtocol {
  let settings = Configuration()
  let service = LiveGreetingService(greeting: settings.greeting, database: Database())
  let router = Router(context: BasicRequestContext.self)
  router.get("hello") { request, _ -> String in
    let incoming = IncomingRequest(
      path: request.uri.path, user: request.uri.queryParameters.get("user"))
    return GreetingHandler(request: incoming, service: service, configuration: settings)
      .respond()
  }
  return Application(
    router: router,
    configuration: configuration
      ?? .init(address: .hostname(settings.host, port: settings.port)))
}

/// What the example's middleware and route do for one request, without Hummingbird: the
/// request's pod given the request, the handler resolved there, the pod released. For measuring
/// ProviderPod's own share of a request (`RequestCost --direct`).
public func respondThroughRequestPod(app: Pod, user: String) -> String {
  let requestPod = Pod(
    parent: app, scopes: [RequestScope()],
    overrides: [
      incomingRequestProvider.override(withValue: IncomingRequest(path: "/hello", user: user))
    ])
  return requestPod.resolve(greetingHandlerProvider).respond()
}

/// The same request by hand: the handler made from singletons the caller keeps.
public struct ByHandResponder: Sendable {
  let settings = Configuration()
  let service: LiveGreetingService

  /// The singletons, made once.
  public init() {
    service = LiveGreetingService(greeting: settings.greeting, database: Database())
  }

  /// One request's handler, made and asked for its response.
  public func respond(user: String) -> String {
    let incoming = IncomingRequest(path: "/hello", user: user)
    return GreetingHandler(request: incoming, service: service, configuration: settings).respond()
  }
}
