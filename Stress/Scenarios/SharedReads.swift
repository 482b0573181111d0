import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Cached reads without the lock, with far more threads than cores: readers hammer the app's
/// published instances of every kind, request threads make child pods, read through them
/// (publishing their links and their own instances) and release them, one thread makes
/// providers at run time of changing value types and drops them (so their addresses come back
/// for other types), one starts short-lived threads that read once and end (their reader
/// records are reused), one runs async builds that read through the app pod kept in a global,
/// and one changes things: clears, overrides and removes them. What is checked: nothing made
/// before a change is handed out after it returned, an instance built through the global pod
/// is discarded with what it read, every value reads back intact, and an instance that only
/// the pod held is freed before the clear that discarded it returns.
enum SharedReads {
  static let report = Report(scenario: "shared-reads")
  static let singles = Ledger("single", exact: false, report: report)
  static let sessions = Ledger("session", exact: false, report: report)
  static let derived = Ledger("derived", exact: false, report: report)
  static let boxed = Ledger("boxed", exact: false, report: report)
  static let members = Ledger("member", exact: false, report: report)
  static let requests = Ledger("request", exact: false, report: report)
  static let runtimes = Ledger("runtime", exact: false, report: report)
  static let sentinels = Ledger("sentinel", exact: false, report: report)
  static let reentrants = Ledger("reentrant", exact: false, report: report)

  /// Kept in a global, as apps keep theirs: builders, deinits and hooks reach it that way.
  static let app = Locked<Pod?>(nil)

  struct SessionScope: ProviderScope {}
  struct RequestScope: ProviderScope {}
  struct SentinelScope: ProviderScope {}

  final class Node: Tracked, @unchecked Sendable {
    let from: [Node]
    let check: Int
    init(_ ledger: Ledger, from: [Node] = []) {
      self.from = from
      check = from.count &* 7919
      super.init(ledger)
    }
    var isIntact: Bool { check == from.count &* 7919 && serial > 0 }
  }

  /// Resolves through the global pod when it goes: often inside the pod's own release of a
  /// published reference, after the lock.
  final class Reentrant: Tracked, @unchecked Sendable {
    init() { super.init(reentrants) }
    deinit {
      guard let app = app.value else { return }
      let single = app.resolve(singleProvider)
      report.check(single.isIntact, "single read from a deinit broken")
      report.check(app.resolve(sessionProvider).isIntact, "session read from a deinit broken")
    }
  }

  struct Pair: Sendable {
    let node: Node
    let text: String
    var isIntact: Bool { node.isIntact && text == "pair-\(node.serial)" }
  }

  protocol Intact: Sendable { var isIntact: Bool { get } }
  struct PairIntact: Intact {
    let pair: Pair
    var isIntact: Bool { pair.isIntact }
  }

  static let singleProvider = Provider(name: "single") { _ in Node(singles) }
  static let sessionProvider = Provider(
    scope: SessionScope(), name: "session", onDiscard: { $0.discarded() }
  ) { _ in Node(sessions) }
  /// Built from the session through the pod kept in a global, not through its context: the
  /// resolve must still be recorded, so a clear of the session discards it.
  static let viaGlobalProvider = Provider(name: "via-global") { _ in
    Node(derived, from: [app.value!.resolve(sessionProvider)])
  }
  static let pairProvider = Provider(scope: SessionScope(), name: "pair") { pod in
    let node = Node(boxed, from: [pod.resolve(sessionProvider)])
    return Pair(node: node, text: "pair-\(node.serial)")
  }
  static let optionalProvider = Provider<Node?>(scope: SessionScope(), name: "optional") { pod in
    pod.resolve(sessionProvider).serial % 2 == 0
      ? nil : Node(boxed, from: [pod.resolve(sessionProvider)])
  }
  static let existentialProvider = Provider<any Intact>(scope: SessionScope(), name: "existential")
  {
    pod in
    let node = Node(boxed, from: [pod.resolve(sessionProvider)])
    return PairIntact(pair: Pair(node: node, text: "pair-\(node.serial)"))
  }
  static let closureProvider = Provider<@Sendable () -> Int>(scope: SessionScope(), name: "closure")
  {
    pod in
    let node = Node(boxed, from: [pod.resolve(sessionProvider)])
    return { node.isIntact ? node.from[0].serial : -1 }
  }
  static let memberProvider = ProviderFamily(
    scope: SessionScope(), name: "member", onDiscard: { $0.discarded() }
  ) { (pod, _: Int) in Node(members, from: [pod.resolve(sessionProvider)]) }
  static let reentrantProvider = Provider(scope: SessionScope(), name: "reentrant") { _ in
    Reentrant()
  }
  static let requestProvider = Provider(
    scope: RequestScope(), name: "request", onDiscard: { $0.discarded() }
  ) { pod in
    Node(requests, from: [pod.resolve(singleProvider), pod.resolve(sessionProvider)])
  }
  static let sentinelProvider = Provider(scope: SentinelScope(), name: "sentinel") { _ in
    Node(sentinels)
  }
  /// A singleton, so that only the recorded dependency discards it.
  static let asyncViaGlobalProvider = AsyncProvider(name: "async-via-global") { _ in
    // A sync read through the global pod, inside an async build: a dependency of it.
    let session = app.value!.resolve(sessionProvider)
    await Task.yield()
    return Node(derived, from: [session])
  }

  static let scenario = Scenario(
    name: "shared-reads",
    summary:
      "12 threads of lock-free cached reads against clears, overrides, pods and providers made and dropped",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration)
    do {
      let pod = Pod()
      app.withLock { $0 = pod }
      let floor = Floor()
      onThreads(12) { index in
        var random = FastRandom(seed: index + 101)
        var operations = 0
        var overridden = false
        while !deadline.hasPassed {
          switch index {
          case 0: operations += change(pod, floor, random.next(8), overridden: &overridden)
          case 1, 2: operations += serveRequest(pod, floor, &random)
          case 3: operations += makeAndDropProviders(pod, &random)
          case 4: operations += shortLivedReaders(pod, floor)
          case 5: operations += asyncReads(pod, floor)
          default: operations += readBatch(pod, floor, &random)
          }
        }
        report.add(operations: operations)
      }
      app.withLock { $0 = nil }
    }
    await settle([
      singles, sessions, derived, boxed, members, requests, runtimes, sentinels, reentrants,
    ])
  }

  // MARK: Readers

  /// 64 reads against one floor read: reading the floor takes a lock, and taking it on every
  /// read would serialise the readers the scenario is racing.
  private static func readBatch(_ pod: Pod, _ floor: Floor, _ random: inout FastRandom) -> Int {
    let oldest = floor.current
    for _ in 0..<64 { read(pod, oldest, random.next(10)) }
    return 64
  }

  private static func read(_ pod: Pod, _ oldest: Int, _ which: Int) {
    switch which {
    case 0:
      report.check(pod.resolve(singleProvider).isIntact, "single read broken")
    case 1:
      let session = pod.resolve(sessionProvider)
      report.check(session.isIntact, "session read broken")
      report.check(
        session.serial >= oldest, "session#\(session.serial) read after a change at #\(oldest)")
    case 2:
      let node = pod.resolve(viaGlobalProvider)
      report.check(node.isIntact, "via-global read broken")
      report.check(
        node.from[0].serial >= oldest,
        "via-global#\(node.serial) built through the global pod from session#\(node.from[0].serial), read after a change at #\(oldest)"
      )
    case 3:
      let pair = pod.resolve(pairProvider)
      report.check(pair.isIntact, "pair read broken")
      report.check(pair.node.from[0].serial >= oldest, "pair built from a stale session")
    case 4:
      if let node = pod.resolve(optionalProvider) {
        report.check(
          node.isIntact && node.from[0].serial >= oldest, "optional read broken or stale")
      }
    case 5:
      report.check(pod.resolve(existentialProvider).isIntact, "existential read broken")
    case 6:
      let from = pod.resolve(closureProvider)()
      report.check(from >= oldest, "closure read broken or stale: \(from) < \(oldest)")
    case 7:
      let member = pod.resolve(memberProvider(Int(truncatingIfNeeded: oldest) & 3))
      report.check(
        member.isIntact && member.from[0].serial >= oldest, "member read broken or stale")
    case 8:
      report.check(pod.resolve(reentrantProvider).serial > 0, "reentrant read broken")
    default:
      let session = pod.resolve(sessionProvider)
      report.check(session.serial >= oldest, "second session read stale")
    }
  }

  // MARK: The writer

  /// Clears, overrides and their removal; after each that discards the session, the floor is
  /// raised to the first serial made after the change began. Removing an override that is not
  /// there discards nothing, so `overridden` tracks it.
  private static func change(
    _ pod: Pod, _ floor: Floor, _ which: Int, overridden: inout Bool
  ) -> Int {
    let serial = nextSerial()
    switch which {
    case 0, 1, 2:
      pod.clearCachedInstances(forScope: SessionScope())
    case 3:
      pod.overrideProvider(sessionProvider) { _ in Node(sessions) }
      overridden = true
    case 4:
      pod.removeOverrideProvider(sessionProvider)
      defer { overridden = false }
      guard overridden else { return 1 }
    case 5:
      pod.overrideProvider(singleProvider) { _ in Node(singles) }
      pod.clearCachedInstances(forScope: SessionScope())
    case 6:
      pod.removeOverrideProvider(singleProvider)
      pod.clearCachedInstances(forScope: SessionScope())
    default:
      checkFreedOnClear(pod)
      return 1
    }
    floor.raise(to: serial)
    return 1
  }

  /// An instance only the pod held, read enough to be published, is freed before the clear
  /// that discards it returns, however many threads are reading other instances meanwhile;
  /// and likewise when its child pod goes.
  private static func checkFreedOnClear(_ pod: Pod) {
    weak var old: Node?
    do {
      _ = pod.resolve(sentinelProvider)
      old = pod.resolve(sentinelProvider)
      _ = pod.resolve(sentinelProvider)
    }
    pod.clearCachedInstances(forScope: SentinelScope())
    report.check(old == nil, "a cleared sentinel was still alive when the clear returned")
    weak var owned: Node?
    do {
      let child = Pod(parent: pod, scopes: [SentinelScope()])
      _ = child.resolve(sentinelProvider)
      owned = child.resolve(sentinelProvider)
      _ = child.resolve(sentinelProvider)
    }
    report.check(owned == nil, "a child's sentinel was still alive after the child went")
  }

  // MARK: Requests

  private static func serveRequest(_ app: Pod, _ floor: Floor, _ random: inout FastRandom) -> Int {
    let oldest = floor.current
    let child = Pod(parent: app, scopes: [RequestScope()])
    var operations = 0
    for _ in 0..<(1 + random.next(4)) {
      let request = child.resolve(requestProvider)
      report.check(request.isIntact, "request read broken")
      report.check(
        request.from[1].serial >= oldest,
        "request#\(request.serial) built from session#\(request.from[1].serial) after a change at #\(oldest)"
      )
      report.check(child.resolve(singleProvider).isIntact, "single through a child broken")
      let session = child.resolve(sessionProvider)
      report.check(session.serial >= oldest, "session through a child stale")
      let member = child.resolve(memberProvider(random.next(4)))
      report.check(member.isIntact && member.from[0].serial >= oldest, "member through a child")
      read(child, oldest, random.next(10))
      operations += 5
    }
    if random.next(3) == 0 {
      let before = child.resolve(requestProvider)
      child.clearCachedInstances(forScope: RequestScope())
      report.check(child.resolve(requestProvider) !== before, "a child's clear left its request")
      operations += 2
    }
    return operations
  }

  // MARK: Providers made at run time

  final class RuntimeObject: Tracked, @unchecked Sendable {
    let text: String
    init(_ text: String) {
      self.text = text
      super.init(runtimes)
    }
  }

  /// Providers of different value types made, read until published, and dropped; the pod
  /// sweeps their slots, and their addresses come back for the next ones.
  private static func makeAndDropProviders(_ app: Pod, _ random: inout FastRandom) -> Int {
    let child = Pod(parent: app)
    var operations = 0
    for round in 0..<32 {
      let tag = random.next(1_000_000)
      let through = round % 2 == 0 ? app : child
      switch random.next(4) {
      case 0:
        let provider = Provider(scope: SessionScope()) { _ in RuntimeObject("object-\(tag)") }
        for _ in 0..<3 {
          let read = through.resolve(provider)
          report.check(read.text == "object-\(tag)", "run-time object read \(read.text)")
        }
      case 1:
        let provider = Provider(scope: SessionScope()) { _ in (tag, "tuple-\(tag)") }
        for _ in 0..<3 {
          let read = through.resolve(provider)
          report.check(read == (tag, "tuple-\(tag)"), "run-time tuple read \(read)")
        }
      case 2:
        let provider = Provider<[Int]?>(scope: SessionScope()) { _ in [tag, tag + 1] }
        for _ in 0..<3 {
          let read = through.resolve(provider)
          report.check(read == [tag, tag + 1], "run-time array read \(String(describing: read))")
        }
      default:
        let provider = Provider(scope: SentinelScope()) { _ in RuntimeObject("sentinel-\(tag)") }
        for _ in 0..<3 {
          let read = through.resolve(provider)
          report.check(read.text == "sentinel-\(tag)", "run-time sentinel read \(read.text)")
        }
      }
      operations += 3
    }
    return operations
  }

  // MARK: Threads that end

  /// Short-lived threads that read once, each with a reader record of its own or one a thread
  /// that ended left behind.
  private static func shortLivedReaders(_ pod: Pod, _ floor: Floor) -> Int {
    let oldest = floor.current
    onThreads(4) { index in
      read(pod, oldest, index)
      read(pod, oldest, index + 4)
      read(pod, oldest, 1)
    }
    return 12
  }

  // MARK: Async

  /// Async builds that read through the global pod, while this task also reads through it.
  private static func asyncReads(_ pod: Pod, _ floor: Floor) -> Int {
    let finished = DispatchLikeSemaphore()
    let oldest = floor.current
    Task.detached {
      await withTaskGroup(of: Void.self) { group in
        for index in 0..<4 {
          group.addTask {
            if index == 0 {
              let node = try? await pod.resolve(asyncViaGlobalProvider)
              if let node {
                report.check(
                  node.from[0].serial >= oldest,
                  "async-via-global#\(node.serial) built from session#\(node.from[0].serial) after a change at #\(oldest)"
                )
              }
            } else {
              read(pod, oldest, index)
            }
          }
        }
      }
      finished.signal()
    }
    finished.wait()
    return 4
  }
}

/// A semaphore without Dispatch or Foundation, for waiting on a task from a thread.
final class DispatchLikeSemaphore: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var signalled = false

  init() {
    pthread_mutex_init(mutex, nil)
    pthread_cond_init(condition, nil)
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  func signal() {
    pthread_mutex_lock(mutex)
    signalled = true
    pthread_cond_signal(condition)
    pthread_mutex_unlock(mutex)
  }

  func wait() {
    pthread_mutex_lock(mutex)
    while !signalled { pthread_cond_wait(condition, mutex) }
    pthread_mutex_unlock(mutex)
  }
}
