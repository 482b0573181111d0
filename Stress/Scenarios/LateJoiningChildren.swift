import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Child pods that join their tree late: a window's pod and its requests' pods are made
/// before any of them is used, some requests are handed to another thread for their first
/// resolve, the window itself is used first or last or never, and all of them go away in a
/// random order (the head, middle or tail of their parent's list of children) while other
/// threads clear the app's scopes. The app's pod is kept in a global, which the hooks use.
/// Whatever a pod owned is disposed of exactly once, and the heap per window (a window and
/// three requests, made, used and let go of on one thread) stays flat: a record that its
/// siblings kept would show there.
enum LateJoiningChildren {
  static let report = Report(scenario: "late-joining-children")
  static let handlers = Ledger("handler", exact: true, report: report)
  static let windows = Ledger("window", exact: true, report: report)
  static let sessions = Ledger("session", exact: false, report: report)
  static let clients = Ledger("client", exact: false, report: report)

  static let app = Locked<Pod?>(nil)
  /// Requests made on one thread, for another to use first and let go of.
  static let handedOver = Locked<[Pod]>([])

  struct WindowScope: ProviderScope {}
  struct RequestScope: ProviderScope {}
  struct SessionScope: ProviderScope {}

  final class Node: Tracked, @unchecked Sendable {
    let from: [Node]
    init(_ ledger: Ledger, from: [Node] = []) {
      self.from = from
      super.init(ledger)
    }
  }

  static let sessionProvider = Provider<Node>(
    scope: SessionScope(), name: "session", onDiscard: { $0.discarded() }
  ) { _ in Node(sessions) }

  static let windowProvider = Provider<Node>(
    scope: WindowScope(), name: "window", onDiscard: { $0.discarded() }
  ) { pod in Node(windows, from: [pod.resolve(clientProvider)]) }

  /// The app's, never cleared, so that every window and handler built is cached.
  static let clientProvider = Provider<Node>(name: "client") { _ in Node(clients) }

  static let handlerProvider = Provider<Node>(
    scope: RequestScope(), name: "handler",
    onDiscard: { handler in
      handler.discarded()
      // A hook that uses the app through the global while the request goes away.
      _ = app.value?.resolve(sessionProvider)
    }
  ) { pod in Node(handlers, from: [pod.resolve(windowProvider)]) }

  static let scenario = Scenario(
    name: "late-joining-children",
    summary: "windows and requests made before use, used on other threads, let go of in any order",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration / 2)
    do {
      let pod = Pod()
      app.withLock { $0 = pod }
      race(in: pod, until: deadline)
      handedOver.withLock { $0 = [] }
      let growth = HeapGrowth.measure(until: Deadline(after: duration / 2)) {
        var rng = SystemRandomNumberGenerator()
        serveWindow(in: pod, rng: &rng, handOver: false)
      }
      growth.check(in: report, what: "window")
      app.withLock { $0 = nil }
    }
    await settle([handlers, windows, sessions, clients])
  }

  private static func race(in pod: Pod, until deadline: Deadline) {
    onThreads(8) { index in
      var operations = 0
      var rng = SystemRandomNumberGenerator()
      while !deadline.hasPassed {
        if index == 7 {
          // Walks the app's children while they join and leave; reaches nothing they own.
          pod.clearCachedInstances(forScope: SessionScope())
          _ = pod.resolve(sessionProvider)
          operations += 2
          sched_yield()
          continue
        }
        if index >= 5 {
          // Takes a request another thread made and has let go of, and uses it first here.
          let request = handedOver.withLock { $0.popLast() }
          if let request {
            _ = request.resolve(handlerProvider)
            operations += 1
          } else {
            sched_yield()
          }
          continue
        }
        operations += serveWindow(in: pod, rng: &rng, handOver: true)
      }
      report.add(operations: operations)
    }
  }

  /// A window with three requests, all made before any is used; returns the operations made.
  @discardableResult
  private static func serveWindow(
    in app: Pod, rng: inout some RandomNumberGenerator, handOver: Bool
  ) -> Int {
    var window: Pod? = Pod(parent: app, scopes: [WindowScope()])
    var requests: [Pod?] = (0..<3).map { _ in Pod(parent: window!, scopes: [RequestScope()]) }
    let windowFirst = Bool.random(using: &rng)
    var operations = 0
    if windowFirst { _ = window!.resolve(windowProvider) }
    if handOver, Int.random(in: 0..<4, using: &rng) == 0 {
      let request = requests.removeLast()!
      handedOver.withLock { $0.append(request) }
    }
    for request in requests where Bool.random(using: &rng) {
      let handler = request!.resolve(handlerProvider)
      report.check(
        handler.from[0] === window!.resolve(windowProvider),
        "a request's handler was not built from its window's instance")
      operations += 2
    }
    // Let go of in a random order; the window sometimes before its requests, which keep it.
    while !requests.isEmpty {
      if window != nil, Int.random(in: 0..<4, using: &rng) == 0 { window = nil }
      requests.remove(at: Int.random(in: 0..<requests.count, using: &rng))
      operations += 1
    }
    window = nil
    return operations
  }
}
