import Dispatch
import Foundation
import Testing

@testable import ProviderPod

@Suite("Concurrency")
struct ConcurrencyTests {
  static let threads = 8

  @Test("under contention each cached instance is built exactly once between clears")
  func exactlyOnceBetweenClears() {
    let counters = (0..<6).map { _ in Counter() }
    let flow = instanceProvider("flow", scope: FlowScope(), counter: counters[0])
    let step = instanceProvider(
      "step", scope: StepScope(), counter: counters[1], dependencies: [flow])
    let single = instanceProvider("single", counter: counters[2], dependencies: [step])
    let leaf = instanceProvider(
      "leaf", scope: LeafScope(), counter: counters[3], dependencies: [step])
    let weak = instanceProvider("weak", scope: WeakScope(), counter: counters[4])
    let unrelated = instanceProvider("unrelated", scope: UnrelatedScope(), counter: counters[5])
    let providers = [flow, step, single, leaf, weak, unrelated]
    let pod = Pod()
    let heldWeak = pod.resolve(weak)  // keeps the weak instance alive throughout
    let barrier = Barrier(Self.threads)
    let rounds = 40
    let seen = Shared<[[String: ObjectIdentifier]]>(Array(repeating: [:], count: Self.threads))
    let failedRounds = Shared<[Int]>([])

    onThreads(Self.threads) { thread in
      for round in 0..<rounds {
        barrier.arrive()
        // Everyone resolves everything at once, each thread in a different order.
        var mine: [String: ObjectIdentifier] = [:]
        for index in providers.indices {
          let instance = pod.resolve(providers[(index + thread) % providers.count])
          mine[instance.label] = ObjectIdentifier(instance)
        }
        seen.withLock { $0[thread] = mine }
        barrier.arrive()
        if thread == 0 {
          let all = seen.withLock { $0 }
          let builds = counters.map(\.value)
          if Set(all).count != 1 || builds != [round + 1, round + 1, round + 1, round + 1, 1, 1] {
            failedRounds.withLock { $0.append(round) }
          }
          pod.clearCachedInstances(forScope: FlowScope())
        }
        barrier.arrive()
      }
    }
    withExtendedLifetime(heldWeak) {}
    #expect(failedRounds.withLock { $0 } == [])
    // flow, step (child scope), single (built from step) and leaf were rebuilt every round.
    #expect(counters.map(\.value) == [rounds, rounds, rounds, rounds, 1, 1])
  }

  @Test(
    "threads resolving, overriding and clearing at once: no crash, no deadlock, consistent at rest")
  func chaos() {
    let flow = instanceProvider("flow", scope: FlowScope())
    let step = instanceProvider("step", scope: StepScope(), dependencies: [flow])
    let fresh = instanceProvider("fresh", scope: AlwaysCreateNewScope(), dependencies: [step])
    let single = instanceProvider("single", dependencies: [fresh])
    let weak = instanceProvider("weak", scope: WeakScope(), dependencies: [flow])
    let untouchedCounter = Counter()
    let untouched = instanceProvider("untouched", counter: untouchedCounter)
    let providers = [flow, step, fresh, single, weak]
    let pod = Pod()
    let untouchedInstances = Shared<Set<ObjectIdentifier>>([])

    onThreads(Self.threads) { thread in
      var random = SplitMix64(seed: UInt64(thread) &+ 1)
      for _ in 0..<2_000 {
        switch random.next(below: 10) {
        case 0:
          pod.clearCachedInstances(forScope: random.next(below: 2) == 0 ? FlowScope() : StepScope())
        case 1:
          pod.overrideProvider(step) { pod in
            Instance("stepOverride", serial: 0, dependencies: [pod.resolve(flow)])
          }
        case 2:
          pod.removeOverrideProvider(step)
        case 3:
          let id = ObjectIdentifier(pod.resolve(untouched))
          untouchedInstances.withLock { _ = $0.insert(id) }
        default:
          _ = pod.resolve(providers[random.next(below: providers.count)])
        }
      }
    }
    #expect(untouchedCounter.value <= 1)
    #expect(untouchedInstances.withLock { $0.count } <= 1)

    // At rest the pod is consistent: everything cached is built from what is cached now.
    pod.removeOverrideProvider(step)
    let single1 = pod.resolve(single)
    #expect(pod.resolve(single) === single1)
    #expect(single1.dependencies[0].dependencies[0] === pod.resolve(step))
    #expect(pod.resolve(step).dependencies[0] === pod.resolve(flow))
    pod.clearCachedInstances(forScope: FlowScope())
    let single2 = pod.resolve(single)
    #expect(single2 !== single1)
    #expect(single2.dependencies[0].dependencies[0] === pod.resolve(step))
  }

  @Test("a builder may hand work to another thread that resolves a different provider, and wait")
  func builderWaitsForOtherThread() {
    let helper = instanceProvider("helper", scope: StepScope())
    let otherHelper = instanceProvider("otherHelper")
    let outer = Provider(name: "outer") { pod in
      let done = DispatchSemaphore(value: 0)
      let results = Shared<[Instance]>([])
      startThread {
        // Through the builder's pod (recorded as a dependency) ...
        let viaView = pod.resolve(helper)
        results.withLock { $0.append(viaView) }
        done.signal()
      }
      done.wait()
      return Instance("outer", serial: 0, dependencies: results.withLock { $0 })
    }
    let pod = Pod()
    let root = Provider(name: "root") { _ in
      // ... and through the pod itself, from a plain thread.
      let done = DispatchSemaphore(value: 0)
      let result = Shared<Instance?>(nil)
      startThread {
        let value = pod.resolve(otherHelper)
        result.withLock { $0 = value }
        done.signal()
      }
      done.wait()
      return result.withLock { $0! }
    }
    let outer1 = pod.resolve(outer)
    #expect(outer1.dependencies[0] === pod.resolve(helper))
    #expect(pod.resolve(root) === pod.resolve(otherHelper))
    // The dependency resolved on the other thread was recorded: clearing it discards outer.
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(outer) !== outer1)
  }

  @Test("a slow builder does not block resolves of unrelated providers")
  func slowBuilderDoesNotBlockOthers() {
    let cached = instanceProvider("cached")
    let unrelatedNew = instanceProvider("unrelatedNew", scope: AlwaysCreateNewScope())
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let slow = Provider(name: "slow") { _ in
      started.signal()
      // The builder cannot finish until the test has resolved the unrelated providers, so
      // if those resolves waited for this builder, this would time out.
      let released = waitWithWatchdog(release)
      return released
    }
    let pod = Pod()
    let cachedInstance = pod.resolve(cached)
    let finished = DispatchSemaphore(value: 0)
    let slowResult = Shared<Bool?>(nil)
    startThread {
      let value = pod.resolve(slow)
      slowResult.withLock { $0 = value }
      finished.signal()
    }
    guard waitOrFail(started, "the slow builder to start") else { return }
    #expect(pod.resolve(cached) === cachedInstance)
    _ = pod.resolve(unrelatedNew)
    pod.clearCachedInstances(forScope: UnrelatedScope())
    release.signal()
    guard waitOrFail(finished, "the slow builder to finish") else { return }
    #expect(slowResult.withLock { $0 } == true)
  }

  @Test("threads waiting for a build in progress get the instance it built")
  func waitersShareOneBuild() {
    let counter = Counter()
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let slow = Provider(name: "slow") { _ in
      started.signal()
      waitWithWatchdog(release)
      return Instance("slow", serial: counter.next())
    }
    let pod = Pod()
    let results = Shared<[ObjectIdentifier]>([])
    let group = DispatchGroup()
    group.enter()
    startThread {
      defer { group.leave() }
      let id = ObjectIdentifier(pod.resolve(slow))
      results.withLock { $0.append(id) }
    }
    guard waitOrFail(started, "the build to start") else { return }
    // A waiter that arrived after the build would be served from the cache and prove nothing:
    // release only once every waiter is about to resolve. (How far into `resolve` a blocked
    // thread got is not observable; the remaining window is the few instructions to the lock.)
    let arrived = DispatchSemaphore(value: 0)
    for _ in 0..<4 {
      group.enter()
      startThread {
        defer { group.leave() }
        arrived.signal()
        let id = ObjectIdentifier(pod.resolve(slow))
        results.withLock { $0.append(id) }
      }
    }
    for _ in 0..<4 { guard waitOrFail(arrived, "the waiters to start") else { return } }
    release.signal()
    #expect(group.wait(timeout: .now() + .seconds(20)) == .success)
    #expect(counter.value == 1)
    #expect(Set(results.withLock { $0 }).count == 1)
  }

  @Test("a clear racing a build never leaves the stale instance cached")
  func clearRacingBuild() {
    let counter = Counter()
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let gated = Provider(scope: StepScope(), name: "gated") { _ in
      let serial = counter.next()
      if serial == 1 {
        started.signal()
        waitWithWatchdog(release)
      }
      return Instance("gated", serial: serial)
    }
    let dependent = instanceProvider("dependent", dependencies: [gated])
    let pod = Pod()
    let racing = Shared<Instance?>(nil)
    let finished = DispatchSemaphore(value: 0)
    startThread {
      let value = pod.resolve(dependent)
      racing.withLock { $0 = value }
      finished.signal()
    }
    guard waitOrFail(started, "the build to start") else { return }
    pod.clearCachedInstances(forScope: StepScope())
    release.signal()
    guard waitOrFail(finished, "the build to finish") else { return }
    // The racing caller gets what was built for it; neither it nor its dependent is cached.
    let stale = racing.withLock { $0! }
    #expect(stale.dependencies[0].serial == 1)
    let fresh = pod.resolve(dependent)
    #expect(fresh !== stale)
    #expect(fresh.dependencies[0].serial == 2)
    #expect(pod.resolve(gated) === fresh.dependencies[0])
  }

  @Test("an override racing a build never leaves the stale instance cached")
  func overrideRacingBuild() {
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let gated = Provider(name: "gated") { _ in
      started.signal()
      waitWithWatchdog(release)
      return "original"
    }
    let pod = Pod()
    let finished = DispatchSemaphore(value: 0)
    startThread {
      _ = pod.resolve(gated)
      finished.signal()
    }
    guard waitOrFail(started, "the build to start") else { return }
    pod.overrideProvider(gated, withValue: "override")
    release.signal()
    guard waitOrFail(finished, "the build to finish") else { return }
    #expect(pod.resolve(gated) == "override")
  }

  @Test("pods are safe to create and use from many tasks")
  func manyTasks() async {
    let provider = instanceProvider("shared")
    let pod = Pod()
    let ids = await withTaskGroup(of: ObjectIdentifier.self) { group in
      for _ in 0..<100 {
        group.addTask { ObjectIdentifier(pod.resolve(provider)) }
      }
      return await Set(group.reduce(into: []) { $0.append($1) })
    }
    #expect(ids.count == 1)
  }

  @Test("an override removed while it builds on another thread: the next resolve is the provider's")
  func overrideRemovedWhileBuilding() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let target = instanceProvider("target")
    let other = instanceProvider("other")
    let leaf = instanceProvider("leaf", scope: StepScope())
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    pod.overrideProvider(target, scope: LeafScope()) { context in
      entered.signal()
      waitWithWatchdog(proceed)
      return Instance("override", serial: 0, dependencies: [context.resolve(leaf)])
    }
    let result = Shared<Instance?>(nil)
    let done = startThread { result.withLock { $0 = pod.resolve(target) } }
    guard waitOrFail(entered, "the override's build") else { return }
    pod.removeOverrideProvider(target)
    // Churn records and scopes, so that memory the removed override used is reused.
    for round in 0..<200 {
      pod.overrideProvider(other, scope: round.isMultiple(of: 2) ? OtherStepScope() : LeafScope()) {
        _ in Instance("otherOverride", serial: round)
      }
      _ = pod.resolve(other)
      pod.removeOverrideProvider(other)
    }
    proceed.signal()
    guard waitOrFail(done, "the override's build") else { return }
    #expect(result.withLock { $0 }?.label == "override")
    #expect(pod.resolve(target).label == "target")
    let builtScopes = recorder.events.compactMap { event -> String? in
      if case .built(let provider, let scope) = event, provider == "target" { return scope }
      return nil
    }
    #expect(builtScopes == ["LeafScope", "SingletonScope"])
    #expect(pod.invariantViolations == [])
  }
}
