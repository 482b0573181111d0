import Hummingbird
import ProviderPod

/// The server's routes on the app's pod: one place that wires ProviderPod into Hummingbird,
/// shared by the executable and the tests (which pass a pod with fakes).
public func buildApplication(
  app: Pod, configuration: ApplicationConfiguration? = nil
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
      ?? .init(address: .hostname(settings.host, port: settings.port)))
}
