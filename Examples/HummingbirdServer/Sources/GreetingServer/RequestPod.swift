import Hummingbird
import Logging
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
/// request's data, and shuts it down when the response has been produced: the request's
/// cleanups (its connection returned to the database) have finished before the response goes
/// out. The pod logs what it builds and disposes of to the request's logger.
public struct RequestPodMiddleware: RouterMiddleware {
  /// The context the middleware gives a pod to.
  public typealias Context = AppRequestContext

  let app: Pod

  /// A middleware that makes each request's pod a child of `app`.
  public init(app: Pod) {
    self.app = app
  }

  /// Gives the request its pod, passes it on, and shuts the pod down once the response is made.
  public func handle(
    _ request: Request, context: Context,
    next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    var context = context
    let incoming = IncomingRequest(
      path: request.uri.path, user: request.uri.queryParameters.get("user"))
    let requestPod = Pod(
      parent: app, scopes: [RequestScope()],
      overrides: [incomingRequestProvider.override(withValue: incoming)],
      observer: LoggingObserver(logger: context.logger))
    context.requestPod = requestPod
    let response: Response
    do {
      response = try await next(request, context)
    } catch {
      // A handler that threw still had its connection: return it before the error response.
      await endRequest(requestPod, logger: context.logger)
      throw error
    }
    await endRequest(requestPod, logger: context.logger)
    return response
  }

  /// A cleanup that fails is the server's problem, not the client's: logged, and the response
  /// already made goes out as it is.
  private func endRequest(_ requestPod: Pod, logger: Logger) async {
    do {
      try await requestPod.shutdown()
    } catch {
      logger.error("the request's cleanup failed: \(error)")
    }
  }
}
