import Dispatch
import Testing

@testable import ProviderPod

// The corners of cached reads without the lock: builds the fast path must still see, pods and
// providers whose addresses come back for others, instances the pod alone held, and many
// threads at once.

/// A warmable provider of the user's own, which warms up by resolving through the pod.
private struct ResolvedThroughPod: WarmableProvider {
  let provider: Provider<Instance>
  var name: String { provider.name }
  func warmUp(in pod: Pod) async throws { _ = pod.resolve(provider) }
}

/// Reads through `pod` often enough that the reads after the first take no lock.
private func readPublished<Value>(_ pod: Pod, _ provider: Provider<Value>) -> Value {
  _ = pod.resolve(provider)
  return pod.resolve(provider)
}

@Suite("Cached reads without the lock: corners")
struct LockFreeReadEdgeTests {
  @Test(
    "a warm-up for a synchronous build, on another task, records what it resolves",
    arguments: [false, true])
  func warmUpForSynchronousBuildOnAnotherTask(throughAlwaysNew: Bool) {
    let pod = Pod()
    let source = instanceProvider("source", scope: FlowScope())
    // An always-new provider through a root pod runs without the lock unless the pod knows
    // of a build it may be nested in.
    let fresh = instanceProvider(
      "fresh", scope: AlwaysCreateNewScope(), dependencies: [source])
    let counter = Counter()
    // The builder hands its context to a task and waits for it, as a builder may. The task
    // runs on an executor of its own: tests running at the same time may block every thread
    // of the shared pool.
    let executor = SerialTaskExecutor()
    let made = Provider(name: "made") { context in
      let done = DispatchSemaphore(value: 0)
      Task(executorPreference: executor) {
        try? await context.warmUp(ResolvedThroughPod(provider: throughAlwaysNew ? fresh : source))
        done.signal()
      }
      waitWithWatchdog(done)
      return Instance("made", serial: counter.next())
    }
    _ = readPublished(pod, source)
    let first = Shared<Instance?>(nil)
    // On a thread of its own: the builder blocks, and the task needs a pool thread.
    runUntilThreadEnds { first.withLock { $0 = pod.resolve(made) } }
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(
      pod.resolve(made) !== first.withLock { $0 },
      "made was built from source, which was cleared")
    #expect(pod.invariantViolations == [])
  }

  @Test("a child pod and a provider made at run time where freed ones were read the right value")
  func reusedPodAndProviderAddresses() {
    let app = Pod()
    for round in 0..<2_000 {
      let child = Pod(parent: app, scopes: [StepScope()])
      switch round % 4 {
      case 0:
        let provider = Provider(scope: StepScope()) { _ in Instance("round", serial: round) }
        #expect(readPublished(child, provider).serial == round)
      case 1:
        let provider = Provider(scope: StepScope()) { _ in (round, "round-\(round)") }
        #expect(readPublished(child, provider) == (round, "round-\(round)"))
      case 2:
        let provider = Provider<Int?>(scope: StepScope()) { _ in round }
        #expect(readPublished(child, provider) == round)
      default:
        let provider = Provider(scope: FlowScope()) { _ in "app-\(round)" }
        #expect(readPublished(child, provider) == "app-\(round)")
        app.clearCachedInstances(forScope: FlowScope())
      }
    }
    #expect(app.invariantViolations == [])
  }

  @Test("providers made at run time and swept from a long-lived pod never read each other's values")
  func sweptProviders() {
    let pod = Pod()
    for round in 0..<3_000 {
      if round % 2 == 0 {
        let provider = Provider(scope: FlowScope()) { _ in Instance("even", serial: round) }
        #expect(readPublished(pod, provider).serial == round)
      } else {
        let provider = Provider(scope: FlowScope()) { _ in [round, round] }
        #expect(readPublished(pod, provider) == [round, round])
      }
      // Emptied slots of gone providers are swept when the table has doubled.
      if round % 7 == 0 { pod.clearCachedInstances(forScope: FlowScope()) }
    }
    #expect(pod.invariantViolations == [])
  }

  @Test("overrides in the child and in the parent reach a child's link read without the lock")
  func overridesReachPublishedLinks() {
    let app = Pod()
    let config = instanceProvider("config")
    let child = Pod(parent: app)
    let shared = readPublished(child, config)
    #expect(shared === app.resolve(config))
    let childsOwn = Instance("child's own", serial: 1)
    child.overrideProvider(config, withValue: childsOwn)
    #expect(readPublished(child, config) === childsOwn)
    child.removeOverrideProvider(config)
    #expect(readPublished(child, config) === shared)
    let appsNew = Instance("app's new", serial: 2)
    app.overrideProvider(config, withValue: appsNew)
    #expect(child.resolve(config) === appsNew)
    #expect(readPublished(child, config) === appsNew)
    app.removeOverrideProvider(config)
    let rebuilt = readPublished(child, config)
    #expect(rebuilt !== appsNew && rebuilt !== shared)
    #expect(app.invariantViolations == [])
  }

  @Test(
    "an instance only the pod held is freed before the change that discards it returns",
    arguments: ["class", "hooked class", "struct", "family member", "child's link", "child pod"])
  func freedBeforeChangeReturns(kind: String) {
    let app = Pod()
    let hookRuns = Counter()
    weak var weakly: Instance?
    let readers = Shared(true)
    let other = instanceProvider("other")
    // Other threads read something else meanwhile, each announcing its reads.
    let done = (0..<3).map { _ in
      startThread {
        while readers.withLock({ $0 }) { _ = app.resolve(other) }
      }
    }
    do {
      switch kind {
      case "class":
        let provider = instanceProvider("class", scope: FlowScope())
        weakly = readPublished(app, provider)
        app.clearCachedInstances(forScope: FlowScope())
      case "hooked class":
        let provider = Provider(
          scope: FlowScope(), onDiscard: { _ in hookRuns.next() }
        ) { _ in Instance("hooked", serial: 1) }
        weakly = readPublished(app, provider)
        app.clearCachedInstances(forScope: FlowScope())
        #expect(hookRuns.value == 1)
      case "struct":
        struct Holding { let instance: Instance }
        let provider = Provider(scope: FlowScope()) { _ in
          Holding(instance: Instance("held", serial: 1))
        }
        weakly = readPublished(app, provider).instance
        app.clearCachedInstances(forScope: FlowScope())
      case "family member":
        let family = ProviderFamily(scope: FlowScope()) { (_, serial: Int) in
          Instance("member", serial: serial)
        }
        weakly = readPublished(app, family(3))
        app.clearCachedInstances(of: family)
      case "child's link":
        let provider = instanceProvider("shared", scope: FlowScope())
        let child = Pod(parent: app)
        weakly = readPublished(child, provider)
        _ = readPublished(app, provider)
        app.clearCachedInstances(forScope: FlowScope())
      default:
        let provider = instanceProvider("owned", scope: StepScope())
        var child: Pod? = Pod(parent: app, scopes: [StepScope()])
        weakly = readPublished(child!, provider)
        child = nil
      }
      #expect(weakly == nil, "the instance outlived the change that discarded it")
    }
    readers.withLock { $0 = false }
    for thread in done { _ = waitOrFail(thread, "a reader") }
    #expect(app.invariantViolations == [])
  }

  @Test("eight threads see every clear at once: a resolve begun after it returns is never older")
  func manyThreadsNothingStale() {
    let pod = Pod()
    let counter = Counter()
    let session = Provider(scope: FlowScope(), name: "session") { _ in
      Instance("session", serial: counter.next())
    }
    let built = Provider(name: "built") { context in
      Instance("built", serial: 0, dependencies: [context.resolve(session)])
    }
    // The serial of the first session a clear's next resolve may see.
    let floor = Shared(0)
    let stale = Shared<[String]>([])
    let clears = 200
    onThreads(9) { index in
      if index == 0 {
        for _ in 0..<clears {
          let next = counter.value + 1
          pod.clearCachedInstances(forScope: FlowScope())
          floor.withLock { $0 = next }
        }
        return
      }
      for _ in 0..<5_000 {
        let oldest = floor.withLock { $0 }
        let read = pod.resolve(session)
        let derived = pod.resolve(built).dependencies[0]
        if read.serial < oldest || derived.serial < oldest {
          stale.withLock { $0.append("\(read.serial)/\(derived.serial) < \(oldest)") }
        }
      }
    }
    #expect(stale.withLock { $0 } == [])
    #expect(pod.invariantViolations == [])
  }
}
