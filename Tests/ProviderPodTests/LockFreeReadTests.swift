import Testing

@testable import ProviderPod

// A cached instance read once through the pod is read from then on without the pod's lock.
// Every change must still reach those reads at once, and the pod must not keep alive, through
// them, anything it has let go of.

/// A provider whose instances say when they are gone, and a way to read them twice (the second
/// read is the one without the lock).
private func readTwice<Value>(_ pod: Pod, _ provider: Provider<Value>) -> Value {
  _ = pod.resolve(provider)
  return pod.resolve(provider)
}

@Suite("Cached reads without the lock")
struct LockFreeReadTests {
  @Test("a clear reaches a read that no longer takes the lock, and frees the old instance")
  func clearAfterUnlockedReads() {
    let pod = Pod()
    let session = instanceProvider("session", scope: FlowScope())
    weak var old: Instance?
    do {
      let first = readTwice(pod, session)
      #expect(pod.resolve(session) === first)
      old = first
    }
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(old == nil, "the pod kept a cleared instance alive")
    let second = pod.resolve(session)
    #expect(second.serial == 2)
    #expect(pod.resolve(session) === second)
    #expect(pod.invariantViolations == [])
  }

  @Test("an override added or removed after unlocked reads is seen by the next read")
  func overrideAfterUnlockedReads() {
    let pod = Pod()
    let service = Provider(name: "service") { _ in "real" }
    #expect(readTwice(pod, service) == "real")
    pod.overrideProvider(service, withValue: "fake")
    #expect(pod.resolve(service) == "fake")
    #expect(readTwice(pod, service) == "fake")
    pod.removeOverrideProvider(service)
    #expect(readTwice(pod, service) == "real")
    #expect(pod.invariantViolations == [])
  }

  @Test("values of every kind read back the same without the lock", arguments: [0, 1, 2])
  func valueKinds(kind: Int) {
    let pod = Pod()
    switch kind {
    case 0:
      let optional = Provider<Int?> { _ in nil }
      #expect(readTwice(pod, optional) == nil)
    case 1:
      let tuple = Provider { _ in (1, "two", [3.0]) }
      let read = readTwice(pod, tuple)
      #expect(read.0 == 1 && read.1 == "two" && read.2 == [3.0])
    default:
      let existential = Provider<any Sendable> { _ in Instance("any", serial: 7) }
      #expect((readTwice(pod, existential) as? Instance)?.serial == 7)
    }
    #expect(pod.invariantViolations == [])
  }

  @Test("a pod going away frees what its unlocked reads found")
  func podGoingAwayFreesPublished() {
    weak var instance: Instance?
    weak var childInstance: Instance?
    do {
      let app = Pod()
      let config = instanceProvider("config")
      let request = instanceProvider("request", scope: StepScope())
      let child = Pod(parent: app, scopes: [StepScope()])
      instance = readTwice(child, config)
      childInstance = readTwice(child, request)
      #expect(app.invariantViolations == [])
    }
    #expect(instance == nil)
    #expect(childInstance == nil)
  }

  @Test("a child pod's unlocked read of the parent's instance follows a clear in the parent")
  func childLinkFollowsParentClear() {
    let app = Pod()
    let config = instanceProvider("config", scope: FlowScope())
    let child = Pod(parent: app, scopes: [StepScope()])
    let first = readTwice(child, config)
    #expect(first === app.resolve(config))
    app.clearCachedInstances(forScope: FlowScope())
    let second = child.resolve(config)
    #expect(second !== first)
    #expect(second === app.resolve(config))
    #expect(readTwice(child, config) === second)
    #expect(app.invariantViolations == [])
  }

  @Test("a builder's resolve through a captured pod is still recorded as a dependency")
  func nestedResolveThroughCapturedPodIsRecorded() {
    let holder = PodHolder()
    let pod = Pod()
    holder.pod = pod
    let config = instanceProvider("config", scope: FlowScope())
    let counter = Counter()
    // The builder ignores its context and resolves through the pod itself.
    let service = Provider(name: "service") { _ in
      Instance("service", serial: counter.next(), dependencies: [holder.pod!.resolve(config)])
    }
    _ = readTwice(pod, config)
    let first = readTwice(pod, service)
    #expect(first.dependencies[0] === pod.resolve(config))
    pod.clearCachedInstances(forScope: FlowScope())
    let second = pod.resolve(service)
    #expect(second !== first, "the service was not discarded with what it was built from")
    #expect(second.dependencies[0] === pod.resolve(config))
    #expect(pod.invariantViolations == [])
  }

  @Test("threads reading while another clears never get an instance cleared before they began")
  func readersRaceClears() {
    let pod = Pod()
    let disposed = Shared<Set<Int>>([])
    let counter = Counter()
    let session = Provider(
      scope: FlowScope(), name: "session",
      onDiscard: { instance in disposed.withLock { _ = $0.insert(instance.serial) } }
    ) { _ in Instance("session", serial: counter.next()) }
    let stale = Shared(0)
    let clears = 300
    let clearsDone = Shared(0)
    onThreads(4) { index in
      if index == 0 {
        for _ in 0..<clears {
          _ = pod.resolve(session)
          pod.clearCachedInstances(forScope: FlowScope())
          clearsDone.withLock { $0 += 1 }
        }
        return
      }
      // Bounded by count, not by the clearing thread's progress.
      for _ in 0..<20_000 {
        let before = disposed.withLock { $0 }
        let read = pod.resolve(session)
        if before.contains(read.serial) { stale.withLock { $0 += 1 } }
      }
    }
    #expect(clearsDone.withLock { $0 } == clears)
    #expect(stale.withLock { $0 } == 0)
    #expect(pod.invariantViolations == [])
  }
}
