import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// Attacks on the performance change (273b685..): inline dependents, dependency arrays with
// `recordedBy`, `ObjectEntry`, unretained frame fields, the short always-new path, and a pod
// going away leaving its instances in its slots.

// MARK: Support

/// Counts live objects: a leak leaves it above zero, a double release crashes.
final class AttackLiveCount: Sendable {
  private let count = Shared(0)
  func up() { count.withLock { $0 += 1 } }
  func down() { count.withLock { $0 -= 1 } }
  var value: Int { count.withLock { $0 } }
}

final class AttackTracked: Sendable {
  let live: AttackLiveCount
  let serial: Int
  let dependencies: [AttackTracked]
  init(_ live: AttackLiveCount, serial: Int, dependencies: [AttackTracked] = []) {
    self.live = live
    self.serial = serial
    self.dependencies = dependencies
    live.up()
  }
  deinit { live.down() }
}

/// An instance that keeps the context its builder was given, and says when it goes.
final class GoneSignallingContextKeeper: Sendable {
  let context: BuildContext
  let gone: DispatchSemaphore
  init(_ context: BuildContext, gone: DispatchSemaphore) {
    self.context = context
    self.gone = gone
  }
  deinit { gone.signal() }
}

private func standardError(_ result: ExitTest.Result?) -> String {
  String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

// MARK: Globals for exit tests (exit tests cannot capture locals)

let attackGlobalPod = Pod()

/// Always-new ping-pong through contexts, each step on a thread of its own: the chain is
/// only visible through the frames' parents, and each build takes the short path.
let attackPingNew: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "attackPingNew"
) { context in
  let result = Shared(0)
  let done = startThread { result.withLock { $0 = context.resolve(attackPongNew) } }
  done.wait()
  return result.withLock { $0 }
}
let attackPongNew: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "attackPongNew"
) { context in context.resolve(attackPingNew) + 1 }

/// Always-new A resolves always-new B through its context (short path with a caller), B
/// resolves A through the global pod (general path, caller unknown).
let attackGlobalA: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "attackGlobalA"
) { context in context.resolve(attackGlobalB) }
let attackGlobalB: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "attackGlobalB"
) { _ in attackGlobalPod.resolve(attackGlobalA) + 1 }

/// A cached provider whose always-new dependency resolves it again through the global pod.
let attackCachedTop: Provider<Int> = Provider(name: "attackCachedTop") { _ in
  attackGlobalPod.resolve(attackNewMiddle)
}
let attackNewMiddle: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "attackNewMiddle"
) { _ in attackGlobalPod.resolve(attackCachedTop) }

/// An always-new provider resolving itself through the global pod, from a second thread
/// that the builder hands its context to and waits for.
let attackSelfHandOff: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "attackSelfHandOff"
) { context in
  let result = Shared(0)
  let done = startThread { result.withLock { $0 = context.resolve(attackSelfViaGlobal) } }
  done.wait()
  return result.withLock { $0 }
}
let attackSelfViaGlobal: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "attackSelfViaGlobal"
) { _ in attackGlobalPod.resolve(attackSelfHandOff) }

@Suite("Attacks on the performance change")
struct PerfChangeAttackTests {
  // MARK: A pod going away

  // The first build of `item` (stale after the scope clear, still running) keeps its
  // "built from" count on the parent's `base` slot after the child went away, so a later
  // discard of `base` walks into the dead child's slot: it must find nothing to dispose of.
  @Test("a child going away while a stale build runs in it disposes of its instance once")
  func staleBuildInReleasedChildDisposesOnce() {
    let root = Pod()
    let disposed = Shared<[Int]>([])
    let base = instanceProvider("base")
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let builds = Counter()
    let item = Provider(
      scope: StepScope(), name: "item",
      onDiscard: { instance in disposed.withLock { $0.append(instance.serial) } }
    ) { context in
      let from = context.resolve(base)
      let serial = builds.next()
      if serial == 1 {
        entered.signal()
        waitWithWatchdog(proceed)
      }
      return Instance("item", serial: serial, dependencies: [from])
    }
    let keptContext = Shared<BuildContext?>(nil)
    let keeper = Provider(scope: StepScope(), name: "keeper") { context in
      keptContext.withLock { $0 = context }
      return 0
    }
    var child: Pod? = Pod(parent: root, scopes: [StepScope()])
    _ = child!.resolve(keeper)
    // A context holds the child's engine, not the child: the child can go while it builds.
    let kept = keptContext.withLock { $0 }!
    let done = startThread { _ = kept.resolve(item) }
    guard waitOrFail(entered, "the first build") else { return }
    child!.clearCachedInstances(forScope: StepScope())  // the first build is stale now
    let second = child!.resolve(item)
    #expect(second.serial == 2)
    child = nil
    #expect(disposed.withLock { $0 } == [2])
    root.clearCachedInstance(of: base)
    #expect(disposed.withLock { $0 } == [2], "item#2 disposed again after its pod went away")
    proceed.signal()
    _ = waitOrFail(done, "the first build")
    #expect(root.invariantViolations == [])
    #expect(disposed.withLock { $0 } == [2])
    #expect(root.childCount == 0)
  }

  @Test("a child going away disposes of its instances once each, dependents first")
  func releasedChildDisposesDependentsFirst() {
    let root = Pod()
    let log = DisposalLog()
    let shared = instanceProvider("shared")  // the root's
    let a = Provider(scope: StepScope(), name: "a", onDiscard: log.record) { context in
      Instance("a", serial: 0, dependencies: [context.resolve(shared)])
    }
    let b = Provider(scope: StepScope(), name: "b", onDiscard: log.record) { context in
      Instance("b", serial: 0, dependencies: [context.resolve(a)])
    }
    // c lists a twice around b, which records a for itself in between.
    let c = Provider(scope: StepScope(), name: "c", onDiscard: log.record) { context in
      Instance(
        "c", serial: 0,
        dependencies: [context.resolve(a), context.resolve(b), context.resolve(a)])
    }
    let sharedFromChild = Provider(name: "sharedUser", onDiscard: log.record) { context in
      Instance("sharedUser", serial: 0, dependencies: [context.resolve(shared)])
    }
    weak var weakC: Instance?
    do {
      let child = Pod(parent: root, scopes: [StepScope()])
      let made = child.resolve(c)
      weakC = made
      _ = child.resolve(sharedFromChild)  // cached in the root, linked in the child
      #expect(root.invariantViolations == [])
    }
    #expect(weakC == nil)
    #expect(log.take() == ["c#0", "b#0", "a#0"])
    #expect(root.invariantViolations == [])
    #expect(root.childCount == 0)
    // The root's instances are untouched, and the shared one still works.
    let again = root.resolve(sharedFromChild)
    #expect(again.dependencies.first === root.resolve(shared))
    root.clearCachedInstance(of: shared)
    #expect(log.take() == ["sharedUser#0"])
    #expect(root.invariantViolations == [])
  }

  @Test("children released on several threads while their instances are shared and kept")
  func childrenReleasedWhileShared() {
    let root = Pod()
    let live = AttackLiveCount()
    let disposed = Shared<[Int]>([])
    let serials = Counter()
    let shared = Provider(scope: OtherStepScope(), name: "shared") { _ in
      AttackTracked(live, serial: serials.next())
    }
    let own = Provider(
      scope: StepScope(), name: "own",
      onDiscard: { value in disposed.withLock { $0.append(value.serial) } }
    ) { context in
      AttackTracked(live, serial: serials.next(), dependencies: [context.resolve(shared)])
    }
    let keptContexts = Shared<[BuildContext]>([])
    let keeper = Provider(scope: StepScope(), name: "keeper") { context in
      keptContexts.withLock { $0.append(context) }
      return AttackTracked(live, serial: serials.next(), dependencies: [context.resolve(own)])
    }
    onThreads(4) { index in
      for round in 0..<200 {
        let child = Pod(parent: root, scopes: [StepScope()])
        let value = child.resolve(keeper)
        #expect(value.dependencies.count == 1)
        _ = child.resolve(own)
        if round % 7 == index { root.clearCachedInstances(forScope: OtherStepScope()) }
        if round % 11 == 0 {
          // A context kept past its child: resolves like a dead pod, caches nothing.
          let kept = keptContexts.withLock { $0.randomElement() }
          _ = kept?.resolve(own)
        }
      }
    }
    #expect(root.invariantViolations == [])
    #expect(root.childCount == 0)
    let serialsDisposed = disposed.withLock { $0 }
    #expect(Set(serialsDisposed).count == serialsDisposed.count, "a hook ran twice")
    keptContexts.withLock { $0 = [] }
    root.clearCachedInstances(forScope: OtherStepScope())
    #expect(live.value == 0, "instances left alive after their pods went away")
  }

  // MARK: Unretained frame fields

  @Test("the pod goes away while an always-new build from a kept context runs on a thread")
  func podReleasedWhileAlwaysNewBuildRuns() {
    let keptContext = Shared<BuildContext?>(nil)
    let keeper = Provider(name: "keeper") { context in
      keptContext.withLock { $0 = context }
      return 0
    }
    let cached = instanceProvider("cached")
    let plainNew = instanceProvider("plainNew", scope: AlwaysCreateNewScope())
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let slowNew = Provider(scope: AlwaysCreateNewScope(), name: "slowNew") { context in
      entered.signal()
      waitWithWatchdog(proceed)
      // The pod is gone by now: each resolve builds afresh and caches nothing.
      let first = context.resolve(cached)
      let second = context.resolve(cached)
      let fresh = context.resolve(plainNew)
      return Instance("slowNew", serial: 0, dependencies: [first, second, fresh])
    }
    weak var weakCached: Instance?
    var pod: Pod? = Pod()
    _ = pod!.resolve(keeper)
    weakCached = pod!.resolve(cached)
    #expect(weakCached != nil)
    let kept = keptContext.withLock { $0 }!
    let result = Shared<Instance?>(nil)
    let done = startThread { result.withLock { $0 = kept.resolve(slowNew) } }
    guard waitOrFail(entered, "the always-new build") else { return }
    pod = nil
    #expect(weakCached == nil, "the pod's instance outlived the pod")
    #expect(kept.pod == nil)
    proceed.signal()
    guard waitOrFail(done, "the always-new build") else { return }
    let value = result.withLock { $0 }
    #expect(value?.label == "slowNew")
    #expect(value?.dependencies[0] !== value?.dependencies[1])
    #expect(value?.dependencies[2].label == "plainNew")
    // Still usable from several threads at once.
    onThreads(4) { _ in
      for _ in 0..<200 {
        #expect(kept.resolve(plainNew).label == "plainNew")
        #expect(kept.resolve(cached).label == "cached")
      }
    }
  }

  @Test("a context kept past its build outlives its provider, and is used from threads")
  func providerReleasedWhileContextKept() {
    let pod = Pod()
    let keptContext = Shared<BuildContext?>(nil)
    weak var weakProvider: Provider<Instance>?
    let cached = instanceProvider("cached")
    do {
      // Always-new: no slot holds the provider's record, so it goes with the provider.
      let local = Provider(scope: AlwaysCreateNewScope(), name: "local") { context in
        keptContext.withLock { $0 = context }
        return Instance("local", serial: 0, dependencies: [context.resolve(cached)])
      }
      weakProvider = local
      _ = pod.resolve(local)
      let scoped = Provider(scope: StepScope(), name: "scoped") { context in
        Instance("scoped", serial: 0, dependencies: [context.resolve(local)])
      }
      _ = pod.resolve(scoped)
      pod.clearCachedInstances(forScope: StepScope())
    }
    #expect(weakProvider == nil)
    let kept = keptContext.withLock { $0 }!
    #expect(!kept.isStillWanted)
    let again = instanceProvider("again", scope: AlwaysCreateNewScope(), dependencies: [cached])
    let chain = instanceProvider("chain", dependencies: [again])
    onThreads(4) { index in
      for round in 0..<300 {
        #expect(kept.resolve(again).dependencies[0].label == "cached")
        if (round + index) % 50 == 0 { pod.clearCachedInstance(of: cached) }
        _ = kept.resolve(chain)
      }
    }
    #expect(!kept.isStillWanted)
    #expect(pod.invariantViolations == [])
  }

  @Test("an override removed while its build runs on another thread, in an observed pod")
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

  // Meant for the thread sanitizer: a task made inside an async build inherits the build's
  // frame, and reads `frame.pod` outside the lock while the build ends and clears it.
  @Test("a task spawned by an async builder resolves while the build ends")
  func taskInheritingFrameResolvesWhileBuildEnds() async throws {
    let pod = Pod()
    let cached = instanceProvider("cached")
    let first = pod.resolve(cached)
    let stop = Shared(false)
    let looping = DispatchSemaphore(value: 0)
    let spawned = Shared<Task<Int, Never>?>(nil)
    let spawner = AsyncProvider(name: "spawner") { _ in
      let task = Task { () -> Int in
        var rounds = 0
        looping.signal()
        while !stop.withLock({ $0 }), rounds < 200_000 {
          if pod.resolve(cached) !== first { return -1 }
          rounds += 1
        }
        return rounds
      }
      spawned.withLock { $0 = task }
      await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
          waitWithWatchdog(looping)
          continuation.resume()
        }
      }
      return 1
    }
    // Another build keeps builds running, so the spawned task keeps looking at its frame.
    let holdProceed = DispatchSemaphore(value: 0)
    let holdEntered = DispatchSemaphore(value: 0)
    let holder = Provider(name: "holder") { _ in
      holdEntered.signal()
      waitWithWatchdog(holdProceed)
      return 0
    }
    let holding = startThread { _ = pod.resolve(holder) }
    #expect(waitWithWatchdog(holdEntered))
    #expect(try await pod.resolve(spawner) == 1)
    for _ in 0..<1_000 { #expect(pod.resolve(cached) === first) }
    stop.withLock { $0 = true }
    let rounds = await spawned.withLock { $0 }!.value
    holdProceed.signal()
    #expect(waitWithWatchdog(holding))
    #expect(rounds > 0)
    #expect(pod.invariantViolations == [])
  }

  // Instance -> context -> frame -> slot, or async build (its result) -> instance: a
  // frame lets go of both when its build ends.
  @Test(
    "an instance that keeps its builder's context is freed with its pod",
    arguments: ["sync", "async"])
  func instanceKeepingItsContextIsFreed(kind: String) async throws {
    let gone = DispatchSemaphore(value: 0)
    do {
      let pod = Pod()
      if kind == "sync" {
        let provider = Provider(scope: StepScope(), name: "keeper") { context in
          GoneSignallingContextKeeper(context, gone: gone)
        }
        let kept = pod.resolve(provider)
        #expect(pod.resolve(provider) === kept)
      } else {
        let provider = AsyncProvider(scope: StepScope(), name: "keeper") { context in
          GoneSignallingContextKeeper(context, gone: gone)
        }
        let kept = try await pod.resolve(provider)
        #expect(try await pod.resolve(provider) === kept)
      }
      pod.clearCachedInstances(forScope: StepScope())
    }
    // A signal from the instance's deinit, not a delay: it comes at once unless leaked.
    #expect(
      gone.wait(timeout: .now() + .seconds(5)) == .success,
      "the \(kind) instance leaked through its kept context")
  }

  // MARK: Cycles through the short path

  @Test("always-new providers needing each other across threads through contexts stop")
  func alwaysNewPingPongAcrossThreads() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = Pod().resolve(attackPingNew)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: "))
    #expect(message.contains("attackPingNew ("))
    #expect(message.contains("attackPongNew ("))
  }

  @Test("an always-new chain closed through the global pod stops with the chain")
  func alwaysNewChainThroughGlobalPod() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = attackGlobalPod.resolve(attackGlobalA)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: "))
    #expect(message.contains("attackGlobalA ("))
    #expect(message.contains("attackGlobalB ("))
  }

  @Test("a cached provider reached again through an always-new one and the global pod stops")
  func cachedThroughAlwaysNewThroughGlobalPod() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = attackGlobalPod.resolve(attackCachedTop)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: attackCachedTop ("))
    #expect(message.contains("-> attackNewMiddle ("))
    #expect(message.contains("-> attackCachedTop\n"))
  }

  @Test("an always-new provider needing itself through a handed-off context and the global pod")
  func alwaysNewSelfThroughHandOffAndGlobalPod() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = attackGlobalPod.resolve(attackSelfHandOff)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle"))
    #expect(message.contains("attackSelfHandOff"))
  }

  @Test("a long chain of distinct always-new providers is not mistaken for a cycle")
  func longAlwaysNewChainIsFine() {
    let pod = Pod()
    var chain = [instanceProvider("new0", scope: AlwaysCreateNewScope())]
    for index in 1..<100 {
      chain.append(
        instanceProvider("new\(index)", scope: AlwaysCreateNewScope(), dependencies: [chain.last!]))
    }
    let top = instanceProvider("top", scope: StepScope(), dependencies: [chain.last!])
    var depth = 0
    var current: Instance? = pod.resolve(chain.last!)
    while let next = current?.dependencies.first {
      depth += 1
      current = next
    }
    #expect(depth == 99)
    let cachedTop = pod.resolve(top)
    #expect(pod.resolve(top) === cachedTop)
    #expect(pod.invariantViolations == [])
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(top) !== cachedTop)
    #expect(pod.invariantViolations == [])
  }

  // MARK: Cached values: leaks and double releases

  @Test(
    "cached values resolved on threads while cleared are neither leaked nor released twice",
    arguments: [
      "class", "class with a hook", "existential", "struct", "weak", "withValue", "child link",
    ])
  func cachedValuesUnderClears(kind: String) {
    let live = AttackLiveCount()
    let serials = Counter()
    let disposed = Shared<[Int]>([])
    do {
      let root = Pod()
      let pod = kind == "child link" ? Pod(parent: root) : root
      let plain = Provider(scope: StepScope(), name: "plain") { _ in
        AttackTracked(live, serial: serials.next())
      }
      let hooked = Provider(
        scope: StepScope(), name: "hooked",
        onDiscard: { value in disposed.withLock { $0.append(value.serial) } }
      ) { _ in AttackTracked(live, serial: serials.next()) }
      let existential = Provider<any Sendable>(scope: StepScope(), name: "existential") { _ in
        AttackTracked(live, serial: serials.next())
      }
      struct Holder: Sendable { let tracked: AttackTracked }
      let holder = Provider(scope: StepScope(), name: "holder") { _ in
        Holder(tracked: AttackTracked(live, serial: serials.next()))
      }
      let weak = Provider(scope: WeakScope(), name: "weak") { _ in
        AttackTracked(live, serial: serials.next())
      }
      if kind == "withValue" {
        pod.overrideProvider(plain, withValue: AttackTracked(live, serial: serials.next()))
      }
      // Threads reach the pods through a box emptied after them: a finished thread may still
      // hold its closure for a moment, and must not keep a pod alive past the check.
      let pods = Shared<(root: Pod, pod: Pod)?>((root, pod))
      let resolve: @Sendable (Pod) -> AttackTracked = { pod in
        switch kind {
        case "class with a hook": return pod.resolve(hooked)
        case "existential": return pod.resolve(existential) as! AttackTracked
        case "struct": return pod.resolve(holder).tracked
        case "weak": return pod.resolve(weak)
        default: return pod.resolve(plain)
        }
      }
      onThreads(4) { index in
        guard let (root, pod) = pods.withLock({ $0 }) else { return }
        var held: [AttackTracked] = []
        for round in 0..<2_000 {
          let value = resolve(pod)
          if round % 100 == 0 { held.append(value) }
          if index == 0, round % 50 == 0 {
            if kind == "child link" {
              root.clearCachedInstances(forScope: StepScope())
            } else {
              pod.clearCachedInstances(forScope: StepScope())
            }
          }
          if kind == "weak", round % 3 == 0 { held.removeAll() }
        }
        #expect(held.allSatisfy { $0.live === live })
      }
      #expect(root.invariantViolations == [])
      let hooks = disposed.withLock { $0 }
      #expect(Set(hooks).count == hooks.count, "a hook ran twice")
      pods.withLock { $0 = nil }
      _ = resolve(pod)
      if kind == "withValue" {
        #expect(resolve(pod).serial == 1)
      }
    }
    #expect(live.value == 0, "\(live.value) instances leaked")
    let hooks = disposed.withLock { $0 }
    #expect(Set(hooks).count == hooks.count, "a hook ran twice")
    if kind == "class with a hook" {
      #expect(!hooks.isEmpty)
    }
  }

  @Test("a class instance cached without a hook is the same object on every path")
  func objectEntryOnEveryPath() async throws {
    let live = AttackLiveCount()
    do {
      let recorder = EventRecorder()
      let observed = Pod(observer: recorder)
      let plain = Pod()
      let child = Pod(parent: plain)
      let sync = Provider(name: "sync") { _ in AttackTracked(live, serial: 0) }
      let asyncProvider = AsyncProvider(name: "async") { _ in AttackTracked(live, serial: 1) }
      let user = Provider(name: "user") { context in
        AttackTracked(
          live, serial: 2, dependencies: [context.resolve(sync), context.resolve(sync)])
      }
      for pod in [observed, plain, child] {
        let first = pod.resolve(sync)
        #expect(pod.resolve(sync) === first)
        let made = pod.resolve(user)
        #expect(made.dependencies.allSatisfy { $0 === first })
        let asyncFirst = try await pod.resolve(asyncProvider)
        #expect(try await pod.resolve(asyncProvider) === asyncFirst)
      }
      #expect(child.resolve(sync) === plain.resolve(sync))
      #expect(observed.invariantViolations == [])
      #expect(plain.invariantViolations == [])
    }
    #expect(live.value == 0)
  }

  // MARK: Duplicated dependencies

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

  @Test("duplicated dependencies of an instance cached in a child, then the child goes")
  func duplicateDependenciesMovedToChild() {
    let root = Pod()
    let log = DisposalLog()
    let rootBase = instanceProvider("rootBase")
    let childBase = Provider(scope: StepScope(), name: "childBase", onDiscard: log.record) {
      context in Instance("childBase", serial: 0, dependencies: [context.resolve(rootBase)])
    }
    let middle = Provider(scope: StepScope(), name: "middle", onDiscard: log.record) {
      context in
      Instance(
        "middle", serial: 0,
        dependencies: [context.resolve(rootBase), context.resolve(childBase)])
    }
    // Singleton, placed in the root, cached in the child: built from the child's own.
    let top = Provider(name: "top", onDiscard: log.record) { context in
      Instance(
        "top", serial: 0,
        dependencies: [
          context.resolve(rootBase), context.resolve(childBase), context.resolve(middle),
          context.resolve(rootBase), context.resolve(childBase),
        ])
    }
    do {
      let child = Pod(parent: root, scopes: [StepScope()])
      let made = child.resolve(top)
      #expect(child.resolve(top) === made)
      #expect(root.invariantViolations == [])
      child.clearCachedInstance(of: childBase)
      #expect(log.take() == ["top#0", "middle#0", "childBase#0"])
      #expect(root.invariantViolations == [])
      _ = child.resolve(top)
      #expect(root.invariantViolations == [])
      #expect(root.slotCount == 1)
    }
    #expect(log.take() == ["top#0", "middle#0", "childBase#0"])
    #expect(root.invariantViolations == [])
    #expect(root.slotCount == 1)
    root.clearCachedInstance(of: rootBase)
    #expect(log.take() == [])
    #expect(root.invariantViolations == [])
  }

  @Test("many threads recording the same dependencies between each other's builds")
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
    #expect(pod.slotCount == 0)
  }
}
