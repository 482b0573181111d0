import ProviderPod
import Testing

@Suite("Clearing a scope tree")
struct ScopeTreeTests {
  let flow = instanceProvider("flow", scope: FlowScope())
  let step = instanceProvider("step", scope: StepScope())
  let otherStep = instanceProvider("otherStep", scope: OtherStepScope())
  let leaf = instanceProvider("leaf", scope: LeafScope())
  let unrelated = instanceProvider("unrelated", scope: UnrelatedScope())
  let singleton = instanceProvider("singleton")

  private func resolveAll(_ pod: Pod) -> [Instance] {
    [flow, step, otherStep, leaf, unrelated, singleton].map { pod.resolve($0) }
  }

  @Test("clearing a scope clears it and every descendant, nothing else")
  func clearWalksChildren() {
    let pod = Pod()
    let before = resolveAll(pod)
    pod.clearCachedInstances(forScope: FlowScope())
    let after = resolveAll(pod)
    // flow, step, otherStep and leaf are new; unrelated and singleton are kept.
    #expect(zip(before, after).map { $0 === $1 } == [false, false, false, false, true, true])
  }

  @Test("clearing a child leaves its parent")
  func clearChildOnly() {
    let pod = Pod()
    let before = resolveAll(pod)
    pod.clearCachedInstances(forScope: StepScope())
    let after = resolveAll(pod)
    #expect(zip(before, after).map { $0 === $1 } == [true, false, true, false, true, true])
  }

  @Test("a cycle in the scope tree terminates and clears each scope once")
  func cyclicTree() {
    let a = instanceProvider("a", scope: CycleScopeA())
    let b = instanceProvider("b", scope: CycleScopeB())
    let singleton = instanceProvider("singleton")
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let (a1, b1, s1) = (pod.resolve(a), pod.resolve(b), pod.resolve(singleton))
    _ = recorder.take()
    pod.clearCachedInstances(forScope: CycleScopeB())
    #expect(pod.resolve(a) !== a1)
    #expect(pod.resolve(b) !== b1)
    // SingletonScope listed as a child is ignored.
    #expect(pod.resolve(singleton) === s1)
    let discarded = recorder.events.filter {
      if case .discarded = $0 { return true } else { return false }
    }
    #expect(discarded.count == 2)
  }

  @Test("clearing SingletonScope or AlwaysCreateNewScope discards nothing")
  func builtInScopesAreNotCleared() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let before = resolveAll(pod)
    _ = recorder.take()
    pod.clearCachedInstances(forScope: SingletonScope())
    pod.clearCachedInstances(forScope: AlwaysCreateNewScope())
    #expect(recorder.take().isEmpty)
    #expect(zip(before, resolveAll(pod)).allSatisfy { $0 === $1 })
  }

  @Test("clearing from inside a builder discards what is cached and does not deadlock")
  func clearInsideBuilder() {
    let pod = Pod()
    let stepInstance = pod.resolve(step)
    let clearing = Provider(scope: UnrelatedScope()) { pod in
      pod.clearCachedInstances(forScope: StepScope())
      return Instance("clearing", serial: 0)
    }
    _ = pod.resolve(clearing)
    #expect(pod.resolve(step) !== stepInstance)
    // The clearing provider's own instance was cached: its scope was not cleared.
    #expect(pod.resolve(clearing) === pod.resolve(clearing))
  }

  @Test("a builder that clears its own scope hands back its instance uncached")
  func clearOwnScopeInsideBuilder() {
    let counter = Counter()
    let selfClearing = Provider(scope: StepScope()) { pod in
      pod.clearCachedInstances(forScope: StepScope())
      return Instance("selfClearing", serial: counter.next())
    }
    let pod = Pod()
    let first = pod.resolve(selfClearing)
    let second = pod.resolve(selfClearing)
    #expect(first !== second)
    #expect(counter.value == 2)
  }
}
