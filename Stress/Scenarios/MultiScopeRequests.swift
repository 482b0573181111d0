import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Request pods owning one to three scopes, given in different orders (some twice), each caching
/// in several clearable scopes, clearing the first and caching in a third, with grandchildren,
/// on 16 threads, while one thread clears the app's scopes. A pod keeps its first scope's list
/// of instances inline and the others in a table: this moves instances in and out of both, a
/// scope emptied inline while another sits in the table, then cached in again.
enum MultiScopeRequests {
  static let report = Report(scenario: "multi-scope-requests")
  static let clients = Ledger("client", exact: true, report: report)
  static let handlers = Ledger("handler", exact: true, report: report)
  static let steps = Ledger("step", exact: true, report: report)
  static let phases = Ledger("phase", exact: true, report: report)
  static let leaves = Ledger("leaf", exact: true, report: report)
  static let extras = Ledger("extra", exact: false, report: report)
  static let flows = Ledger("flow", exact: false, report: report)
  static let flowUsers = Ledger("flow-user", exact: false, report: report)

  static let app = Locked<Pod?>(nil)

  struct Req: ProviderScope { var children: [any ProviderScope] { [Step(), Phase()] } }
  struct Step: ProviderScope { var children: [any ProviderScope] { [Leaf()] } }
  struct Phase: ProviderScope { var children: [any ProviderScope] { [Leaf()] } }
  struct Leaf: ProviderScope {}
  struct Extra: ProviderScope {}
  struct AppFlow: ProviderScope {}

  final class Node: Tracked, @unchecked Sendable {
    let from: [Node]
    init(_ ledger: Ledger, from: [Node] = []) {
      self.from = from
      super.init(ledger)
    }
  }

  static let client = Provider<Node>(name: "client", onDiscard: { $0.discarded() }) { _ in
    Node(clients)
  }
  static let flow = Provider<Node>(scope: AppFlow(), name: "flow", onDiscard: { $0.discarded() }) {
    Node(flows, from: [$0.resolve(client)])
  }
  static let handler = Provider<Node>(scope: Req(), name: "handler", onDiscard: { $0.discarded() })
  {
    Node(handlers, from: [$0.resolve(client)])
  }
  static let step = Provider<Node>(scope: Step(), name: "step", onDiscard: { $0.discarded() }) {
    Node(steps, from: [$0.resolve(handler)])
  }
  static let phase = Provider<Node>(scope: Phase(), name: "phase", onDiscard: { $0.discarded() }) {
    Node(phases, from: [$0.resolve(handler)])
  }
  static let leaf = Provider<Node>(scope: Leaf(), name: "leaf", onDiscard: { $0.discarded() }) {
    Node(leaves, from: [$0.resolve(step), $0.resolve(phase)])
  }
  static let extra = Provider<Node>(scope: Extra(), name: "extra", onDiscard: { $0.discarded() }) {
    Node(extras, from: [$0.resolve(handler)])
  }
  static let notes = Ledger("note", exact: true, report: report)
  static let note = Provider<Node>(scope: Extra(), name: "note", onDiscard: { $0.discarded() }) {
    _ in Node(notes)
  }
  static let handler2 = Provider<Node>(
    scope: Req(), name: "handler2", onDiscard: { $0.discarded() }
  ) {
    Node(handlers, from: [$0.resolve(client)])
  }
  static let flowUser = Provider<Node>(
    scope: Extra(), name: "flow-user",
    onDiscard: { node in
      node.discarded()
      _ = app.value?.resolve(client)
    }
  ) { Node(flowUsers, from: [$0.resolve(flow), $0.resolve(handler)]) }

  static let scenario = Scenario(
    name: "multi-scope-requests",
    summary: "request pods owning several scopes, cleared and refilled, on 16 threads",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    await raceAgainstAppInGlobal(
      app, for: duration,
      settling: [clients, handlers, steps, phases, leaves, extras, flows, flowUsers, notes]
    ) { race(in: $0, until: $1) }
  }

  static let scopeLists: [[any ProviderScope]] = [
    [Req()], [Req(), Extra()], [Extra(), Req()], [Step(), Extra(), Req()],
    [Leaf(), Req(), Phase(), Req()], [Req(), Req()], [Phase(), Req(), Step()],
  ]

  private static func race(in pod: Pod, until deadline: Deadline) {
    onThreads(16) { index in
      var operations = 0
      var request = index
      while !deadline.hasPassed {
        if index == 0 {
          pod.clearCachedInstances(forScope: AppFlow())
          _ = pod.resolve(flow)
          if request % 3 == 0 { pod.clearCachedInstances(forScope: Extra()) }
          request += 1
          operations += 2
          sched_yield()
        } else {
          operations += serve(request, in: pod)
          request += 15
        }
      }
      report.add(operations: operations)
    }
  }

  private static func serve(_ request: Int, in app: Pod) -> Int {
    let scopes = scopeLists[request % scopeLists.count]
    let ownsExtra = scopes.contains { $0 is Extra }
    let child = Pod(parent: app, scopes: scopes)
    var operations = 0
    if ownsExtra, request % 3 == 1 {
      // The inline scope (Extra) emptied while Req sits in the table, then Req cached in again.
      let n = child.resolve(note)
      let h = child.resolve(handler)
      child.clearCachedInstances(forScope: Extra())
      report.check(
        child.resolve(handler) === h, "request \(request): handler lost to Extra's clear")
      let h2 = child.resolve(handler2)
      let n2 = child.resolve(note)
      report.check(n2 !== n, "request \(request): note survived a clear of Extra")
      child.clearCachedInstances(forScope: Req())
      report.check(child.resolve(handler) !== h, "request \(request): handler survived Req's clear")
      report.check(
        child.resolve(handler2) !== h2, "request \(request): handler2 survived Req's clear")
      child.clearCachedInstances(forScope: Extra())
      report.check(child.resolve(note) !== n2, "request \(request): note survived Extra's clear")
      return 10
    }
    let h = child.resolve(handler)
    let s = child.resolve(step)
    let p = child.resolve(phase)
    report.check(child.resolve(handler) === h, "request \(request): handler not kept")
    report.check(
      s.from[0] === h && p.from[0] === h, "request \(request): step/phase not from handler")
    switch request % 4 {
    case 0:
      // First scope cleared, a third one cached in, then the parent scope.
      child.clearCachedInstances(forScope: Step())
      let e = child.resolve(extra)
      let l = child.resolve(leaf)
      report.check(l.from[0] !== s, "request \(request): leaf built from a cleared step")
      report.check(child.resolve(phase) === p, "request \(request): phase lost to a clear of Step")
      if ownsExtra {
        report.check(
          child.resolve(extra) === e || e.from[0] !== h, "request \(request): extra not kept")
      }
      child.clearCachedInstances(forScope: Req())
      let h2 = child.resolve(handler)
      report.check(h2 !== h, "request \(request): handler survived a clear of Req")
      report.check(child.resolve(extra) !== e, "request \(request): extra survived its handler")
      operations += 8
    case 1:
      let l = child.resolve(leaf)
      _ = child.resolve(flowUser)
      child.clearCachedInstances(forScope: Leaf())
      report.check(child.resolve(leaf) !== l, "request \(request): leaf survived a clear of Leaf")
      report.check(child.resolve(step) === s, "request \(request): step lost to a clear of Leaf")
      child.clearCachedInstances(forScope: Phase())
      report.check(child.resolve(phase) !== p, "request \(request): phase survived its clear")
      operations += 7
    case 2:
      let grandchild = Pod(parent: child, scopes: request % 8 == 2 ? [Leaf()] : [Phase(), Leaf()])
      let l = grandchild.resolve(leaf)
      report.check(l.from[0] === s, "request \(request): grandchild leaf not from child's step")
      child.clearCachedInstances(forScope: Step())
      report.check(grandchild.resolve(leaf) !== l, "request \(request): leaf survived step's clear")
      _ = grandchild.resolve(extra)
      child.clearCachedInstances(forScope: Req())
      operations += 6
    default:
      _ = child.resolve(extra)
      _ = child.resolve(flowUser)
      child.clearCachedInstance(of: handler)
      _ = child.resolve(leaf)
      child.clearCachedInstances(forScope: Extra())
      operations += 5
    }
    if request % 7 == 0 { sched_yield() }
    return operations
  }
}
