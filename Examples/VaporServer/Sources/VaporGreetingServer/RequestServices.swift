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
  /// The user id of the `X-User-ID` header, if the request has one.
  public let user: String?

  /// The request's data, as the middleware reads it from a request.
  public init(path: String, user: String?) {
    self.path = path
    self.user = user
  }
}

/// No builder: each request's pod is given the request by the middleware, and forgetting that
/// stops the program instead of using a placeholder.
public let incomingRequestProvider = Provider<IncomingRequest>.unimplemented(
  scope: RequestScope(), name: "incomingRequest")

/// A connection lent by the database to one request, and returned at the end of it.
public final class DatabaseConnection: Sendable {
  let database: Database
  let number: Int

  init(database: Database, number: Int) {
    self.database = database
    self.number = number
  }

  /// The user's display name, as a query would find it.
  func displayName(of user: String) -> String {
    guard let first = user.first else { return user }
    return first.uppercased() + user.dropFirst()
  }

  /// Gives the connection back to the database. Asynchronous, as a real pool's is; this
  /// stand-in has nothing to wait for, so that `RequestCost` measures the pods, not a pause.
  func release() async {
    database.connectionReturned(self)
  }
}

/// A request's database connection: lent when the request first needs it, returned, and
/// awaited, when the request's pod shuts down at the end of the request.
public let connectionProvider = Provider(
  scope: RequestScope(), name: "connection",
  onDiscard: { (connection: DatabaseConnection) async throws in await connection.release() }
) { pod in pod.resolve(databaseProvider).connect() }

/// The handler of one request: built from the request, its connection and two app singletons.
public final class GreetingHandler: Sendable {
  /// Handlers made so far, and still alive.
  public static let instances = LiveCounter()
  /// Which handler this is, counted from 1.
  public let serial: Int
  let request: IncomingRequest
  let connection: DatabaseConnection
  let service: any GreetingService
  let configuration: Configuration

  init(
    request: IncomingRequest, connection: DatabaseConnection, service: any GreetingService,
    configuration: Configuration
  ) {
    self.request = request
    self.connection = connection
    self.service = service
    self.configuration = configuration
    serial = GreetingHandler.instances.objectMade()
  }

  deinit { GreetingHandler.instances.objectGone() }

  /// The response body. A plain string, copied out before the request's pod goes: a value
  /// that escaped the request would have been disposed of by then.
  public func respond() -> String {
    let user = request.user ?? "guest"
    return
      "\(service.greet(connection.displayName(of: user))) | handler \(serial) | service \(service.serial)"
  }
}

/// A request's handler: built in each request's pod from the request, its connection and two
/// app singletons.
public let greetingHandlerProvider = Provider(scope: RequestScope(), name: "greetingHandler") {
  pod in
  GreetingHandler(
    request: pod.resolve(incomingRequestProvider),
    connection: pod.resolve(connectionProvider),
    service: pod.resolve(greetingServiceProvider),
    configuration: pod.resolve(configurationProvider))
}
