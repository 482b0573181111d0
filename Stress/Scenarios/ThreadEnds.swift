import Dispatch
import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Threads that end holding idle frames: short-lived threads run lock-free always-new chains
/// (so they keep spare frames), in the app's pod kept in a global and in a pod of their own
/// that goes before they do, and end; some leave a value in thread-specific storage whose
/// deinit resolves through the global pod, and through a request pod it makes of it, while the
/// thread is being torn down, after or before the pod's own record of the thread is freed. Dispatch's and the task pool's threads do the
/// same work and live on. Another thread flips the root's override and clears a scope. Each
/// thread also makes a request pod of the app's, built from the app's config, and hands it on:
/// a later thread lets go of it, after the thread that made it (and copied its first tables
/// from that thread's own) has ended.
enum ThreadEnds {
  static let report = Report(scenario: "thread-ends")
  static let configs = Ledger("config", exact: false, report: report)
  static let farewells = Ledger("farewell", exact: false, report: report)
  static let sessions = Ledger("session", exact: false, report: report)

  struct ConfigScope: ProviderScope {}
  struct RequestScope: ProviderScope {}

  final class Config: Tracked, @unchecked Sendable {}
  final class Session: Tracked, @unchecked Sendable {
    let config: Config
    init(config: Config) {
      self.config = config
      super.init(sessions)
    }
  }

  /// Request pods whose threads may have ended; the oldest goes when a new one comes.
  static let handedOn = Locked<[Pod]>([])
  static let session = Provider(
    scope: RequestScope(), name: "session", onDiscard: { $0.discarded() }
  ) { context in Session(config: context.resolve(config)) }

  /// Left in thread-specific storage; resolves through the global pod when the thread ends.
  final class Farewell: Tracked, @unchecked Sendable {
    init() { super.init(farewells) }
    deinit {
      guard let app = app.value else { return }
      let value = app.resolve(chain)
      report.check(value == 5, "chain resolved to \(value) while a thread ended, not 5")
      _ = app.resolve(config)
      // A request pod made once the pod's record of the thread may be gone: its first tables
      // come from empty ones of a record made again for the rest of the teardown.
      let request = Pod(parent: app, scopes: [RequestScope()])
      _ = request.resolve(session)
    }
  }

  static let app = Locked<Pod?>(nil)

  static let config = Provider(
    scope: ConfigScope(), name: "config", onDiscard: { $0.discarded() }
  ) { _ in Config(configs) }
  static let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
  static let chain = Provider(scope: AlwaysCreateNewScope(), name: "chain") { context in
    context.resolve(link4)
  }
  static let link4 = Provider(scope: AlwaysCreateNewScope(), name: "link4") { context in
    context.resolve(link3) + 1
  }
  static let link3 = Provider(scope: AlwaysCreateNewScope(), name: "link3") { context in
    context.resolve(link2) + 1
  }
  static let link2 = Provider(scope: AlwaysCreateNewScope(), name: "link2") { context in
    context.resolve(leaf) + context.resolve(leaf) + 1
  }

  /// A key whose destructor releases a `Farewell`.
  nonisolated(unsafe) static var farewellKey = pthread_key_t()
  static let keyMade: Bool = {
    pthread_key_create(&farewellKey) { raw in
      guard let raw else { return }
      Unmanaged<Farewell>.fromOpaque(raw).release()
    } == 0
  }()

  static let scenario = Scenario(
    name: "thread-ends",
    summary: "threads with spare frames end, some resolving from their teardown",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    precondition(keyMade)
    app.withLock { $0 = Pod() }
    let deadline = Deadline(after: duration)
    onThreads(4) { index in
      var operations = 0
      var random = FastRandom(seed: index + 41)
      while !deadline.hasPassed {
        switch index {
        case 0:
          change(random.next(3))
          operations += 1
        case 1:
          // A round of short-lived threads.
          onThreads(3) { _ in work(leaveFarewell: true) }
          operations += 3
        case 2:
          let group = DispatchGroup()
          for _ in 0..<4 {
            DispatchQueue.global().async(group: group) { work(leaveFarewell: false) }
          }
          group.wait()
          operations += 4
        default:
          let done = DispatchSemaphore(value: 0)
          Task.detached {
            await withTaskGroup(of: Void.self) { group in
              for _ in 0..<4 { group.addTask { work(leaveFarewell: false) } }
            }
            done.signal()
          }
          done.wait()
          operations += 4
        }
      }
      report.add(operations: operations)
    }
    handedOn.withLock { $0 = [] }
    app.withLock { $0 = nil }
    await settle([configs, farewells, sessions])
  }

  private static func change(_ which: Int) {
    guard let app = app.value else { return }
    switch which {
    case 0: app.overrideProvider(leaf) { _ in 1 }
    case 1: app.removeOverrideProvider(leaf)
    default: app.clearCachedInstances(forScope: ConfigScope())
    }
  }

  private static func work(leaveFarewell: Bool) {
    if let app = app.value {
      let value = app.resolve(chain)
      report.check(value == 5, "chain resolved to \(value), not 5")
      _ = app.resolve(config)
      // A clear of the config scope may discard a session at any time, so what is checked
      // is the sessions' ledger: each disposed of once, and every one by the end.
      let request = Pod(parent: app, scopes: [RequestScope()])
      _ = request.resolve(session)
      // Let go of by whichever thread hands on the ninth pod after it, usually once this
      // thread has ended; it resolves through the pod first.
      let oldest = handedOn.withLock { pods -> Pod? in
        pods.append(request)
        return pods.count > 8 ? pods.removeFirst() : nil
      }
      if let oldest { _ = oldest.resolve(session) }
    }
    do {
      // A pod of the thread's own, gone before the thread is: its frames stay as spares.
      let own = Pod()
      let value = own.resolve(chain)
      report.check(value == 5, "chain in a pod of its own resolved to \(value), not 5")
    }
    if leaveFarewell {
      pthread_setspecific(farewellKey, Unmanaged.passRetained(Farewell()).toOpaque())
    }
  }
}
