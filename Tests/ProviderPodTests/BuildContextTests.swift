import Dispatch
import Testing

@testable import ProviderPod

/// A helper an app writes once and calls from builders and from plain code.
private func makePair(_ resolver: some ProviderResolver, _ provider: Provider<Instance>)
  -> [Instance]
{
  [resolver.resolve(provider), resolver.resolve(provider)]
}

@Suite("What a builder receives")
struct BuildContextTests {
  @Test("helpers written against ProviderResolver take both the pod and a builder's context")
  func resolverHelpers() {
    let leaf = instanceProvider("leaf", scope: StepScope())
    let pair = Provider(name: "pair") { pod in
      Instance("pair", serial: 0, dependencies: makePair(pod, leaf))
    }
    let pod = Pod()
    let outside = makePair(pod, leaf)
    let inside = pod.resolve(pair)
    #expect(outside[0] === inside.dependencies[0])
    // Resolved through the context, so recorded: clearing the leaf's scope rebuilds the pair.
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(pair) !== inside)
  }

  @Test("a context does what the pod does: override, remove, clear, graph")
  func contextActsLikeThePod() {
    let target = Provider(name: "target") { _ in 1 }
    let scoped = instanceProvider("scoped", scope: StepScope())
    let changer = Provider(scope: AlwaysCreateNewScope(), name: "changer") { pod in
      pod.overrideProvider(target, withValue: 2)
      let graphHasScoped = pod.dependencyGraph().nodes.contains { $0.provider == "scoped" }
      pod.clearCachedInstances(forScope: StepScope())
      return graphHasScoped
    }
    let remover = Provider(scope: AlwaysCreateNewScope(), name: "remover") { pod in
      pod.removeOverrideProvider(target)
      return 0
    }
    let pod = Pod()
    let before = pod.resolve(scoped)
    #expect(pod.resolve(changer))
    #expect(pod.resolve(target) == 2)
    #expect(pod.resolve(scoped) !== before)
    _ = pod.resolve(remover)
    #expect(pod.resolve(target) == 1)
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("a context knows its pod while the pod lives")
  func contextKnowsItsPod() {
    let holder = Shared<BuildContext?>(nil)
    let keeper = Provider(name: "keeper") { pod in
      holder.withLock { $0 = pod }
      return 0
    }
    var pod: Pod? = Pod()
    _ = pod!.resolve(keeper)
    #expect(holder.withLock { $0 }?.pod === pod)
    pod = nil
    #expect(holder.withLock { $0 }?.pod == nil)
  }

  @Test("providers are equal only to themselves; family members are equal for equal arguments")
  func providersAreHashable() {
    let a = Provider { _ in 1 }
    let b = Provider { _ in 1 }
    #expect(a == a)
    #expect(a != b)
    #expect(Set([a, a, b]).count == 2)
    let family = ProviderFamily { (_, id: Int) in id }
    #expect(family(1) == family(1))
    #expect(family(1) != family(2))
    #expect(Set([family(1), family(1), family(2)]).count == 2)
    let async1 = AsyncProvider { _ in 1 }
    #expect(async1 == async1)
    #expect(async1 != AsyncProvider { _ in 1 })
  }
}
