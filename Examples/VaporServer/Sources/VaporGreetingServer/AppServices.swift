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

/// A stand-in for a database connection pool: opened when first needed, closed by the app's
/// pod when it shuts down, after every request's connection has been returned.
public final class Database: Sendable {
  /// Databases opened so far, and still alive.
  public static let instances = LiveCounter()
  /// Which database this is, counted from 1.
  public let serial: Int
  let log: ResourceLog?
  private let closed = Atomic<Bool>(false)
  private let connectionsLent = Atomic<Int>(0)
  private let connectionsOut = Atomic<Int>(0)
  private let connectionsOutAtClose = Atomic<Int>(-1)

  init(log: ResourceLog?) {
    self.log = log
    serial = Database.instances.objectMade()
  }
  deinit { Database.instances.objectGone() }

  /// Whether the pod that opened it has closed it.
  public var isClosed: Bool { closed.load(ordering: .acquiring) }

  /// How many connections had not been returned when it closed; -1 while it is open.
  public var connectionsOutWhenClosed: Int { connectionsOutAtClose.load(ordering: .acquiring) }

  /// Lends a connection, for one request.
  func connect() -> DatabaseConnection {
    connectionsOut.add(1, ordering: .relaxed)
    let number = connectionsLent.add(1, ordering: .relaxed).newValue
    return DatabaseConnection(database: self, number: number)
  }

  func connectionReturned(_ connection: DatabaseConnection) {
    connectionsOut.subtract(1, ordering: .relaxed)
    log?.record("connection \(connection.number) returned")
  }

  /// Closes the pool. Asynchronous, as a real pool's close is: it waits for its connections'
  /// sockets to close, here for a turn of the scheduler.
  func close() async {
    await Task.yield()
    connectionsOutAtClose.store(connectionsOut.load(ordering: .relaxed), ordering: .relaxed)
    log?.record("database closed")
    closed.store(true, ordering: .releasing)
  }
}

/// The database: opened once by the app's pod, closed, and awaited, when the pod shuts down.
public let databaseProvider = Provider(
  name: "database", onDiscard: { (database: Database) async throws in await database.close() }
) { pod in Database(log: pod.resolve(resourceLogProvider)) }

/// What the database and its connections did, in order; given by tests that check the order
/// of cleanups at shutdown, and nil otherwise (a server keeps no such history).
public final class ResourceLog: Sendable {
  private let entries = Mutex<[String]>([])

  /// An empty log.
  public init() {}

  func record(_ entry: String) { entries.withLock { $0.append(entry) } }

  /// Everything recorded so far, oldest first.
  public var recorded: [String] { entries.withLock { $0 } }
}

/// No log unless a test gives one with an override.
public let resourceLogProvider = Provider<ResourceLog?>(name: "resourceLog") { _ in nil }

/// A service behind a protocol, so tests can give the app a fake.
public protocol GreetingService: Sendable {
  var serial: Int { get }
  func greet(_ name: String) -> String
}

final class LiveGreetingService: GreetingService {
  static let instances = LiveCounter()
  let serial: Int
  let greeting: String

  init(greeting: String) {
    self.greeting = greeting
    serial = LiveGreetingService.instances.objectMade()
  }

  func greet(_ name: String) -> String { "\(greeting), \(name)" }
}

/// The greeting service: a singleton of the app's pod, built from the configuration.
public let greetingServiceProvider = Provider<any GreetingService>(name: "greetingService") {
  pod in
  LiveGreetingService(greeting: pod.resolve(configurationProvider).greeting)
}
