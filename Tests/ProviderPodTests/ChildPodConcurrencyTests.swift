import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// Each test is one way an app with a tree of pods uses it from several threads: a child's
// overrides and clears racing the parent's shared builds, children made and released while
// the parent changes, and graphs taken while children go away.

/// A scope no child in these tests owns.
private struct RequestScope: ProviderScope {}
/// A value whose deinit resolves through a pod and asks for its graph: run under the lock,
/// it would deadlock.
private final class ResolvesOnDeinit: Sendable {
  let pod: Pod
  let provider: Provider<Instance>
  init(pod: Pod, provider: Provider<Instance>) {
    self.pod = pod
    self.provider = provider
  }
  deinit {
    _ = pod.resolve(provider)
    _ = pod.dependencyGraph()
  }
}

@Suite("Child pods used from several threads")
struct ChildPodConcurrencyTests {
  // An override added to a child must reach what the child builds from the provider, even
  // while a build of the shared provider started through the child runs in the parent's
  // slot: the child's own instance waiting for that build must not be cached from the old
  // builder.
  @Test("an override added to a child while a shared build runs through it is not lost")
  func childOverrideDuringSharedBuild() {
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let sharedBuilds = Counter()
    let shared = Provider<Instance>(name: "shared") { _ in
      if sharedBuilds.next() == 1 {
        entered.signal()
        waitWithWatchdog(gate)
      }
      return Instance("real shared", serial: 0)
    }
    let own = Provider<Instance>(scope: AppWindowScope(), name: "own") { pod in
      Instance("own", serial: 0, dependencies: [pod.resolve(shared)])
    }
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [AppWindowScope()])
    let done = startThread { _ = child.resolve(own) }
    guard waitOrFail(entered, "the shared build") else { return }
    child.overrideProvider(shared) { _ in Instance("fake shared", serial: 0) }
    gate.signal()
    guard waitOrFail(done, "the child's build") else { return }

    // The override returned before `own` was cached: `own` must be built from the fake.
    #expect(child.resolve(own).dependencies.first?.label == "fake shared")
    #expect(child.resolve(shared).label == "fake shared")
    #expect(parent.resolve(shared).label == "real shared")
    #expect(parent.invariantViolations == [])
  }

  // A build placed in a middle pod (which owns its scope) that goes on to read, through the
  // grandchild it was started from, something the grandchild shadows ends up cached in the
  // grandchild. If the grandchild overrode what the build read earlier while it ran, the
  // result mixes the parent's instance with the grandchild's: it must not be cached there.
  @Test("a build that lands in a grandchild after it overrode what the build read is not kept")
  func grandchildOverrideDuringBuildThatLandsThere() {
    struct MiddleScope: ProviderScope {}
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let config = instanceProvider("config")
    let settings = instanceProvider("settings", dependencies: [config])
    let builds = Counter()
    let service = Provider<Instance>(scope: MiddleScope(), name: "service") { pod in
      let serial = builds.next()
      let config = pod.resolve(config)
      if serial == 1 {
        entered.signal()
        waitWithWatchdog(gate)
      }
      return Instance("service", serial: serial, dependencies: [config, pod.resolve(settings)])
    }
    let app = Pod()
    let middle = Pod(parent: app, scopes: [MiddleScope()])
    let child = Pod(parent: middle)
    let done = startThread { _ = child.resolve(service) }
    guard waitOrFail(entered, "the service's build") else { return }
    child.overrideProvider(config) { _ in Instance("child config", serial: 0) }
    gate.signal()
    guard waitOrFail(done, "the service's build") else { return }

    // Whatever the child resolves now, it is built from the child's config throughout.
    let resolved = child.resolve(service)
    #expect(resolved.dependencies[0].label == "child config")
    #expect(resolved.dependencies[1].dependencies[0].label == "child config")
    // The middle pod, which does not override config, has the app's throughout.
    let middles = middle.resolve(service)
    #expect(middles.dependencies[0].label == "config")
    #expect(middles.dependencies[1].dependencies[0].label == "config")
    #expect(app.invariantViolations == [])
  }

  // A child's clear never touches its parent, even when a stale build placed in the parent's
  // slot left its "built from" count on the child's instance: a later clear in the child must
  // not follow it to the parent's own, valid instance.
  @Test("a child's clear does not discard the parent's instance through a stale build")
  func childClearReachesParentThroughStaleBuild() {
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let disposals = DisposalCounts()
    let window = Provider<Instance>(scope: AppWindowScope(), name: "window") { _ in
      Instance("window", serial: 0)
    }
    let builds = Counter()
    let shared = Provider<Instance>(name: "shared", onDiscard: { disposals.record($0) }) { pod in
      let serial = builds.next()
      guard serial == 1 else { return Instance("shared", serial: serial) }
      // Only the first build (through the child) needs the window.
      let window = pod.resolve(window)
      entered.signal()
      waitWithWatchdog(gate)
      return Instance("shared", serial: serial, dependencies: [window])
    }
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [AppWindowScope()])
    let done = startThread { _ = child.resolve(shared) }
    guard waitOrFail(entered, "the build through the child") else { return }
    parent.clearCachedInstance(of: shared)  // the running build goes stale
    let parents = parent.resolve(shared)  // a build of the parent's own, from nothing
    #expect(parents.serial == 2)

    child.clearCachedInstances(forScope: AppWindowScope())
    #expect(parent.resolve(shared) === parents)
    #expect(disposals.count(of: parents) == 0)
    gate.signal()
    _ = waitOrFail(done, "the stale build")
    #expect(parent.invariantViolations == [])
  }

  // Clearing: "a build of an instance in a cleared scope that is running at the same time is
  // not cached". That holds for a build started through a child and placed in the parent
  // that turns out to need the child's own instance, and so is cached in the child: the
  // child's clear while it ran makes it stale, though the parent cleared nothing.
  @Test("a child's clear during a build that ends up cached in the child makes it stale")
  func childClearDuringBuildThatLandsInChild() {
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let window = Provider<Instance>(scope: AppWindowScope(), name: "window") { _ in
      Instance("window", serial: 0)
    }
    let builds = Counter()
    let request = Provider<Instance>(scope: RequestScope(), name: "request") { pod in
      let serial = builds.next()
      let window = pod.resolve(window)
      if serial == 1 {
        entered.signal()
        waitWithWatchdog(gate)
      }
      return Instance("request", serial: serial, dependencies: [window])
    }
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [AppWindowScope()])
    let done = startThread { _ = child.resolve(request) }
    guard waitOrFail(entered, "the request's build") else { return }
    child.clearCachedInstances(forScope: RequestScope())
    gate.signal()
    guard waitOrFail(done, "the request's build") else { return }
    #expect(child.resolve(request).serial == 2)
    #expect(parent.invariantViolations == [])
  }

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

  @Test("children made and used on several threads see the parent's overrides and clears at once")
  func parentChangesWhileChildrenResolve() {
    let disposals = DisposalCounts()
    let config = Provider<Int>(name: "config") { _ in 0 }
    let api = Provider<Instance>(name: "api", onDiscard: { disposals.record($0) }) { pod in
      Instance("api", serial: pod.resolve(config))
    }
    let session = Provider<Instance>(
      scope: AppWindowScope(), name: "session", onDiscard: { disposals.record($0) }
    ) { pod in Instance("session", serial: 0, dependencies: [pod.resolve(api)]) }
    let parent = Pod()
    let published = Shared(0)  // the last override that returned
    // Changes begun and changes returned: equal while none is under way. A change is under
    // way from before its call until after `published` says so.
    let changesBegun = Shared(0)
    let changesReturned = Shared(0)
    let stale = Counter()
    let wrongAPI = Counter()
    onThreads(3) { index in
      if index == 0 {
        for version in 1...150 {
          changesBegun.withLock { $0 += 1 }
          parent.overrideProvider(config, withValue: version)
          published.withLock { $0 = version }
          changesReturned.withLock { $0 += 1 }
          if version % 3 == 0 {
            changesBegun.withLock { $0 += 1 }
            parent.clearCachedInstances(forScope: AppWindowScope())
            changesReturned.withLock { $0 += 1 }
          }
        }
        return
      }
      for _ in 0..<150 {
        let child = Pod(parent: parent, scopes: [AppWindowScope()])
        let returned = changesReturned.withLock { $0 }
        let seen = published.withLock { $0 }
        let own = child.resolve(session)
        if own.dependencies[0].serial < seen { stale.next() }
        if child.resolve(api).serial < seen { stale.next() }
        if child.resolve(session) === own, own.dependencies[0] !== child.resolve(api) {
          // Cached, so built from the API the child resolves now, unless a change came in:
          // none began since the reads above (and none was under way then) if the count of
          // those begun is still that of those returned before them.
          if changesBegun.withLock({ $0 }) == returned { wrongAPI.next() }
        }
      }
    }
    #expect(stale.value == 0)
    #expect(wrongAPI.value == 0)
    #expect(disposals.duplicates == 0)
    #expect(parent.childCount == 0)
    #expect(parent.invariantViolations == [])
    #expect(parent.resolve(api).serial == 150)
  }

  @Test("grandchildren made and released while their parent clears: never stale, disposed once")
  func grandchildReleasedWhileParentClears() {
    let disposals = DisposalCounts()
    let builds = Counter()
    let session = Provider<Instance>(
      scope: AppWindowScope(), name: "session", onDiscard: { disposals.record($0) }
    ) { _ in Instance("session", serial: builds.next()) }
    let step = Provider<Instance>(
      scope: WindowStepScope(), name: "step", onDiscard: { disposals.record($0) }
    ) { pod in Instance("step", serial: builds.next(), dependencies: [pod.resolve(session)]) }
    let root = Pod()
    let window = Pod(parent: root, scopes: [AppWindowScope()])
    let stale = Counter()
    onThreads(3) { index in
      for round in 0..<200 {
        if index == 0 {
          window.clearCachedInstances(
            forScope: round % 2 == 0 ? AppWindowScope() : WindowStepScope())
        } else {
          let grandchild = Pod(parent: window, scopes: [WindowStepScope()])
          let own = grandchild.resolve(step)
          // A session shared with the window: the step in the cache is built from it.
          if grandchild.resolve(step) === own,
            own.dependencies[0].serial > grandchild.resolve(session).serial
          {
            stale.next()
          }
        }
      }
    }
    #expect(stale.value == 0)
    #expect(disposals.duplicates == 0)
    #expect(window.childCount == 0)
    #expect(root.invariantViolations == [])
    #expect(window.slotCount <= 1)  // the window's session, if cached; nothing of the steps
  }

  @Test("graphs taken through children going away, with deinits that resolve, do not deadlock")
  func graphsWhileChildrenGoAway() {
    let parent = Pod()
    let shared = instanceProvider("shared")
    let own = Provider<ResolvesOnDeinit>(scope: AppWindowScope(), name: "own") { pod in
      _ = pod.resolve(shared)
      return ResolvesOnDeinit(pod: parent, provider: shared)
    }
    let weakOwn = Provider<ResolvesOnDeinit>(scope: WeakScope(), name: "weak own") { pod in
      _ = pod.resolve(own)
      return ResolvesOnDeinit(pod: parent, provider: shared)
    }
    let current = Shared<Pod?>(nil)
    let maker = startThread {
      for _ in 0..<300 {
        let child = Pod(parent: parent, scopes: [AppWindowScope()])
        _ = child.resolve(own)
        let held = child.resolve(weakOwn)
        current.withLock { $0 = child }  // the previous child may go away here
        withExtendedLifetime(held) {}
      }
      current.withLock { $0 = nil }
    }
    let reader = startThread {
      for _ in 0..<300 {
        // The last reference may be this one: the child goes away on this thread.
        guard let child = current.withLock({ $0 }) else { continue }
        _ = child.dependencyGraph()
        _ = parent.dependencyGraph()
        _ = child.resolve(weakOwn)  // gone by itself at once: its deinit resolves
      }
    }
    guard waitForWorkOrFail(maker, "the thread making children"),
      waitForWorkOrFail(reader, "the reader")
    else { return }
    #expect(parent.childCount == 0)
    #expect(parent.slotCount == 1)
    #expect(parent.invariantViolations == [])
  }

  @Test("children of a root share its instances and keep their own, from builds of both")
  func childPodsAroundThreadBuilds() {
    let rootPod = Pod()
    let shared = instanceProvider("shared")  // the root's
    let own = instanceProvider("own", scope: StepScope())  // each child's
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { context in
      Instance("leaf", serial: 0, dependencies: [context.resolve(shared)])
    }
    let children = (0..<3).map { _ in Pod(parent: rootPod, scopes: [StepScope()]) }
    // Always-new through the root, asking a child for its own instance from inside.
    let viaChild = ProviderFamily<Int, Instance>(scope: AlwaysCreateNewScope(), name: "viaChild") {
      context, index in
      Instance("viaChild", serial: index, dependencies: [children[index].resolve(own)])
    }
    // A child's own cached build that needs an always-new chain of the root, through the root.
    let childTop = Provider(scope: StepScope(), name: "childTop") { context in
      Instance("childTop", serial: 0, dependencies: [context.resolve(own), rootPod.resolve(leaf)])
    }
    let wrong = Shared<[String]>([])
    onThreads(3) { index in
      let child = children[index]
      for round in 0..<1_000 {
        let fromRoot = rootPod.resolve(viaChild(index))
        let fromChild = child.resolve(childTop)
        let sharedNow = rootPod.resolve(shared)
        if fromRoot.dependencies[0] !== child.resolve(own) {
          wrong.withLock { $0.append("\(index)/\(round): not the child's own") }
        }
        if fromChild.dependencies[1].dependencies[0] !== sharedNow {
          wrong.withLock { $0.append("\(index)/\(round): not the root's shared") }
        }
        if round % 100 == 0 { child.clearCachedInstances(forScope: StepScope()) }
      }
    }
    #expect(wrong.withLock { $0 } == [])
    #expect(rootPod.invariantViolations == [])
    // The child's build depends on what the root's always-new chain resolved.
    let before = children[0].resolve(childTop)
    rootPod.clearCachedInstance(of: shared)
    let after = children[0].resolve(childTop)
    #expect(after !== before)
    #expect(after.dependencies[1].dependencies[0] === rootPod.resolve(shared))
    // Siblings keep their own.
    #expect(children[1].resolve(own) !== children[2].resolve(own))
    #expect(rootPod.invariantViolations == [])
  }
}
