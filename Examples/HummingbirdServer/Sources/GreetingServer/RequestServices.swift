import ProviderPod

// What each request has of its own: built in the request's pod, disposed of with it.

/// A server's request. Requiring an owning pod means nothing in this scope is ever cached in
/// the app's pod, where the next request would find it: resolved anywhere but through a
/// request's pod, it stops the program with the fix.
public struct RequestScope: ProviderScope {
  /// Instances of this scope are cached only in a pod that owns it: a request's pod.
  public static let requiresOwningPod = true
  /// The request scope.
  public init() {}
}

/// The request's data, as the middleware gives it to the request's pod.
public struct IncomingRequest: Sendable {
  /// The path asked for.
  public let path: String
  /// The `user` query parameter, if the request has one.
  public let user: String?
}

/// No builder: each request's pod is given the request by the middleware, and forgetting that
/// stops the program instead of using a placeholder.
public let incomingRequestProvider = Provider<IncomingRequest>.unimplemented(
  scope: RequestScope(), name: "incomingRequest")

/// The handler of one request: built from the request and two app singletons.
public final class GreetingHandler: Sendable {
  /// Handlers made so far, and still alive.
  public static let instances = LiveCounter()
  /// Which handler this is, counted from 1.
  public let serial: Int
  let request: IncomingRequest
  let service: any GreetingService
  let configuration: Configuration

  init(request: IncomingRequest, service: any GreetingService, configuration: Configuration) {
    self.request = request
    self.service = service
    self.configuration = configuration
    serial = GreetingHandler.instances.objectMade()
  }

  deinit { GreetingHandler.instances.objectGone() }

  /// The response body. A plain string, copied out before the request's pod goes: a value
  /// that escaped the request would have been disposed of by then.
  func respond() -> String {
    let name = request.user ?? "guest"
    return "\(service.greet(name)) | handler \(serial) | service \(service.serial)"
  }
}

/// A request's handler: built in each request's pod from the request and two app singletons.
public let greetingHandlerProvider = Provider(scope: RequestScope(), name: "greetingHandler") {
  pod in
  GreetingHandler(
    request: pod.resolve(incomingRequestProvider),
    service: pod.resolve(greetingServiceProvider),
    configuration: pod.resolve(configurationProvider))
}
