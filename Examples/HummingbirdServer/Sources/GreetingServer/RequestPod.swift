import Hummingbird
import ProviderPod

/// The context every route gets: the request's own pod, made by `RequestPodMiddleware`.
///
/// Handlers resolve through `context.pod` and nothing else, so none can reach the app's pod
/// by mistake; a request-scoped provider resolved anywhere else stops the program.
public struct AppRequestContext: RequestContext {
  /// Hummingbird's own per-request storage.
  public var coreContext: CoreRequestContextStorage
  fileprivate var requestPod: Pod?

  /// A context without a pod yet: `RequestPodMiddleware` gives it one.
  public init(source: Source) {
    coreContext = .init(source: source)
  }

  /// The request's pod.
  public var pod: Pod {
    guard let requestPod else {
      preconditionFailure("AppRequestContext: add RequestPodMiddleware to the router first")
    }
    return requestPod
  }
}

/// Gives each request a child of the app's pod that owns `RequestScope` and is given the
/// request's data. The child, and everything the request built in it, goes away once the
/// response has been produced; its `onDiscard` hooks run then.
public struct RequestPodMiddleware: RouterMiddleware {
  /// The context the middleware gives a pod to.
  public typealias Context = AppRequestContext

  let app: Pod

  /// A middleware that makes each request's pod a child of `app`.
  public init(app: Pod) {
    self.app = app
  }

  /// Gives the request its pod, then passes it on.
  public func handle(
    _ request: Request, context: Context,
    next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    var context = context
    let incoming = IncomingRequest(
      path: request.uri.path, user: request.uri.queryParameters.get("user"))
    context.requestPod = Pod(
      parent: app, scopes: [RequestScope()],
      overrides: [incomingRequestProvider.override(withValue: incoming)])
    return try await next(request, context)
  }
}
