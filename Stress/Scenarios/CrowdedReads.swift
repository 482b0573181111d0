import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A server's read-mostly day with more threads than cores: ten threads share one app pod.
/// One changes it (clears a scope, overrides a provider and removes the override, clears a
/// singleton); three read its cached instances through the app's pod; three through child pods
/// of their own, renewed now and then, some of which override the config for a while and
/// remove the override again; three serve requests, each in a child pod that owns the
/// request scope (some overriding a singleton), resolved twice and released.
///
/// What users rely on: a cached read hands out the current instance or a newer one, never one
/// made before a change that returned before the read began, nor one built from such an
/// instance; never an instance whose `onDiscard` hook started before the read began; a request's
/// own instances stay its own until it goes, and each hook runs once.
enum CrowdedReads {
  static let report = Report(scenario: "crowded-reads")
  static let configs = Ledger("config", exact: false, report: report)
  static let overriddenConfigs = Ledger("overridden-config", exact: false, report: report)
  static let childConfigs = Ledger("child-config", exact: false, report: report)
  static let services = Ledger("service", exact: false, report: report)
  static let requestServices = Ledger("request-service", exact: false, report: report)
  static let handlers = Ledger("handler", exact: false, report: report)
  /// Built from nothing a change touches: every one is cached in its request's pod and
  /// disposed of when the pod goes.
  static let requestIDs = Ledger("request-id", exact: true, report: report)
  static let clock = DisposalClock()

  struct ConfigScope: ProviderScope {}
  struct RequestScope: ProviderScope {}

  final class Config: Stamped, @unchecked Sendable {
    init(_ ledger: Ledger) { super.init(ledger, clock: clock) }
  }

  final class Service: Stamped, @unchecked Sendable {
    let config: Config
    init(_ ledger: Ledger, config: Config) {
      self.config = config
      super.init(ledger, clock: clock)
    }
  }

  final class RequestID: Stamped, @unchecked Sendable {
    init() { super.init(requestIDs, clock: clock) }
  }

  final class Handler: Stamped, @unchecked Sendable {
    let service: Service
    let config: Config
    let id: RequestID
    init(service: Service, config: Config, id: RequestID) {
      self.service = service
      self.config = config
      self.id = id
      super.init(handlers, clock: clock)
    }
  }

  static let configProvider = Provider(
    scope: ConfigScope(), name: "config", onDiscard: { $0.disposeNow() }
  ) { _ in Config(configs) }

  static let serviceProvider = Provider(name: "service", onDiscard: { $0.disposeNow() }) { pod in
    Service(services, config: pod.resolve(configProvider))
  }

  static let requestIDProvider = Provider(
    scope: RequestScope(), name: "request-id", onDiscard: { $0.disposeNow() }
  ) { _ in RequestID() }

  static let handlerProvider = Provider(
    scope: RequestScope(), name: "handler", onDiscard: { $0.disposeNow() }
  ) { pod in
    Handler(
      service: pod.resolve(serviceProvider), config: pod.resolve(configProvider),
      id: pod.resolve(requestIDProvider))
  }

  /// A request's own service, built in its pod from the app's config.
  static let requestServiceOverride = serviceProvider.override { pod in
    Service(requestServices, config: pod.resolve(configProvider))
  }

  /// The oldest serials a read may hand out: the writer raises them after each change.
  struct Floors: Sendable {
    let config = Floor()
    let service = Floor()
  }

  /// What a read knew before it resolved.
  struct Before {
    let config: Int
    let service: Int
    let disposals: Int

    init(_ floors: Floors) {
      // The floors first: a change that completes in between only makes them older.
      config = floors.config.current
      service = floors.service.current
      disposals = clock.now
    }
  }

  static let scenario = Scenario(
    name: "crowded-reads",
    summary:
      "ten threads: cached reads in the app's and child pods, request pods, clears, overrides",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    // Once unobserved (the cached read's fast path) and once observed (the general path).
    for observed in [false, true] {
      let app = observed ? Pod(observer: ObservedClear.QuietObserver()) : Pod()
      race(in: app, until: Deadline(after: duration / 2))
    }
    await settle([
      configs, overriddenConfigs, childConfigs, services, requestServices, handlers, requestIDs,
    ])
  }

  private static func race(in app: Pod, until deadline: Deadline) {
    let floors = Floors()
    onThreads(10) { index in
      var random = FastRandom(seed: index &* 7919 &+ 1)
      var operations = 0
      switch index {
      case 0:
        var changer = Changer(app: app, floors: floors)
        while !deadline.hasPassed {
          changer.any(random.next(4))
          // Long enough stretches of cached reads between changes.
          for _ in 0..<random.next(4) { sched_yield() }
          operations += 1
        }
      case 1...3:
        while !deadline.hasPassed {
          read(through: app, floors, random.next(2), "app pod")
          operations += 1
        }
      case 4...6:
        while !deadline.hasPassed {
          operations += readThroughChild(of: app, floors, &random, until: deadline)
        }
      default:
        var request = index
        while !deadline.hasPassed {
          serve(request, in: app, floors, clearing: random.next(8) == 0)
          request += 3
          operations += 1
        }
      }
      report.add(operations: operations)
    }
  }

  private static func read(through pod: Pod, _ floors: Floors, _ which: Int, _ via: String) {
    let before = Before(floors)
    if which == 0 {
      let config = pod.resolve(configProvider)
      check(config, "config through the \(via)", before)
    } else {
      let service = pod.resolve(serviceProvider)
      check(service, "service through the \(via)", before, serviceFloor: true)
    }
  }

  /// A child pod of this thread's own, read through a random number of times; a third of them
  /// override the config part of the way through, and some of those remove the override again.
  /// Returns how many operations it made.
  private static func readThroughChild(
    of app: Pod, _ floors: Floors, _ random: inout FastRandom, until deadline: Deadline
  ) -> Int {
    let child = Pod(parent: app)
    let reads = 1 + random.next(2_000)
    let overrideAt = random.next(3) == 0 ? random.next(reads) : -1
    let removeAt = overrideAt < 0 ? -1 : overrideAt + random.next(2 * (reads - overrideAt))
    /// The oldest serial the child's own config may have while its override is in place.
    var ownFloor: Int?
    var operations = 0
    for position in 0..<reads where !deadline.hasPassed {
      if position == overrideAt {
        let serial = nextSerial()
        child.overrideProvider(configProvider) { _ in Config(childConfigs) }
        ownFloor = serial
        operations += 1
      } else if position == removeAt {
        child.removeOverrideProvider(configProvider)
        ownFloor = nil
        operations += 1
      }
      if let ownFloor {
        readOverridden(child, floor: ownFloor, random.next(2))
      } else {
        read(through: child, floors, random.next(2), "child pod")
      }
      operations += 1
    }
    return operations
  }

  /// A read through a child that overrides the config: the child's own, never the app's. The
  /// app's clears reach the child's config too, so only the override's time bounds it.
  private static func readOverridden(_ child: Pod, floor: Int, _ which: Int) {
    let began = clock.now
    let config: Config
    if which == 0 {
      config = child.resolve(configProvider)
      report.checkNotDisposed(config, before: began, "config through an overriding child")
    } else {
      let service = child.resolve(serviceProvider)
      report.check(
        service.serial >= floor,
        "service#\(service.serial) through a child handed out after the child's override at"
          + " #\(floor)")
      report.checkNotDisposed(service, before: began, "service through an overriding child")
      config = service.config
    }
    report.check(
      config.ledger === childConfigs && config.serial >= floor,
      "config#\(config.serial) of \(config.ledger.name) through a child (directly or through its"
        + " service) that overrode the config at #\(floor)")
  }

  private static func check(_ config: Config, _ what: String, _ before: Before) {
    report.check(
      config.serial >= before.config,
      "\(what): config#\(config.serial) handed out after a change at #\(before.config)")
    report.check(
      config.ledger !== childConfigs,
      "\(what): config#\(config.serial) of a child's override, which this pod does not have")
    report.checkNotDisposed(config, before: before.disposals, what)
  }

  private static func check(
    _ service: Service, _ what: String, _ before: Before, serviceFloor: Bool
  ) {
    if serviceFloor {
      report.check(
        service.serial >= before.service,
        "\(what): service#\(service.serial) handed out after a change at #\(before.service)")
    }
    report.check(
      service.config.serial >= before.config,
      "\(what): service#\(service.serial) built from config#\(service.config.serial),"
        + " handed out after a change to the config at #\(before.config)")
    report.check(
      service.config.ledger !== childConfigs,
      "\(what): service#\(service.serial) built from config#\(service.config.serial) of a"
        + " child's override, which this pod does not have")
    report.checkNotDisposed(service, before: before.disposals, what)
  }

  /// One request in a child pod of its own, resolved twice, sometimes cleared, released.
  private static func serve(_ request: Int, in app: Pod, _ floors: Floors, clearing: Bool) {
    let overridden = request % 4 == 0
    let pod = Pod(
      parent: app, scopes: [RequestScope()],
      overrides: overridden ? [requestServiceOverride] : [])
    let what = "request \(request)"
    var before = Before(floors)
    let handler = pod.resolve(handlerProvider)
    checkHandler(handler, what, before, overridden: overridden)
    let id = pod.resolve(requestIDProvider)
    report.check(
      handler.id === id,
      "\(what): handler#\(handler.serial) was built from request-id#\(handler.id.serial),"
        + " the pod's is #\(id.serial)")

    if clearing {
      pod.clearCachedInstances(forScope: RequestScope())
      let next = pod.resolve(requestIDProvider)
      report.check(
        next.serial > id.serial,
        "\(what): request-id#\(next.serial) survived a clear of its scope (was #\(id.serial))")
      return
    }

    before = Before(floors)
    let again = pod.resolve(handlerProvider)
    checkHandler(again, what, before, overridden: overridden)
    report.check(
      again.serial >= handler.serial,
      "\(what): handler#\(again.serial) handed out after handler#\(handler.serial)")
    // Only the app's changes reach a request's handler; its request-id is its own.
    report.check(
      again.id === id,
      "\(what): the second handler#\(again.serial) was built from request-id#\(again.id.serial),"
        + " the pod's is #\(id.serial)")
  }

  private static func checkHandler(
    _ handler: Handler, _ what: String, _ before: Before, overridden: Bool
  ) {
    report.checkNotDisposed(handler, before: before.disposals, what)
    report.check(
      handler.config.serial >= before.config,
      "\(what): handler#\(handler.serial) built from config#\(handler.config.serial),"
        + " handed out after a change to the config at #\(before.config)")
    report.check(
      (handler.service.ledger === requestServices) == overridden,
      "\(what): handler#\(handler.serial) built from service#\(handler.service.serial) of"
        + " \(handler.service.ledger.name), " + (overridden ? "not the request's" : "not the app's")
    )
    check(handler.service, "\(what): handler's service", before, serviceFloor: !overridden)
  }

  /// The single writer: it knows what it installed, so it knows which changes discard.
  private struct Changer {
    let app: Pod
    let floors: Floors
    var isOverridden = false

    mutating func any(_ which: Int) {
      let serial = nextSerial()
      switch which {
      case 0:
        app.clearCachedInstances(forScope: ConfigScope())
        raise(to: serial)
      case 1:
        app.overrideProvider(configProvider) { _ in Config(overriddenConfigs) }
        isOverridden = true
        raise(to: serial)
      case 2:
        app.removeOverrideProvider(configProvider)
        // Removing an override that is not there discards nothing.
        if isOverridden { raise(to: serial) }
        isOverridden = false
      default:
        app.clearCachedInstance(of: serviceProvider)
        floors.service.raise(to: serial)
      }
    }

    /// A change to the config discards the service built from it.
    private func raise(to serial: Int) {
      floors.config.raise(to: serial)
      floors.service.raise(to: serial)
    }
  }
}
