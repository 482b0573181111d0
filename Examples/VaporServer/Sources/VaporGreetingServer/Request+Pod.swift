import ProviderPod
import Vapor

extension Request {
  /// The request's pod, made by `RequestPodMiddleware`.
  ///
  /// Route handlers resolve through `request.pod` and nothing else, so none can reach the
  /// app's pod by mistake; a request-scoped provider resolved anywhere else stops the program.
  public var pod: Pod {
    guard let requestPod = storage[RequestPodKey.self] else {
      preconditionFailure("Request.pod: add RequestPodMiddleware to the application first")
    }
    return requestPod
  }
}

/// Where `RequestPodMiddleware` keeps the request's pod, in the request's storage.
struct RequestPodKey: StorageKey {
  typealias Value = Pod
}
