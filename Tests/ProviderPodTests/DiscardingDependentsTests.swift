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
}
