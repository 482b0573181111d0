import Dispatch
import Testing

@testable import ProviderPod

@Suite("No stale dependents: what was built from a discarded instance goes too")
struct DiscardingDependentsTests {
  @Test("clearing a scope discards singletons built from it, transitively")
  func cascadeAcrossScopes() {
    let session = instanceProvider("session", scope: FlowScope())
    let validator = instanceProvider("validator", dependencies: [session])
    let form = instanceProvider("form", dependencies: [validator])
    let unrelated = instanceProvider("unrelated")
    let pod = Pod()
    let form1 = pod.resolve(form)
    let unrelated1 = pod.resolve(unrelated)
    pod.clearCachedInstances(forScope: FlowScope())
    let form2 = pod.resolve(form)
    #expect(form2 !== form1)
    #expect(form2.dependencies[0] !== form1.dependencies[0])
    #expect(form2.dependencies[0].dependencies[0] !== form1.dependencies[0].dependencies[0])
    #expect(pod.resolve(unrelated) === unrelated1)
  }

  @Test("dependencies are tracked through always-new providers in between")
  func throughAlwaysCreateNew() {
    let session = instanceProvider("session", scope: StepScope())
    let middle = instanceProvider("middle", scope: AlwaysCreateNewScope(), dependencies: [session])
    let top = instanceProvider("top", dependencies: [middle])
    let pod = Pod()
    let top1 = pod.resolve(top)
    #expect(pod.resolve(top) === top1)
    pod.clearCachedInstances(forScope: StepScope())
    let top2 = pod.resolve(top)
    #expect(top2 !== top1)
    #expect(top2.dependencies[0].dependencies[0] !== top1.dependencies[0].dependencies[0])
  }

  @Test("overriding an always-new provider discards what was built through it")
  func overrideAlwaysCreateNew() {
    let middle = instanceProvider("middle", scope: AlwaysCreateNewScope())
    let top = instanceProvider("top", dependencies: [middle])
    let pod = Pod()
    let top1 = pod.resolve(top)
    pod.overrideProvider(middle) { _ in Instance("fakeMiddle", serial: 0) }
    let top2 = pod.resolve(top)
    #expect(top2 !== top1)
    #expect(top2.dependencies[0].label == "fakeMiddle")
  }

  @Test("a diamond is discarded once and rebuilt with one shared dependency")
  func diamond() {
    let base = instanceProvider("base", scope: StepScope())
    let left = instanceProvider("left", dependencies: [base])
    let right = instanceProvider("right", dependencies: [base])
    let top = instanceProvider("top", dependencies: [left, right])
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    _ = pod.resolve(top)
    _ = recorder.take()
    pod.clearCachedInstances(forScope: StepScope())
    let discarded = recorder.take().compactMap { event -> String? in
      if case .discarded(let provider, _, _) = event { return provider } else { return nil }
    }
    #expect(discarded.sorted() == ["base", "left", "right", "top"])
    let top2 = pod.resolve(top)
    #expect(top2.dependencies[0].dependencies[0] === top2.dependencies[1].dependencies[0])
  }

  @Test("an instance no longer built from a dependency is not discarded with it")
  func staleEdgesAreForgotten() {
    let base = instanceProvider("base", scope: StepScope())
    let top = instanceProvider("top", dependencies: [base])
    let pod = Pod()
    _ = pod.resolve(top)
    // Rebuild top without base, then clear base's scope: top must survive.
    pod.overrideProvider(top) { _ in Instance("standalone", serial: 0) }
    let standalone = pod.resolve(top)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(top) === standalone)
  }

  @Test("discarding a dependent leaves what it was built from")
  func cascadeGoesOneWay() {
    let base = instanceProvider("base")
    let scoped = instanceProvider("scoped", scope: StepScope(), dependencies: [base])
    let pod = Pod()
    let scoped1 = pod.resolve(scoped)
    pod.clearCachedInstances(forScope: StepScope())
    let scoped2 = pod.resolve(scoped)
    #expect(scoped2 !== scoped1)
    #expect(scoped2.dependencies[0] === scoped1.dependencies[0])
  }

  @Test("a long chain is discarded without recursion limits")
  func longChain() {
    let root = instanceProvider("root", scope: StepScope())
    var chain = [root]
    for index in 0..<2_000 {
      chain.append(instanceProvider("link\(index)", dependencies: [chain[index]]))
    }
    let pod = Pod()
    // Resolve link by link so no build nests deeply: this is about the discard cascade.
    let end1 = chain.map { pod.resolve($0) }.last!
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(chain.last!) !== end1)
  }

  @Test(
    "a provider resolved again after a nested build also used it is one dependency: one edge, one discard, one hook"
  )
  func resolvedAgainAfterNestedBuild() {
    let disposed = Shared(0)
    let base = Provider(
      scope: StepScope(), name: "base", onDiscard: { _ in disposed.withLock { $0 += 1 } }
    ) { _ in Instance("base", serial: 0) }
    let middle = instanceProvider("middle", dependencies: [base])
    // base, then middle (a cached build that records base for itself), then base again.
    let top = instanceProvider("top", dependencies: [base, middle, base])
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let top1 = pod.resolve(top)
    #expect(pod.invariantViolations == [])
    let edges = pod.dependencyGraph().edges.filter { $0.dependent.provider == "top" }
    #expect(edges.map(\.dependency.provider).sorted() == ["base", "middle"])
    _ = recorder.take()
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.invariantViolations == [])
    let discarded = recorder.take().compactMap { event -> String? in
      if case .discarded(let provider, _, _) = event { return provider }
      return nil
    }
    #expect(discarded.sorted() == ["base", "middle", "top"])
    #expect(disposed.withLock { $0 } == 1)
    #expect(pod.resolve(top) !== top1)
    #expect(pod.invariantViolations == [])
  }

  @Test("a dependency recorded again after another thread's build recorded it counts right")
  func duplicateDependencyAcrossThreads() {
    let log = DisposalLog()
    let pod = Pod()
    let base = Provider(scope: StepScope(), name: "base", onDiscard: log.record) { _ in
      Instance("base", serial: 0)
    }
    let otherDone = DispatchSemaphore(value: 0)
    let other = Provider(scope: StepScope(), name: "other", onDiscard: log.record) { context in
      Instance("other", serial: 0, dependencies: [context.resolve(base)])
    }
    let top = Provider(scope: StepScope(), name: "top", onDiscard: log.record) { context in
      let first = context.resolve(base)
      // Another thread's caching build records base in between.
      startThread {
        _ = pod.resolve(other)
        otherDone.signal()
      }
      waitWithWatchdog(otherDone)
      return Instance("top", serial: 0, dependencies: [first, context.resolve(base)])
    }
    let made = pod.resolve(top)
    #expect(made.dependencies[0] === made.dependencies[1])
    #expect(pod.invariantViolations == [])
    let edges = pod.dependencyGraph().edges.filter { $0.dependent.provider == "top" }
    #expect(edges.map(\.dependency.provider) == ["base"])
    pod.clearCachedInstance(of: base)
    #expect(Set(log.entries) == ["base#0", "other#0", "top#0"])
    #expect(log.take().count == 3)
    #expect(pod.invariantViolations == [])
    #expect(pod.resolve(top) !== made)
    #expect(pod.invariantViolations == [])
  }

  @Test("duplicated dependencies of a build invalidated while it runs are all dropped")
  func duplicateDependenciesOfInvalidatedBuild() {
    let pod = Pod()
    let base = instanceProvider("base", scope: StepScope())
    let middle = instanceProvider("middle", scope: StepScope(), dependencies: [base])
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let topBuilds = Counter()
    let top = Provider(scope: StepScope(), name: "top") { context in
      let first = context.resolve(base)
      _ = context.resolve(middle)
      let second = context.resolve(base)
      if topBuilds.next() == 1 {
        entered.signal()
        waitWithWatchdog(proceed)
      }
      // Invalidated by now: what it resolves is recorded nowhere.
      return Instance("top", serial: 0, dependencies: [first, second, context.resolve(base)])
    }
    let result = Shared<Instance?>(nil)
    let done = startThread { result.withLock { $0 = pod.resolve(top) } }
    guard waitOrFail(entered, "top's build") else { return }
    pod.overrideProvider(base) { _ in Instance("fakeBase", serial: 0) }
    proceed.signal()
    guard waitOrFail(done, "top's build") else { return }
    #expect(result.withLock { $0 }?.dependencies[2].label == "fakeBase")
    #expect(pod.invariantViolations == [])
    let again = pod.resolve(top)
    #expect(again.dependencies.allSatisfy { $0.label == "fakeBase" })
    #expect(pod.invariantViolations == [])
  }

  @Test("threads recording the same dependencies between each other's builds keep sound records")
  func duplicateDependenciesStress() {
    let pod = Pod()
    let disposed = Shared<[String]>([])
    let baseSerials = Counter()
    let bases = (0..<3).map { index in
      Provider(
        scope: index == 0 ? StepScope() : LeafScope(), name: "base\(index)",
        onDiscard: { (value: Instance) in disposed.withLock { $0.append(value.description) } }
      ) { _ in Instance("base\(index)", serial: baseSerials.next()) }
    }
    let alwaysNew = Provider(scope: AlwaysCreateNewScope(), name: "alwaysNew") { context in
      Instance("alwaysNew", serial: 0, dependencies: bases.map { context.resolve($0) })
    }
    let tops = (0..<4).map { index in
      Provider(scope: index.isMultiple(of: 2) ? StepScope() : OtherStepScope(), name: "top\(index)")
      { context in
        var dependencies: [Instance] = []
        for round in 0..<6 {
          dependencies.append(context.resolve(bases[(index + round) % 3]))
          if round == 2 { dependencies.append(context.resolve(alwaysNew)) }
          // Through the pod itself too: the same build, found through the thread.
          dependencies.append(pod.resolve(bases[round % 3]))
        }
        return Instance("top\(index)", serial: 0, dependencies: dependencies)
      }
    }
    onThreads(4) { thread in
      var generator = SplitMix64(seed: UInt64(thread) + 7)
      for _ in 0..<400 {
        let top = tops[generator.next(below: tops.count)]
        let made = pod.resolve(top)
        #expect(made.dependencies.count == 13)
        switch generator.next(below: 10) {
        case 0: pod.clearCachedInstances(forScope: StepScope())
        case 1: pod.clearCachedInstances(forScope: LeafScope())
        case 2: pod.clearCachedInstance(of: bases[generator.next(below: 3)])
        case 3: _ = pod.resolve(alwaysNew)
        default: break
        }
      }
    }
    #expect(pod.invariantViolations == [])
    let hooks = disposed.withLock { $0 }
    #expect(Set(hooks).count == hooks.count, "a hook ran twice")
    pod.clearCachedInstances(forScope: StepScope())
    pod.clearCachedInstances(forScope: LeafScope())
    pod.clearCachedInstances(forScope: OtherStepScope())
    #expect(pod.invariantViolations == [])
    // Each provider that cached an instance keeps its empty slot for the next one; the
    // always-new provider keeps none.
    #expect(pod.slotCount == bases.count + tops.count)
  }
}
