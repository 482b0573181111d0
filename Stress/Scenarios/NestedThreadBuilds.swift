import ProviderPod

/// Always-new chains nested in caching builds and caching builds nested in always-new chains,
/// on several threads, while another thread clears the caching builds' scope (which
/// invalidates them as they run) and flips an override on the root (which closes the lock-free
/// path for nested builds mid-chain). The race behind the last fix: a caching build's phase
/// written by the clearing thread while an always-new build nested in it starts.
enum NestedThreadBuilds {
  static let report = Report(scenario: "nested-thread-builds")
  static let scopedNodes = Ledger("scoped", exact: false, report: report)
  static let leaves = Ledger("leaf", exact: false, report: report)

  struct OuterScope: ProviderScope {
    var children: [any ProviderScope] { [InnerScope()] }
  }
  struct InnerScope: ProviderScope {}

  final class Node: Tracked, @unchecked Sendable {
    let sum: Int
    init(_ ledger: Ledger, sum: Int) {
      self.sum = sum
      super.init(ledger)
    }
  }

  /// Kept in a global: builders resolve through it too, as apps' builders do.
  static let pod = Locked<Pod?>(nil)

  static let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
  static let twig = Provider(scope: AlwaysCreateNewScope(), name: "twig") { context in
    context.resolve(leaf) + 10
  }
  /// A caching build whose builder runs always-new chains, through its context and through
  /// the global pod.
  static let inner = Provider(scope: InnerScope(), name: "inner", onDiscard: { $0.discarded() }) {
    context in
    var sum = context.resolve(twig)
    sum += pod.value?.resolve(twig) ?? 11
    return Node(scopedNodes, sum: sum)
  }
  /// An always-new build between two caching ones.
  static let bridge = Provider(scope: AlwaysCreateNewScope(), name: "bridge") { context in
    context.resolve(inner).sum + context.resolve(twig)
  }
  static let outer = Provider(scope: OuterScope(), name: "outer", onDiscard: { $0.discarded() }) {
    context in
    Node(scopedNodes, sum: context.resolve(bridge) + context.resolve(leaf))
  }
  /// An always-new chain that starts on the lock-free path and nests caching builds.
  static let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
    let deep = context.resolve(twig)
    let cached = context.resolve(outer).sum
    let again = context.resolve(twig)
    return deep + cached + again
  }
  static let tracked = Provider(scope: AlwaysCreateNewScope(), name: "tracked-leaf") { _ in
    Node(leaves, sum: 1)
  }

  static let scenario = Scenario(
    name: "nested-thread-builds",
    summary: "always-new chains in caching builds in always-new chains, against clears",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    pod.withLock { $0 = Pod() }
    let deadline = Deadline(after: duration)
    onThreads(4) { index in
      var operations = 0
      var random = FastRandom(seed: index + 21)
      guard let app = pod.value else { return }
      while !deadline.hasPassed {
        switch index {
        case 0:
          switch random.next(8) {
          case 0: app.overrideProvider(leaf) { _ in 1 }
          case 1: app.removeOverrideProvider(leaf)
          case 2: app.clearCachedInstances(forScope: OuterScope())
          default: app.clearCachedInstances(forScope: InnerScope())
          }
        default:
          resolve(app, random.next(4))
        }
        operations += 1
      }
      report.add(operations: operations)
    }
    pod.withLock { $0 = nil }
    await settle([scopedNodes, leaves])
  }

  private static func resolve(_ app: Pod, _ which: Int) {
    switch which {
    case 0:
      // twig 11 + outer (bridge (inner 22 + twig 11) + leaf 1) + twig 11
      let value = app.resolve(top)
      report.check(value == 56, "top resolved to \(value), not 56")
    case 1:
      let value = app.resolve(bridge)
      report.check(value == 33, "bridge resolved to \(value), not 33")
    case 2:
      let node = app.resolve(tracked)
      report.check(node.sum == 1, "always-new node broken")
    default:
      let value = app.resolve(inner).sum
      report.check(value == 22, "inner resolved to \(value), not 22")
    }
  }
}
