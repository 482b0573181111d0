import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Request pods on eight threads, each made, used and let go of (or shut down, or observed)
/// per request, while other
/// threads clear the app's scope, override the app's client and take the override away, and
/// make singletons the app has never built, which requests then build first. A request pod's
/// own work runs beside its siblings' (the tree's lock held shared); every change runs alone.
/// Once a change has returned, no request that starts afterwards may get an instance built
/// from what it discarded; a request's instances are built from its own pod's, never another
/// request's; every instance seen cached is disposed of exactly once, and none twice. The
/// app's pod is kept in a global, which the builders and hooks use.
enum RequestsBesideAppChanges {
  static let report = Report(scenario: "requests-beside-app-changes")
  static let configs = Ledger("config", exact: false, report: report)
  static let clients = Ledger("client", exact: false, report: report)
  static let freshOnes = Ledger("fresh", exact: false, report: report)
  static let sessions = Ledger("session", exact: false, report: report)
  static let handlers = Ledger("handler", exact: false, report: report)

  static let app = Locked<Pod?>(nil)

  struct AppScope: ProviderScope {}
  struct RequestScope: ProviderScope {}

  /// Which request a thread serves, stamped by builders on what they build.
  enum Serving {
    @TaskLocal static var request = 0
  }

  final class Node: Tracked, @unchecked Sendable {
    let from: [Node]
    let request = Serving.request
    init(_ ledger: Ledger, from: [Node] = []) {
      self.from = from
      super.init(ledger)
    }
  }

  /// The serials of instances a request saw cached, and of those whose hook ran.
  static let seenCached = Locked<Set<Int>>([])
  static let disposed = Locked<Set<Int>>([])

  static func dispose(_ node: Node) {
    node.discarded()
    _ = disposed.withLock { $0.insert(node.serial) }
  }

  static let configProvider = Provider<Node>(
    scope: AppScope(), name: "config", onDiscard: { dispose($0) }
  ) { _ in Node(configs) }

  /// The app's singleton, overridden and restored by one thread.
  static let clientProvider = Provider<Node>(name: "client", onDiscard: { dispose($0) }) { _ in
    Node(clients)
  }

  /// A singleton the app has not built yet, replaced by one thread: requests build it first.
  static let fresh = Locked(makeFresh())

  static func makeFresh() -> Provider<Node> {
    Provider<Node>(name: "fresh", onDiscard: { dispose($0) }) { _ in Node(freshOnes) }
  }

  static let sessionProvider = Provider<Node>(
    scope: RequestScope(), name: "session", onDiscard: { dispose($0) }
  ) { pod in
    // Through the app's pod in the global, as a builder that reaches the app directly does:
    // the session depends on the client all the same.
    let client = app.value.map { $0.resolve(clientProvider) } ?? pod.resolve(clientProvider)
    return Node(sessions, from: [client])
  }

  /// Built from the request's session, the app's config and a singleton the app may not
  /// have built yet.
  static let handlerProvider = Provider<Node>(
    scope: RequestScope(), name: "handler",
    onDiscard: { handler in
      dispose(handler)
      // A hook that uses the app through the global while its request goes away.
      _ = app.value?.resolve(clientProvider)
    }
  ) { pod in
    let session = pod.resolve(sessionProvider)
    let config = pod.resolve(configProvider)
    let fresh = pod.resolve(RequestsBesideAppChanges.fresh.value)
    return Node(handlers, from: [session, config, fresh])
  }

  /// Counts the handler builds an observed request reports: one per resolve that did not
  /// reuse the handler, never more.
  final class BuildCounter: PodObserver, @unchecked Sendable {
    let builds = Locked(0)
    func pod(_ pod: Pod, didReport event: PodEvent) {
      if case .built("handler", _) = event { builds.withLock { $0 += 1 } }
    }
  }

  /// The oldest serial a request that starts now may see: raised after each change returns.
  static let configFloor = Floor()
  static let clientFloor = Floor()

  static let scenario = Scenario(
    name: "requests-beside-app-changes",
    summary: "request pods on 8 threads beside app clears, overrides and first-time singletons",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    await raceAgainstAppInGlobal(
      app, for: duration, settling: [configs, clients, freshOnes, sessions, handlers]
    ) { race(in: $0, until: $1) }
    let missing = seenCached.value.subtracting(disposed.value)
    report.check(
      missing.isEmpty, "\(missing.count) instances seen cached were never disposed of")
  }

  private static func race(in pod: Pod, until deadline: Deadline) {
    onThreads(10) { index in
      var operations = 0
      var random = FastRandom(seed: index + 1)
      var overridden = false
      while !deadline.hasPassed {
        switch index {
        case 8:
          let serial = nextSerial()
          pod.clearCachedInstances(forScope: AppScope())
          configFloor.raise(to: serial)
          sched_yield()
        case 9:
          let serial = nextSerial()
          if random.next(3) == 0 {
            fresh.withLock { $0 = makeFresh() }
          } else if overridden {
            pod.removeOverrideProvider(clientProvider)
            clientFloor.raise(to: serial)
            overridden = false
          } else {
            pod.overrideProvider(clientProvider) { _ in Node(clients) }
            clientFloor.raise(to: serial)
            overridden = true
          }
          sched_yield()
        default:
          Serving.$request.withValue(index * 1_000_000_000 + operations + 1) {
            serve(random.next(5))
          }
        }
        operations += 1
      }
      report.add(operations: operations)
    }
  }

  /// One request, on the global app's pod: resolves, checks, maybe clears, goes away or is
  /// shut down.
  private static func serve(_ style: Int) {
    guard let app = app.value else { return }
    let floors = (config: configFloor.current, client: clientFloor.current)
    let observer = style == 2 ? BuildCounter() : nil
    let request = Pod(parent: app, scopes: [RequestScope()], observer: observer)
    let handler = request.resolve(handlerProvider)
    check(handler, against: floors)
    // Again, cached now unless a change discarded it: a change that returned meanwhile must
    // reach the cached handler too.
    let later = (config: configFloor.current, client: clientFloor.current)
    let again = request.resolve(handlerProvider)
    check(again, against: later)
    if again === handler { _ = seenCached.withLock { $0.insert(handler.serial) } }
    if let observer {
      let builds = observer.builds.value
      report.check(
        builds == (again === handler ? 1 : 2),
        "an observed request reported \(builds) builds of its handler")
    }
    switch style {
    case 0: request.clearCachedInstances(forScope: RequestScope())
    case 1: _ = request.resolve(sessionProvider)
    case 3:
      request.shutDownAndWait(report: report)
    default: break
    }
  }

  private static func check(_ handler: Node, against floors: (config: Int, client: Int)) {
    let (session, config) = (handler.from[0], handler.from[1])
    report.check(
      handler.request == Serving.request && session.request == Serving.request,
      "a request got an instance built for another request")
    report.check(
      config.serial >= floors.config,
      "handler#\(handler.serial) built from config#\(config.serial), "
        + "after a clear at #\(floors.config) had returned")
    report.check(
      session.from[0].serial >= floors.client,
      "session#\(session.serial) built from client#\(session.from[0].serial), "
        + "after a change of the client at #\(floors.client) had returned")
  }
}
