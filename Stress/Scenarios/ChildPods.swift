import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A server's shape: a child pod per request, made, used on one thread and released, some
/// with overrides of their own, some with a grandchild, while another thread clears a scope
/// of the app's that the requests build from. Hooks re-enter through the app pod kept in a
/// global. Whatever a child owned is disposed of exactly once when it goes.
enum ChildPods {
  static let report = Report(scenario: "child-pods")
  static let clients = Ledger("client", exact: true, report: report)
  static let childClients = Ledger("child-client", exact: true, report: report)
  static let handlers = Ledger("handler", exact: true, report: report)
  static let steps = Ledger("step", exact: true, report: report)
  static let items = Ledger("item", exact: true, report: report)
  static let sessions = Ledger("session", exact: false, report: report)
  static let audits = Ledger("audit", exact: false, report: report)
  static let summaries = Ledger("summary", exact: false, report: report)

  /// The app's pod, kept in a global as apps keep theirs; nil once the run is over, so that
  /// the leak check covers the app's singletons too.
  static let app = Locked<Pod?>(nil)

  struct RequestScope: ProviderScope {
    var children: [any ProviderScope] { [StepScope()] }
  }
  struct StepScope: ProviderScope {}
  struct SessionScope: ProviderScope {}
  struct SummaryScope: ProviderScope {}

  final class Node: Tracked, @unchecked Sendable {
    let from: [Node]
    init(_ ledger: Ledger, from: [Node] = []) {
      self.from = from
      super.init(ledger)
    }
  }

  static let requestIDProvider = Provider(scope: AlwaysCreateNewScope(), name: "request-id") {
    _ in nextSerial()
  }

  static let clientProvider = Provider<Node>(name: "client", onDiscard: { $0.discarded() }) { _ in
    Node(clients)
  }

  static let sessionProvider = Provider<Node>(
    scope: SessionScope(), name: "session", onDiscard: { $0.discarded() }
  ) { _ in Node(sessions) }

  static let summaryProvider = Provider<Node>(
    scope: SummaryScope(), name: "summary", onDiscard: { $0.discarded() }
  ) { pod in Node(summaries, from: [pod.resolve(sessionProvider)]) }

  static let handlerProvider = Provider<Node>(
    scope: RequestScope(), name: "handler",
    onDiscard: { handler in
      handler.discarded()
      // A hook that uses the app through the global while the child goes away.
      _ = app.value?.resolve(clientProvider)
    }
  ) { pod in
    _ = pod.resolve(requestIDProvider)
    return Node(handlers, from: [pod.resolve(clientProvider)])
  }

  static let auditProvider = Provider<Node>(
    scope: RequestScope(), name: "audit",
    onDiscard: { audit in
      audit.discarded()
      app.value?.clearCachedInstances(forScope: SummaryScope())
    }
  ) { pod in Node(audits, from: [pod.resolve(sessionProvider), pod.resolve(handlerProvider)]) }

  static let stepProvider = Provider<Node>(
    scope: StepScope(), name: "step", onDiscard: { $0.discarded() }
  ) { pod in Node(steps, from: [pod.resolve(handlerProvider)]) }

  static let itemProvider = ProviderFamily<Int, Node>(
    scope: RequestScope(), name: "item", onDiscard: { $0.discarded() }
  ) { (pod, _: Int) in Node(items, from: [pod.resolve(handlerProvider)]) }

  static let scenario = Scenario(
    name: "child-pods",
    summary: "child pods per request, made and released, against clears in their parent",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    await raceAgainstAppInGlobal(
      app, for: duration,
      settling: [clients, childClients, handlers, steps, items, sessions, audits, summaries]
    ) { race(in: $0, until: $1) }
  }

  private static func race(in pod: Pod, until deadline: Deadline) {
    let appClient = pod.resolve(clientProvider).serial
    onThreads(4) { index in
      var operations = 0
      var request = index
      while !deadline.hasPassed {
        if index == 3 {
          pod.clearCachedInstances(forScope: SessionScope())
          _ = pod.resolve(summaryProvider)
          operations += 2
        } else {
          operations += serve(request, in: pod, appClient: appClient)
          request += 3
        }
      }
      report.add(operations: operations)
    }
  }

  /// One request in a child pod of its own; returns how many operations it made.
  private static func serve(_ request: Int, in app: Pod, appClient: Int) -> Int {
    let overridden = request % 4 == 0
    let child = Pod(
      parent: app, scopes: [RequestScope()],
      overrides: overridden ? [clientProvider.override { _ in Node(childClients) }] : [])
    let handler = child.resolve(handlerProvider)
    let client = handler.from[0]
    report.check(
      overridden ? client.ledger === childClients : client.serial == appClient,
      "request \(request): the handler was built from client#\(client.serial), "
        + (overridden ? "not the child's override" : "not the app's #\(appClient)"))
    report.check(
      child.resolve(handlerProvider) === handler,
      "request \(request): the child did not keep its handler")
    _ = child.resolve(auditProvider)
    _ = child.resolve(summaryProvider)
    _ = child.resolve(itemProvider(request % 5))
    var operations = 6
    if request % 3 == 0 {
      let step = Pod(parent: child, scopes: [StepScope()])
      report.check(
        step.resolve(stepProvider).from[0] === handler,
        "request \(request): the grandchild's step was not built from the child's handler")
      child.clearCachedInstances(forScope: RequestScope())
      let next = child.resolve(handlerProvider)
      report.check(
        next.serial > handler.serial,
        "request \(request): handler#\(next.serial) survived a clear of its scope")
      operations += 3
    }
    if request % 7 == 0 { sched_yield() }
    return operations
  }
}
