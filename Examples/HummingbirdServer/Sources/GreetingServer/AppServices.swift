import ProviderPod
import Synchronization

// The app's singletons: built once in the app's pod and shared by every request.

/// Where the server listens and how it greets.
public struct Configuration: Sendable {
  /// The address to listen on.
  public var host = "127.0.0.1"
  /// The port to listen on.
  public var port = 8080
  /// The first word of every greeting.
  public var greeting = "Hello"

  /// The defaults: port 8080 on the loopback address.
  public init() {}
}

/// The app's configuration: a singleton of the app's pod.
public let configurationProvider = Provider(name: "configuration") { _ in Configuration() }

/// A stand-in for a database connection pool: opened when first needed, closed by the pod
/// when the app's pod goes away at shutdown.
public final class Database: Sendable {
  /// Databases opened so far, and still alive.
  public static let instances = LiveCounter()
  /// Which database this is, counted from 1.
  public let serial: Int
  private let closed = Atomic<Bool>(false)

  init() { serial = Database.instances.objectMade() }
  deinit { Database.instances.objectGone() }

  /// Whether the pod that opened it has closed it.
  public var isClosed: Bool { closed.load(ordering: .relaxed) }

  func close() { closed.store(true, ordering: .relaxed) }

  /// The user's display name, as a query would find it.
  func displayName(of user: String) -> String { user.capitalized }
}

/// The database: opened once by the app's pod, closed by it when it goes away.
public let databaseProvider = Provider(
  name: "database", onDiscard: { (database: Database) in database.close() }
) { _ in Database() }

/// A service behind a protocol, so tests can give the app a fake.
public protocol GreetingService: Sendable {
  var serial: Int { get }
  func greet(_ name: String) -> String
}

final class LiveGreetingService: GreetingService {
  static let instances = LiveCounter()
  let serial: Int
  let greeting: String
  let database: Database

  init(greeting: String, database: Database) {
    self.greeting = greeting
    self.database = database
    serial = LiveGreetingService.instances.objectMade()
  }

  func greet(_ name: String) -> String {
    "\(greeting), \(database.displayName(of: name))"
  }
}

/// The greeting service: a singleton of the app's pod, built from the configuration and the
/// database.
public let greetingServiceProvider = Provider<any GreetingService>(name: "greetingService") {
  pod in
  LiveGreetingService(
    greeting: pod.resolve(configurationProvider).greeting,
    database: pod.resolve(databaseProvider))
}

extension String {
  fileprivate var capitalized: String {
    guard let first else { return self }
    return first.uppercased() + dropFirst()
  }
}
