import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Exactly one build per pod with more threads than cores: in each round, eight threads start
/// at once and resolve uncached providers in orders of their own: a singleton through the app's
/// pod, through a child pod of each thread's own and through two request pods (one of which
/// overrides it), a request-scoped handler built from it in each request pod, and a family's
/// members. Nothing changes during a round, so every builder ran once per pod that caches its
/// instance, every caller got that instance, and every instance is disposed of once.
enum CrowdedBuilds {
  static let report = Report(scenario: "crowded-builds")
  static let shareds = Ledger("shared", exact: true, report: report)
  static let overriddenShareds = Ledger("overridden-shared", exact: true, report: report)
  static let handlers = Ledger("handler", exact: true, report: report)
  static let members = Ledger("member", exact: true, report: report)

  struct RoundScope: ProviderScope {}
  struct RequestScope: ProviderScope {}

  final class Instance: Tracked, @unchecked Sendable {
    let from: Instance?
    init(_ ledger: Ledger, from: Instance? = nil) {
      self.from = from
      super.init(ledger)
    }
  }

  /// Builder runs per provider since the round began.
  static let builds = Locked([String: Int]())

  /// Counts the build and lets the other threads arrive while it runs.
  static func building(_ name: String) {
    builds.withLock { $0[name, default: 0] += 1 }
    sched_yield()
  }

  static let sharedProvider = Provider(
    scope: RoundScope(), name: "shared", onDiscard: { $0.discarded() }
  ) { _ in
    building("shared")
    return Instance(shareds)
  }

  static let sharedOverride = sharedProvider.override { _ in
    building("overridden-shared")
    return Instance(overriddenShareds)
  }

  static let handlerProvider = Provider(
    scope: RequestScope(), name: "handler", onDiscard: { $0.discarded() }
  ) { pod in
    let shared = pod.resolve(sharedProvider)
    building("handler")
    return Instance(handlers, from: shared)
  }

  static let memberProvider = ProviderFamily(
    scope: RoundScope(), name: "member", onDiscard: { $0.discarded() }
  ) { (_, index: Int) in
    building("member(\(index))")
    return Instance(members)
  }

  static let threads = 8
  static let memberCount = 3

  static let scenario = Scenario(
    name: "crowded-builds",
    summary:
      "rounds of eight threads resolving through app, child and request pods: one build per pod",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration)
    var operations = 0
    do {
      // Unobserved and observed pods take different paths through a resolve.
      let apps = [Pod(), Pod(observer: ObservedClear.QuietObserver())]
      var round = 0
      while !deadline.hasPassed {
        operations += play(round: round, in: apps[round % 2])
        round += 1
      }
    }
    report.add(operations: operations)
    await settle([shareds, overriddenShareds, handlers, members])
  }

  /// What one thread was handed, by where it asked.
  private struct Seen {
    var sharedThroughApp: Instance?
    var sharedThroughChild: Instance?
    var sharedThroughRequest: Instance?
    var handler: Instance?
    var member: Instance?
  }

  /// One round; returns how many resolves it made.
  private static func play(round: Int, in app: Pod) -> Int {
    app.clearCachedInstances(forScope: RoundScope())
    builds.withLock { $0 = [:] }
    let requests = [
      Pod(parent: app, scopes: [RequestScope()]),
      Pod(parent: app, scopes: [RequestScope()], overrides: [sharedOverride]),
    ]
    let seen = Locked([Seen](repeating: Seen(), count: threads))
    let startLine = StartLine(count: threads)
    onThreads(threads) { index in
      let child = Pod(parent: app)
      let request = requests[index % 2]
      var mine = Seen()
      startLine.arriveAndWait()
      // Each thread asks in an order of its own, so that every pair of resolves races.
      var order = [0, 1, 2, 3, 4]
      var random = FastRandom(seed: round &* 31 &+ index &+ 1)
      for position in order.indices.reversed() {
        order.swapAt(position, random.next(position + 1))
      }
      for step in order {
        switch step {
        case 0: mine.sharedThroughApp = app.resolve(sharedProvider)
        case 1: mine.sharedThroughChild = child.resolve(sharedProvider)
        case 2: mine.sharedThroughRequest = request.resolve(sharedProvider)
        case 3: mine.handler = request.resolve(handlerProvider)
        default: mine.member = app.resolve(memberProvider(index % memberCount))
        }
      }
      seen.withLock { $0[index] = mine }
    }
    check(round: round, seen.value)
    return threads * 5
  }

  private static func check(round: Int, _ seen: [Seen]) {
    let builds = builds.value
    func built(_ name: String, _ expected: Int) {
      report.check(
        builds[name, default: 0] == expected,
        "round \(round): \(name) was built \(builds[name, default: 0]) times, not \(expected)")
    }
    built("shared", 1)
    built("overridden-shared", 1)
    built("handler", 2)
    for index in 0..<memberCount { built("member(\(index))", 1) }

    func same(_ instances: [Instance?], _ what: String) {
      let serials = Set(instances.map { $0?.serial ?? -1 })
      report.check(
        serials.count == 1,
        "round \(round): \(what) resolved at once gave \(serials.count) instances: \(serials.sorted())"
      )
    }
    let plain = seen.indices.filter { $0 % 2 == 0 }.map { seen[$0] }
    let overriding = seen.indices.filter { $0 % 2 == 1 }.map { seen[$0] }
    same(
      seen.map(\.sharedThroughApp) + seen.map(\.sharedThroughChild)
        + plain.map(\.sharedThroughRequest),
      "shared (through the app's pod, child pods and the plain request pod)")
    same(overriding.map(\.sharedThroughRequest), "shared through the overriding request pod")
    same(plain.map(\.handler), "handler in the plain request pod")
    same(overriding.map(\.handler), "handler in the overriding request pod")
    for index in 0..<memberCount {
      same(
        seen.indices.filter { $0 % memberCount == index }.map { seen[$0].member },
        "member(\(index))")
    }
    if let handler = plain.first?.handler, let shared = plain.first?.sharedThroughApp {
      report.check(
        handler.from === shared,
        "round \(round): the plain request's handler was built from shared#"
          + "\(handler.from?.serial ?? -1), not the app's #\(shared.serial)")
    }
    if let handler = overriding.first?.handler, let shared = overriding.first?.sharedThroughRequest
    {
      report.check(
        handler.from === shared && shared.ledger === overriddenShareds,
        "round \(round): the overriding request's handler was built from shared#"
          + "\(handler.from?.serial ?? -1) of \(handler.from?.ledger.name ?? "nothing"),"
          + " not its own override's")
    }
  }
}
