import ProviderPod

/// Chains thousands long let go of at once on threads with a small stack (512 KB), beside a
/// thread that clears the app's scope and makes request pods of the app's:
/// - chains of pods, each the child of the one before, made from the app's pod. Each pod keeps
///   its parent alive, so letting go of the deepest releases the chain: released from one
///   another's deinit, a chain of 5,000 overflowed the stack. The deepest pod is resolved
///   through, which joins the chain to the tree and links the chain's instance in it;
/// - the same, with an instance sequence of the deepest pod kept past the chain: its engine
///   keeps the pods' records, each holding its parent's, and they go after the pods, as they
///   do when the clearing thread takes the link out and its slot goes last;
/// - a request pod caching a chain of instances, each built from the one before, let go of:
///   each instance holds the slot it was built from.
enum DeepChains {
  static let report = Report(scenario: "deep-chains")
  static let configs = Ledger("config", exact: false, report: report)

  struct SessionScope: ProviderScope {}
  struct RequestScope: ProviderScope {}

  final class Config: Tracked, @unchecked Sendable {
    init() { super.init(configs) }
  }

  static let config = Provider(
    scope: SessionScope(), name: "config", onDiscard: { $0.discarded() }
  ) { _ in Config() }
  static let depthOfChain = Provider(scope: RequestScope(), name: "depth") { context in
    _ = context.resolve(config)
    return 1
  }

  /// Member `n` built from member `n - 1`: a chain of instances in the pod that owns the scope.
  static let link: ProviderFamily<Int, Int> = ProviderFamily(
    scope: RequestScope(), name: "link"
  ) { (context: BuildContext, n: Int) -> Int in
    n == 0 ? 0 : context.resolve(DeepChains.link(n - 1)) + 1
  }

  static let chainLength = 8_000
  static let stackSize = 512 << 10

  static let scenario = Scenario(
    name: "deep-chains",
    summary:
      "chains of 8,000 pods or instances let go of at once on 512 KB stacks, beside app clears",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    race(for: duration)
    // Once the app's pod is gone too: its own instance stays alive while it is.
    await settle([configs])
  }

  private static func race(for duration: Duration) {
    let deadline = Deadline(after: duration)
    let app = Pod()
    onThreads(4, stackSize: stackSize) { index in
      var length = ChainLength(for: duration)
      if index == 3 {
        while !deadline.hasPassed {
          let links = length.links
          length.measure { cacheChainOfInstances(in: app, length: links) }
        }
        return
      }
      if index == 2 {
        while !deadline.hasPassed {
          app.clearCachedInstances(forScope: SessionScope())
          let request = Pod(parent: app, scopes: [RequestScope()])
          report.check(request.resolve(depthOfChain) == 1, "a request pod's value was not 1")
          report.add(operations: 2)
        }
        return
      }
      while !deadline.hasPassed {
        let links = length.links
        length.measure { letGoOfChain(of: app, keepingRecords: index == 1, length: links) }
      }
    }
  }

  /// How long a thread's next chain is: it starts at 512 links and doubles, up to
  /// `chainLength`, while a chain takes less than a sixteenth of the run. Letting go of a
  /// chain costs time linear in its length, but with the engine's internal checks on, every
  /// link's change checks the whole tree, and a chain of 8,000 took half a minute.
  struct ChainLength {
    private(set) var links = 512
    private let budget: Duration

    init(for duration: Duration) { budget = duration / 16 }

    mutating func measure(_ chain: () -> Void) {
      let start = ContinuousClock.now
      chain()
      if ContinuousClock.now - start < budget { links = min(2 * links, chainLength) }
    }
  }

  /// A chain of pods made from `app` and let go of at once. With `keepingRecords`, an instance
  /// sequence of the deepest pod outlives the pods: its engine keeps the pods' records, each
  /// holding its parent's, and they go with it, after the pods.
  private static func letGoOfChain(of app: Pod, keepingRecords: Bool, length: Int) {
    var kept: ProviderInstances<Int, Never>?
    do {
      var deepest = Pod(parent: app, scopes: [RequestScope()])
      for _ in 1..<length { deepest = Pod(parent: deepest) }
      // Built in the chain's first pod, which owns the scope, and shared down the chain.
      report.check(deepest.resolve(depthOfChain) == 1, "a chain's value was not 1")
      if keepingRecords { kept = deepest.instances(of: depthOfChain) }
    }
    withExtendedLifetime(kept) {}
    kept = nil
    report.add(operations: length)
  }

  /// A request pod that caches `length` instances, each built from the one before, and
  /// goes: one member at a time, so that no build nests deeper than one while the chain
  /// grows to its full length.
  private static func cacheChainOfInstances(in app: Pod, length: Int) {
    let request = Pod(parent: app, scopes: [RequestScope()])
    for n in 0..<length { _ = request.resolve(link(n)) }
    report.check(
      request.resolve(link(length - 1)) == length - 1,
      "a chain of instances did not count its length")
    report.add(operations: length)
  }
}
