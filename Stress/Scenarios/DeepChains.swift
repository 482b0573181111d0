import ProviderPod

/// Chains of pods thousands deep, each pod the child of the one before, made from the app's pod
/// and let go of all at once on threads with a small stack, while other threads make request
/// pods of the app's and clear its scope. Each pod keeps its parent alive, so letting go of
/// the deepest releases the whole chain: released pod by pod from each one's deinit, a chain
/// of 5,000 overflowed a 512 KB stack. The deepest pod is resolved through, which joins the
/// whole chain to the tree and links the chain's instance in it; a clear on the other thread
/// can take that link out, and its slot then holds the deepest pod's record, and with it every
/// ancestor's, after the pods are gone: the records released one inside the other overflowed
/// the stack of whichever thread let go of that slot last.
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

  static let chainLength = 8_000
  static let stackSize = 512 << 10

  static let scenario = Scenario(
    name: "deep-chains",
    summary: "chains of 8,000 pods let go of at once on 512 KB stacks, beside app clears",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    race(for: duration)
    // Once the app's pod is gone too: its own instance stays alive while it is.
    await settle([configs])
  }

  private static func race(for duration: Duration) {
    let deadline = Deadline(after: duration)
    let app = Pod()
    onThreads(3, stackSize: stackSize) { index in
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
        var deepest = Pod(parent: app, scopes: [RequestScope()])
        for _ in 1..<chainLength { deepest = Pod(parent: deepest) }
        // Built in the chain's first pod, which owns the scope, and shared down the chain.
        report.check(deepest.resolve(depthOfChain) == 1, "a chain's value was not 1")
        report.add(operations: chainLength)
      }
    }
  }
}
