import Dispatch
import Testing

@testable import ProviderPod

// A review of two changes: a cached entry keeps its scope only when an override gives another
// than its provider's (`CacheEntry.overriddenScope`), and the tree's lock and state belong to
// the app pod's record (`PodRecord.tree`), every engine keeping only their addresses. These
// tests try to make the library report a wrong scope, use the lock after it went, or keep it
// forever, through the public API, reaching into the engine only to see the lock go.

@Suite(
  "Review: the scope an override gives is the one reported and cleared", .timeLimit(.minutes(10)))
struct TreeLockReviewScopeTests {
  @Test("overrides giving another scope, the same kind as another, or their provider's own")
  func overriddenScopesInEventsGraphAndClears() {
    // Provider in SingletonScope, overridden into FlowScope: cleared with FlowScope.
    let intoFlow = instanceProvider("intoFlow")
    // Provider in StepScope (under FlowScope), overridden into SingletonScope: never cleared.
    let intoSingleton = instanceProvider("intoSingleton", scope: StepScope())
    // Provider in StepScope, overridden with a StepScope given explicitly.
    let explicitSame = instanceProvider("explicitSame", scope: StepScope())
    // Provider in LeafScope, overridden with no scope: its own.
    let ownScope = instanceProvider("ownScope", scope: LeafScope())
    let recorder = EventRecorder()
    let pod = Pod(
      overrides: [
        intoFlow.override(scope: FlowScope()) { _ in Instance("intoFlow", serial: 1) },
        intoSingleton.override(scope: SingletonScope()) { _ in
          Instance("intoSingleton", serial: 1)
        },
        explicitSame.override(scope: StepScope()) { _ in Instance("explicitSame", serial: 1) },
        ownScope.override { _ in Instance("ownScope", serial: 1) },
      ], observer: recorder)
    _ = recorder.take()
    for provider in [intoFlow, intoSingleton, explicitSame, ownScope] { _ = pod.resolve(provider) }
    #expect(
      recorder.take() == [
        .built(provider: "intoFlow", scope: "FlowScope"),
        .built(provider: "intoSingleton", scope: "SingletonScope"),
        .built(provider: "explicitSame", scope: "StepScope"),
        .built(provider: "ownScope", scope: "LeafScope"),
      ])
    let nodes = Set(pod.dependencyGraph().nodes.map { "\($0.provider) in \($0.scope)" })
    #expect(
      nodes == [
        "intoFlow in FlowScope", "intoSingleton in SingletonScope",
        "explicitSame in StepScope", "ownScope in LeafScope",
      ])
    #expect(pod.invariantViolations == [])
    // FlowScope reaches StepScope and LeafScope, but not what was overridden into a singleton.
    pod.clearCachedInstances(forScope: FlowScope())
    let expected: [PodEvent] = [
      .discarded(provider: "intoFlow", scope: "FlowScope", reason: .scopeCleared),
      .discarded(provider: "explicitSame", scope: "StepScope", reason: .scopeCleared),
      .discarded(provider: "ownScope", scope: "LeafScope", reason: .scopeCleared),
    ]
    #expect(Set(recorder.take().map { "\($0)" }) == Set(expected.map { "\($0)" }))
    #expect(pod.invariantViolations == [])
    // The singleton is reused, not rebuilt; the others are built again in their scopes.
    for provider in [intoFlow, intoSingleton, explicitSame] { _ = pod.resolve(provider) }
    #expect(
      recorder.take() == [
        .built(provider: "intoFlow", scope: "FlowScope"),
        .reused(provider: "intoSingleton", scope: "SingletonScope"),
        .built(provider: "explicitSame", scope: "StepScope"),
      ])
    // Removing the override discards the instance it built, in the scope it was cached in.
    pod.removeOverrideProvider(intoSingleton)
    #expect(
      recorder.take().contains(
        .discarded(provider: "intoSingleton", scope: "SingletonScope", reason: .overrideChanged)))
    _ = pod.resolve(intoSingleton)
    #expect(recorder.take().contains(.built(provider: "intoSingleton", scope: "StepScope")))
    #expect(pod.invariantViolations == [])
  }

  @Test("a family overridden into another scope, and a throwing provider into WeakScope")
  func familyAndWeakOverrides() throws {
    let family = ProviderFamily<Int, Instance>(name: "member") { _, index in
      Instance("member", serial: index)
    }
    final class Box: Sendable {}
    let throwing = ThrowingProvider<Box>(name: "throwing") { _ in Box() }
    let recorder = EventRecorder()
    let pod = Pod(
      overrides: [
        family.override(scope: StepScope()) { _, index in Instance("member", serial: index) },
        throwing.override(scope: WeakScope()) { _ in Box() },
      ], observer: recorder)
    _ = recorder.take()
    _ = pod.resolve(family(1))
    _ = pod.resolve(family(2))
    var kept: Box? = try pod.resolve(throwing)
    #expect(try pod.resolve(throwing) === kept)
    let built = recorder.take().filter { if case .built = $0 { true } else { false } }
    #expect(built.count == 3)
    #expect(built.allSatisfy { "\($0)".contains("StepScope") || "\($0)".contains("WeakScope") })
    #expect(built.contains(.built(provider: "throwing", scope: "WeakScope")))
    let scopes = Set(pod.dependencyGraph().nodes.map(\.scope))
    #expect(scopes == ["StepScope", "WeakScope"])
    pod.clearCachedInstances(forScope: FlowScope())
    let discarded = recorder.take()
    #expect(discarded.count == 2)
    #expect(
      discarded.allSatisfy {
        if case .discarded(_, "StepScope", .scopeCleared) = $0 { true } else { false }
      })
    // The weak instance was not cleared with FlowScope, and goes when nothing holds it.
    #expect(try pod.resolve(throwing) === kept)
    weak let gone = kept
    kept = nil
    #expect(gone == nil)
    // Resolved again, it is built afresh, in the scope the override gave.
    _ = try pod.resolve(throwing)
    #expect(recorder.take().contains(.built(provider: "throwing", scope: "WeakScope")))
    #expect(pod.invariantViolations == [])
  }

  @Test("an async provider overridden into another scope")
  func asyncOverride() async throws {
    let provider = AsyncProvider<Instance>(name: "async") { _ in Instance("async", serial: 0) }
    let recorder = EventRecorder()
    let pod = Pod(
      overrides: [provider.override(scope: FlowScope()) { _ in Instance("async", serial: 1) }],
      observer: recorder)
    _ = recorder.take()
    let first = try await pod.resolve(provider)
    #expect(recorder.take() == [.built(provider: "async", scope: "FlowScope")])
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(
      recorder.take() == [.discarded(provider: "async", scope: "FlowScope", reason: .scopeCleared)])
    #expect(try await pod.resolve(provider) !== first)
    #expect(pod.invariantViolations == [])
  }

  @Test("captive dependencies are told from the scopes overrides gave")
  func captiveDependencyOfOverriddenScopes() {
    // The dependency's provider is a singleton, its override puts it in StepScope.
    let dependency = instanceProvider("dependency")
    let holder = instanceProvider("holder", scope: LeafScope(), dependencies: [dependency])
    let recorder = EventRecorder()
    let pod = Pod(
      overrides: [
        dependency.override(scope: StepScope()) { _ in Instance("dependency", serial: 1) }
      ], observer: recorder)
    // In LeafScope (under StepScope), a StepScope dependency is not captive.
    _ = pod.resolve(holder)
    #expect(!recorder.take().contains { if case .captiveDependency = $0 { true } else { false } })
    // Overridden into a singleton, the holder holds it captive.
    pod.overrideProvider(holder, scope: SingletonScope()) { context in
      Instance("holder", serial: 2, dependencies: [context.resolve(dependency)])
    }
    _ = pod.resolve(holder)
    #expect(
      recorder.take().contains(
        .captiveDependency(
          holder: "holder", holderScope: "SingletonScope",
          dependency: "dependency", dependencyScope: "StepScope")))
    #expect(pod.invariantViolations == [])
  }

  @Test("a child pod that shares its parent's overridden instance, and a request's own override")
  func childPodsAndOverriddenScopes() async throws {
    let shared = instanceProvider("shared")
    let handler = instanceProvider("handler", scope: StepScope(), dependencies: [shared])
    let appEvents = EventRecorder()
    let app = Pod(
      overrides: [shared.override(scope: FlowScope()) { _ in Instance("shared", serial: 1) }],
      observer: appEvents)
    let first = app.resolve(shared)
    let child = Pod(parent: app, scopes: [StepScope()])
    #expect(child.resolve(shared) === first)
    // The child's own instance, built from the app's, shows the app's in the scope it is in.
    #expect(child.resolve(handler).dependencies.first === first)
    #expect(
      child.dependencyGraph().edges.map { "\($0.dependent.scope) -> \($0.dependency.scope)" }
        == ["StepScope -> FlowScope"])
    _ = appEvents.take()
    // Cleared in the app, the instance the child shares goes too.
    app.clearCachedInstances(forScope: FlowScope())
    #expect(
      appEvents.take().contains(
        .discarded(provider: "shared", scope: "FlowScope", reason: .scopeCleared)))
    #expect(child.resolve(shared) !== first)
    #expect(app.invariantViolations == [])

    // A request pod (a child of the app) overrides its handler into LeafScope.
    let requestEvents = EventRecorder()
    do {
      let request = Pod(
        parent: app, scopes: [StepScope()],
        overrides: [
          handler.override(scope: LeafScope()) { context in
            Instance("handler", serial: 9, dependencies: [context.resolve(shared)])
          }
        ], observer: requestEvents)
      _ = request.resolve(handler)
      #expect(requestEvents.take().contains(.built(provider: "handler", scope: "LeafScope")))
      #expect(
        request.dependencyGraph().nodes.contains {
          $0.provider == "handler" && $0.scope == "LeafScope"
        })
      _ = requestEvents.take()
      try await request.shutdown()
      #expect(
        requestEvents.take().contains(
          .discarded(provider: "handler", scope: "LeafScope", reason: .podShutDown)))
    }
    #expect(app.invariantViolations == [])
  }
}

// A hang watchdog, with room to spare: the async tests wait on gates that a bug could leave
// shut.
@Suite(
  "Review: the tree's lock lasts while anything can use it, and then goes",
  .timeLimit(.minutes(10)))
struct TreeLockReviewLifetimeTests {
  private let repository = Provider(name: "repository") { _ in Counted() }
  private let fresh = Provider(scope: AlwaysCreateNewScope(), name: "fresh") { _ in Counted() }
  private let scoped = Provider(scope: FlowScope(), name: "scoped") { _ in Counted() }

  /// A request's handler that keeps its context, with whatever the test wants built from it.
  private func keeper(scope: any ProviderScope = AppRequestScope()) -> Provider<ContextKeeper> {
    let repository = self.repository
    return Provider(scope: scope, name: "keeper") { context in
      _ = context.resolve(repository)
      return ContextKeeper(context)
    }
  }

  @Test("a context kept past its request and its app does everything a pod does, then lets go")
  func keptContextDoesEverything() async throws {
    weak var lock: Locked<EngineState>?
    var context: BuildContext?
    do {
      let app = Pod()
      lock = app.engine.pod.tree
      let request = Pod(parent: app, scopes: [AppRequestScope()])
      context = request.resolve(keeper()).context
    }
    #expect(lock != nil)
    let kept = context!
    context = nil
    #expect(kept.pod == nil)
    // A pod that went away caches nothing: each resolve through it builds afresh.
    #expect(kept.resolve(repository) !== kept.resolve(repository))
    #expect(kept.resolve(fresh) !== kept.resolve(fresh))
    #expect(kept.resolve(scoped) !== kept.resolve(scoped))
    let async = AsyncProvider<Counted>(name: "async") { _ in Counted() }
    let one = try await kept.resolve(async)
    #expect(try await kept.resolve(async) !== one)
    let throwing = ThrowingProvider<Int>(name: "throwing") { _ in 7 }
    #expect(try kept.resolve(throwing) == 7)
    let family = ProviderFamily<Int, Int>(name: "family") { _, argument in argument * 2 }
    #expect(kept.resolve(family(4)) == 8)
    kept.overrideProvider(repository) { _ in Counted() }
    kept.removeOverrideProvider(repository)
    kept.clearCachedInstances(forScope: FlowScope())
    kept.clearCachedInstance(of: repository)
    _ = kept.dependencyGraph()
    var iterator = kept.instances(of: repository).makeAsyncIterator()
    // The pod is gone: its instances end at once.
    let first = await iterator.next()
    #expect(first == nil)
    _ = consume iterator
    #expect(lock != nil)
    _ = consume kept
    #expect(lock == nil)
  }

  @Test("the last reference goes inside an async onDiscard hook, after both pods went")
  func lastReferenceInAsyncHook() async {
    let gate = AsyncGate()
    let hookStarted = AsyncGate()
    let resolvedInHook = Counter()
    let repository = self.repository
    let handler = Provider(
      scope: AppRequestScope(), name: "handler",
      onDiscard: { (kept: ContextKeeper) async throws in
        await hookStarted.open()
        await gate.wait()
        // The pods went; the hook's instance keeps the context, and with it the tree.
        _ = kept.context.resolve(repository)
        resolvedInHook.next()
      }
    ) { context in ContextKeeper(context) }
    weak var lock: Locked<EngineState>?
    do {
      let app = Pod()
      lock = app.engine.pod.tree
      let request = Pod(parent: app, scopes: [AppRequestScope()])
      _ = request.resolve(handler)
    }
    await hookStarted.wait()
    #expect(lock != nil)
    await gate.open()
    #expect(await eventually { lock == nil })
    #expect(resolvedInHook.value == 1)
  }

  @Test("16 threads let go of the last contexts of a tree at once, 100 times")
  func lastContextsOnManyThreads() {
    let threads = 16
    let rounds = 100
    let keeper = self.keeper()
    let fresh = self.fresh
    let contexts = Shared<[BuildContext]>([])
    let locks = Shared<[WeakLock]>([])
    let barrier = Barrier(threads + 1)
    let wrong = Counter()
    final class Ready: @unchecked Sendable { var done = false }
    let finished = Ready()
    let runners = (0..<threads).map { index in
      startThread {
        while true {
          barrier.arrive()  // a round's contexts are ready, or the test is over
          if finished.done { return }
          let mine = contexts.withLock { $0[index] }
          barrier.arrive()  // every thread has taken its context
          barrier.arrive()  // the pods are gone: the contexts are the tree's last holders
          if mine.resolve(fresh).serial <= 0 { wrong.next() }
          _ = consume mine
          barrier.arrive()  // every thread has let go
        }
      }
    }
    for _ in 0..<rounds {
      do {
        let app = Pod()
        locks.withLock { $0.append(WeakLock(app.engine.pod.tree)) }
        let made = (0..<threads).map { _ in
          Pod(parent: app, scopes: [AppRequestScope()]).resolve(keeper).context
        }
        contexts.withLock { $0 = made }
      }
      barrier.arrive()
      barrier.arrive()
      contexts.withLock { $0 = [] }
      barrier.arrive()
      barrier.arrive()
    }
    finished.done = true
    barrier.arrive()
    for done in runners { _ = waitOrFail(done, "a thread letting go of contexts") }
    #expect(wrong.value == 0)
    #expect(locks.withLock { $0.count } == rounds)
    #expect(locks.withLock { $0.filter { $0.lock != nil }.count } == 0)
  }

  @Test("an async build whose waiting tasks hold the last pods, one of them cancelled")
  func asyncBuildOutlivesPods() async throws {
    let gate = AsyncGate()
    let started = AsyncGate()
    let async = AsyncProvider<Counted>(name: "slow") { _ in
      await started.open()
      await gate.wait()
      return Counted()
    }
    weak var lock: Locked<EngineState>?
    let (waiting, cancelled) = {
      let app = Pod()
      lock = app.engine.pod.tree
      let request = Pod(parent: app, scopes: [AppRequestScope()])
      let waiting = Task { try await request.resolve(async) }
      let cancelled = Task { try await request.resolve(async) }
      return (waiting, cancelled)
    }()
    await started.wait()
    cancelled.cancel()
    do {
      _ = try await cancelled.value
    } catch {
      #expect(error is CancellationError)
    }
    #expect(lock != nil)
    await gate.open()
    let value = try await waiting.value
    #expect(value.serial > 0)
    #expect(await eventually { lock == nil })
  }

  @Test("every waiter of an async build cancelled while its pods go")
  func asyncBuildAbandonedAfterPodsGo() async {
    let gate = AsyncGate()
    let started = AsyncGate()
    let async = AsyncProvider<Counted>(name: "abandoned") { _ in
      await started.open()
      await gate.wait()
      return Counted()
    }
    weak var lock: Locked<EngineState>?
    let tasks = {
      let app = Pod()
      lock = app.engine.pod.tree
      return (0..<4).map { _ in Task { try await app.resolve(async) } }
    }()
    await started.wait()
    for task in tasks { task.cancel() }
    for task in tasks { _ = try? await task.value }
    await gate.open()
    #expect(await eventually { lock == nil })
  }

  @Test("an instance watcher parked while its pods go ends, and lets go of the tree")
  func watcherEndsWithPods() async {
    let repository = self.repository
    weak var lock: Locked<EngineState>?
    let holder = PodTreeHolder()
    holder.parent = Pod()
    holder.child = Pod(parent: holder.parent)
    lock = holder.parent.engine.pod.tree
    let gotFirst = AsyncGate()
    let watching = Task { [instances = holder.child.instances(of: repository)] in
      var count = 0
      for await _ in instances {
        count += 1
        if count == 1 { await gotFirst.open() }
      }
      return count
    }
    await gotFirst.wait()
    // An iterator nobody iterates keeps the tree until it goes.
    var idle: ProviderInstances<Counted, Never>.AsyncIterator? = holder.child.instances(
      of: repository
    ).makeAsyncIterator()
    holder.parent = nil
    holder.child = nil
    #expect(await watching.value == 1)
    #expect(lock != nil)
    _ = idle
    idle = nil
    #expect(lock == nil)
  }

  @Test("a retry back-off sleeping while its pod goes")
  func retryWhilePodGoes() async {
    let sleeping = AsyncGate()
    let wake = AsyncGate()
    let attempts = Counter()
    struct Flaky: Error {}
    let flaky = AsyncProvider<Counted>(
      name: "flaky",
      retry: .exponentialBackoff(
        maxAttempts: 3,
        sleep: { _ in
          await sleeping.open()
          await wake.wait()
        })
    ) { _ in
      if attempts.next() == 1 { throw Flaky() }
      return Counted()
    }
    weak var lock: Locked<EngineState>?
    let task = {
      let app = Pod()
      lock = app.engine.pod.tree
      return Task { try await app.resolve(flaky) }
    }()
    await sleeping.wait()
    // The only waiter leaves: the build is abandoned, and the task lets go of the app's pod,
    // which goes while the build sleeps before its retry.
    task.cancel()
    _ = try? await task.value
    #expect(lock != nil)
    await wake.open()
    #expect(await eventually { lock == nil })
    #expect(attempts.value <= 2)
  }

  @Test("a chain of 3,000 pods, and a context of its deepest, let go in every order")
  func deepChainsInEveryOrder() {
    let keeper = self.keeper(scope: SingletonScope())
    let fresh = self.fresh
    for order in 0..<3 {
      weak var lock: Locked<EngineState>?
      let holder = Shared<(root: Pod?, leaf: Pod?, context: BuildContext?)>((nil, nil, nil))
      do {
        let root = Pod()
        lock = root.engine.pod.tree
        var pod = root
        for _ in 0..<3_000 { pod = Pod(parent: pod) }
        // The deepest pod builds its own keeper, whose context is that pod's.
        pod = Pod(parent: pod, overrides: [keeper.override { ContextKeeper($0) }])
        let context = pod.resolve(keeper).context
        holder.withLock { $0 = (root, pod, context) }
      }
      #expect(lock != nil)
      // On a thread with a small stack, so that recursion in letting go would overflow it.
      runUntilThreadEnds(stackSize: 256 * 1024) {
        switch order {
        case 0:
          holder.withLock { $0.root = nil }
          holder.withLock { $0.leaf = nil }
          holder.withLock { $0.context = nil }
        case 1:
          holder.withLock { $0.context = nil }
          holder.withLock { $0.leaf = nil }
          holder.withLock { $0.root = nil }
        default:
          holder.withLock { $0.leaf = nil }
          holder.withLock { $0.root = nil }
          if let context = holder.withLock({ $0.context }), context.resolve(fresh).serial <= 0 {
            Issue.record("a context of a chain that went resolved nothing")
          }
          holder.withLock { $0.context = nil }
        }
      }
      #expect(lock == nil, "order \(order)")
    }
  }

  @Test("an isolation's tree goes once the isolation ends and its last context goes")
  func isolationTreeGoes() {
    let app = Pod()
    weak let appLock = app.engine.pod.tree
    weak var isolatedLock: Locked<EngineState>?
    var kept: BuildContext? = app.withIsolation { isolated in
      isolatedLock = isolated.engine.pod.tree
      #expect(isolatedLock !== appLock)
      let request = Pod(parent: app, scopes: [AppRequestScope()])
      // Made inside the isolation, the request is a child of the isolation's pod.
      #expect(request.parent === isolated)
      return request.resolve(keeper()).context
    }
    #expect(isolatedLock != nil)
    #expect(kept!.resolve(fresh).serial > 0)
    kept = nil
    #expect(isolatedLock == nil)
    #expect(appLock != nil)
  }

  @Test("a lock-free build's context handed to another thread outlives its pod")
  func threadBuildContextHandedOn() {
    let handed = Shared<BuildContext?>(nil)
    let fresh = self.fresh
    let lending = Provider(scope: AlwaysCreateNewScope(), name: "lending") { context in
      handed.withLock { $0 = context }
      return context.resolve(fresh).serial
    }
    weak var lock: Locked<EngineState>?
    do {
      let app = Pod()
      lock = app.engine.pod.tree
      #expect(app.resolve(lending) > 0)
    }
    #expect(lock != nil)
    let resolved = Counter()
    let repository = self.repository
    runUntilThreadEnds {
      let context = handed.withLock { $0.take() }
      if context?.resolve(fresh).serial ?? 0 > 0 { resolved.next() }
      if context?.resolve(repository).serial ?? 0 > 0 { resolved.next() }
    }
    #expect(resolved.value == 2)
    #expect(lock == nil)
  }

  @Test("an observer that keeps its own pod (a cycle) lets go of it in a callback")
  func lastPodGoesInObserverCallback() {
    final class Dropping: PodObserver, @unchecked Sendable {
      let holder = PodHolder()
      func pod(_ pod: Pod, didReport event: PodEvent) {
        if case .built = event { holder.pod = nil }
      }
    }
    let observer = Dropping()
    weak var lock: Locked<EngineState>?
    do {
      observer.holder.pod = Pod(observer: observer)
      lock = observer.holder.pod.engine.pod.tree
    }
    let pod = observer.holder.pod!
    _ = pod.resolve(repository)
    #expect(observer.holder.pod == nil)
    #expect(lock != nil)
    _ = consume pod
    #expect(lock == nil)
  }
}

/// A weak reference to a tree's lock, kept in a list.
private struct WeakLock: @unchecked Sendable {
  weak var lock: Locked<EngineState>?
  init(_ lock: Locked<EngineState>?) { self.lock = lock }
}

/// An instance with a serial of its own, to tell one build from the next.
private final class Counted: Sendable {
  private static let serials = Counter()
  let serial: Int
  init() { serial = Counted.serials.next() }
}
