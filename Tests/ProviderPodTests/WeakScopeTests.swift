import Testing

@testable import ProviderPod

@Suite("Weak scope")
struct WeakScopeTests {
  @Test("a held instance is reused; a released one is rebuilt")
  func reuseWhileHeld() {
    let counter = Counter()
    let provider = instanceProvider("weak", scope: WeakScope(), counter: counter)
    let pod = Pod()
    var held: Instance? = pod.resolve(provider)
    #expect(pod.resolve(provider) === held)
    #expect(counter.value == 1)
    held = nil
    let second = pod.resolve(provider)
    #expect(second.serial == 2)
    #expect(counter.value == 2)
  }

  @Test("the pod does not keep a weak instance alive")
  func podDoesNotRetain() {
    let provider = instanceProvider("weak", scope: WeakScope())
    let pod = Pod()
    weak var observed: Instance?
    do {
      let instance = pod.resolve(provider)
      observed = instance
      #expect(observed != nil)
    }
    #expect(observed == nil)
  }

  @Test("a value that is not a class instance is never cached")
  func valuesAreNotCached() {
    let counter = Counter()
    let provider = Provider(scope: WeakScope()) { _ in counter.next() }
    let pod = Pod()
    #expect(pod.resolve(provider) == 1)
    #expect(pod.resolve(provider) == 2)
  }

  @Test("an existential holding an object is cached weakly")
  func existentialObject() {
    let counter = Counter()
    let provider = Provider<any Sendable>(scope: WeakScope()) { _ in
      Instance("boxed", serial: counter.next())
    }
    let pod = Pod()
    let held = pod.resolve(provider) as! Instance
    #expect(pod.resolve(provider) as! Instance === held)
    #expect(counter.value == 1)
  }

  @Test("clearing WeakScope forgets its instances and discards what was built from them")
  func clearWeakScope() {
    let weakProvider = instanceProvider("weak", scope: WeakScope())
    let dependent = instanceProvider("dependent", dependencies: [weakProvider])
    let pod = Pod()
    let dependent1 = pod.resolve(dependent)
    let weak1 = dependent1.dependencies[0]
    #expect(pod.resolve(weakProvider) === weak1)
    pod.clearCachedInstances(forScope: WeakScope())
    #expect(pod.resolve(weakProvider) !== weak1)
    #expect(pod.resolve(dependent) !== dependent1)
  }

  @Test("an instance going away by itself discards nothing else")
  func naturalDeathDiscardsNothing() {
    let weakProvider = instanceProvider("weak", scope: WeakScope())
    // The dependent keeps only the label, so the weak instance can die.
    let dependent = Provider(name: "dependent") { pod in
      Instance("dependent", serial: pod.resolve(weakProvider).serial)
    }
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let dependent1 = pod.resolve(dependent)
    _ = recorder.take()
    _ = pod.resolve(weakProvider)  // rebuilt: the first one is gone
    #expect(pod.resolve(dependent) === dependent1)
    #expect(
      !recorder.events.contains {
        if case .discarded = $0 { return true } else { return false }
      })
  }

  @Test("a non-class value in WeakScope passes its dependencies to whoever resolved it")
  func nonClassPassesDependenciesOn() {
    let scoped = instanceProvider("scoped", scope: StepScope())
    let weakValue = Provider(scope: WeakScope(), name: "weakValue") { pod in
      pod.resolve(scoped).serial
    }
    let top = Provider(name: "top") { pod in Instance("top", serial: pod.resolve(weakValue)) }
    let pod = Pod()
    let top1 = pod.resolve(top)
    #expect(pod.resolve(top) === top1)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(top) !== top1)
  }

  // Through a child, a builder's dependency must be recorded. When the parent's weak-scope
  // instance has gone away by itself, a builder resolving it through a child must look it up
  // again for the same caller, not be told its caller finished and get an instance rebuilt
  // as if resolved from outside any build.
  @Test("a dead weak instance resolved through a child stays a dependency of the builder")
  func deadWeakInstanceThroughChild() {
    let base = instanceProvider("base")
    let weak = Provider<Instance>(scope: WeakScope(), name: "weak") { pod in
      Instance("weak", serial: 0, dependencies: [pod.resolve(base)])
    }
    let ownBuilds = Counter()
    let own = Provider<Instance>(scope: AppWindowScope(), name: "own") { pod in
      Instance("own", serial: ownBuilds.next(), dependencies: [pod.resolve(weak)])
    }
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [AppWindowScope()])
    _ = parent.resolve(weak)  // cached weakly in the parent; nobody keeps it
    let first = child.resolve(own)
    let oldBase = first.dependencies[0].dependencies[0]

    parent.clearCachedInstance(of: base)  // discards `weak`, and what was built from it
    let second = child.resolve(own)
    #expect(second !== first)
    #expect(second.dependencies[0].dependencies[0] !== oldBase)
    let ownNode = DependencyGraph.Node(provider: "own", scope: "AppWindowScope")
    #expect(
      child.dependencyGraph().dependencies(of: ownNode) == [
        .init(provider: "weak", scope: "WeakScope")
      ])
    #expect(parent.invariantViolations == [])
  }

  @Test("a weak-scope instance is shared by children while it lives, and rebuilt once after")
  func weakInstanceSharedByChildren() {
    let builds = Counter()
    let weak = Provider<Instance>(scope: WeakScope(), name: "weak") { _ in
      Instance("weak", serial: builds.next())
    }
    let parent = Pod()
    var first: Pod? = Pod(parent: parent)
    let second = Pod(parent: parent)
    var held: Instance? = first!.resolve(weak)
    #expect(second.resolve(weak) === held)
    #expect(parent.resolve(weak) === held)
    held = nil
    let rebuilt = second.resolve(weak)
    #expect(rebuilt.serial == 2)
    #expect(first!.resolve(weak) === rebuilt)
    first = nil
    #expect(parent.invariantViolations == [])
    withExtendedLifetime(rebuilt) {}
    #expect(builds.value == 2)
  }
}
