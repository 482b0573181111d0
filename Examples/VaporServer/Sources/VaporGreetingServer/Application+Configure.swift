import ProviderPod
import Vapor

extension Application {
  /// Wires ProviderPod into the application: one place shared by the executable and the tests
  /// (which pass a pod with fakes). Each request gets a pod of its own, routes resolve through
  /// `request.pod`, and the app's pod is shut down with the application.
  public func configure(pod: Pod) {
    let settings = pod.resolve(configurationProvider)
    http.server.configuration.hostname = settings.host
    http.server.configuration.port = settings.port
    middleware.use(RequestPodMiddleware(app: pod))
    lifecycle.use(PodLifecycleHandler(pod: pod))
    get("hello") { request -> String in
      request.pod.resolve(greetingHandlerProvider).respond()
    }
  }
}
