import Logging
import ProviderPod
import Vapor

/// Gives each request a child of the app's pod that owns `RequestScope` and is given the
/// request's data, and shuts it down when the response has been produced: the request's
/// cleanups (its connection returned to the database) have finished before the response goes
/// out. The pod logs what it builds and disposes of to the request's logger.
public struct RequestPodMiddleware: AsyncMiddleware {
  let app: Pod

  /// A middleware that makes each request's pod a child of `app`.
  public init(app: Pod) {
    self.app = app
  }

  /// Gives the request its pod, passes it on, and shuts the pod down once the response is made.
  public func respond(
    to request: Request, chainingTo next: any AsyncResponder
  ) async throws -> Response {
    let incoming = IncomingRequest(
      path: request.url.path, user: request.headers.first(name: "X-User-ID"))
    let requestPod = Pod(
      parent: app, scopes: [RequestScope()],
      overrides: [incomingRequestProvider.override(withValue: incoming)],
      observer: LoggingObserver(logger: request.logger))
    request.storage[RequestPodKey.self] = requestPod
    let response: Response
    do {
      response = try await next.respond(to: request)
    } catch {
      // A handler that threw still had its connection: return it before the error response.
      await endRequest(requestPod, logger: request.logger)
      throw error
    }
    await endRequest(requestPod, logger: request.logger)
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
