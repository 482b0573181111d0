import Hummingbird

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
