import Hummingbird
import Logging
import ProviderPod

/// The server's routes on the app's pod: one place that wires ProviderPod into Hummingbird,
/// shared by the executable and the tests (which pass a pod with fakes).
///
/// The app's pod runs as a service of the application, listed before the HTTP server that
/// Hummingbird adds last, so a graceful shutdown stops the server first, then shuts the pod
/// down: the app's pod outlives every request's.
public func buildApplication(
  app: Pod, configuration: ApplicationConfiguration? = nil, logger: Logger? = nil
) -> some ApplicationProtocol {
  let router = Router(context: AppRequestContext.self)
  router.add(middleware: RequestPodMiddleware(app: app))
  router.get("hello") { _, context -> String in
    context.pod.resolve(greetingHandlerProvider).respond()
  }
  let settings = app.resolve(configurationProvider)
  return Application(
    router: router,
    configuration: configuration
      ?? .init(address: .hostname(settings.host, port: settings.port)),
    services: [PodService(pod: app)],
    logger: logger)
}
