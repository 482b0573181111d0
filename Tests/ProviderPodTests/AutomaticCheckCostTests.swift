import Testing

@testable import ProviderPod

// Debug builds check the engine's bookkeeping after each change. That check must cost what
// the change touched, or a constant on average, never the whole tree each time: a server run
// in debug with thousands of live request pods, or a deep chain of pods going away, would
// otherwise slow down with the square of its pods. Counted in pods and slots visited, not
// timed. With `PROVIDERPOD_INTERNAL_CHECKS`, or on a tree a test asks it of (as the model tests
// do), every change checks the whole tree on purpose.
@Suite("The automatic bookkeeping check")
struct AutomaticCheckCostTests {
  #if DEBUG && !PROVIDERPOD_INTERNAL_CHECKS
    /// What the check may visit per change on average: a few times the 32 pods and slots a
    /// whole check of a small tree visits. Checking the whole tree of 4,000 pods after each
    /// change visited 2,000 per change on average.
    static let workPerChange = 200

    @Test("a request pod made among 4,000 live ones costs the check a bounded amount")
    func manyLiveChildren() {
      let app = Pod()
      let config = instanceProvider("config")
      let handler = instanceProvider("handler", scope: StepScope(), dependencies: [config])
      var requests: [Pod] = []
      let before = app.invariantCheckWork
      for _ in 0..<4_000 {
        let request = Pod(parent: app, scopes: [StepScope()])
        _ = request.resolve(handler)  // one build, one check
        requests.append(request)
      }
      #expect(app.invariantCheckWork - before < 4_000 * Self.workPerChange)
      #expect(app.childCount == 4_000)
      #expect(app.invariantViolations == [])
    }

    @Test("a chain of 4,000 pods going away costs the check a bounded amount")
    func deepChainGoesAway() {
      let root = Pod()
      let engine = root.engine
      var chain = [root]
      for _ in 0..<4_000 { chain.append(Pod(parent: chain.last!)) }
      let before = root.invariantCheckWork
      // Deepest first, as each child holds its parent: one check per pod going away.
      while chain.count > 1 { chain.removeLast() }
      let work = engine.state.withLock { $0.invariantChecks.work } - before
      #expect(work < 4_000 * Self.workPerChange)
      #expect(root.childCount == 0)
    }
  #endif

  #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
    @Test("a tree asked to check after every change checks the whole tree each time")
    func everyChangeWhenAsked() {
      let pod = Pod()
      pod.checkBookkeepingAfterEveryChange()
      let providers = (0..<100).map { instanceProvider("p\($0)", scope: StepScope()) }
      for provider in providers { _ = pod.resolve(provider) }
      for _ in 0..<10 {
        let before = pod.invariantCheckWork
        pod.clearCachedInstance(of: providers[0])
        // The pod and its 100 slots, after a change that touched one of them.
        #expect(pod.invariantCheckWork - before == 101)
      }
    }
  #endif
}
