import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// A child pod that goes away disposes of its own instances, once each and dependents first,
// and leaves nothing of itself in its parent, even when contexts kept from it live on.

@Suite("Child pods going away")
struct ChildPodLifetimeTests {
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

  @Test("an instance cached in a child with duplicated dependencies is discarded once each time")
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

  @Test("children released on several threads while shared and kept dispose once, leak nothing")
  func childrenReleasedWhileShared() {
    let root = Pod()
    let live = LiveCount()
    let disposed = Shared<[Int]>([])
    let serials = Counter()
    let shared = Provider(scope: OtherStepScope(), name: "shared") { _ in
      Tracked(live, serial: serials.next())
    }
    let own = Provider(
      scope: StepScope(), name: "own",
      onDiscard: { value in disposed.withLock { $0.append(value.serial) } }
    ) { context in
      Tracked(live, serial: serials.next(), dependencies: [context.resolve(shared)])
    }
    let keptContexts = Shared<[BuildContext]>([])
    let keeper = Provider(scope: StepScope(), name: "keeper") { context in
      keptContexts.withLock { $0.append(context) }
      return Tracked(live, serial: serials.next(), dependencies: [context.resolve(own)])
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

  // The parent's instance must not be built from a child's own instance. A context kept past
  // its child resolves through the dead child, where the child's own instance is built but
  // neither cached nor recorded; a build that is not cached must invalidate its caller, or
  // the instance built from it is cached in the parent and shared with every other child.
  @Test("a context kept past its child does not put the child's instance in the parent")
  func keptContextOfReleasedChild() {
    let keeper = Provider<ContextKeeper>(scope: AppWindowScope(), name: "keeper") { pod in
      ContextKeeper(pod)
    }
    let window = Provider<Instance>(scope: AppWindowScope(), name: "window") { _ in
      Instance("window", serial: 0)
    }
    let report = Provider<Instance>(name: "report") { pod in
      Instance("report", serial: 0, dependencies: [pod.resolve(window)])
    }
    let parent = Pod()
    var kept: ContextKeeper?
    do {
      let closed = Pod(parent: parent, scopes: [AppWindowScope()])
      kept = closed.resolve(keeper)
    }
    #expect(parent.childCount == 0)
    let late = kept!.context.resolve(report)  // the window's view model, after it closed
    let open = Pod(parent: parent, scopes: [AppWindowScope()])
    #expect(open.resolve(report).dependencies[0] === open.resolve(window))
    #expect(parent.resolve(report).dependencies[0] === parent.resolve(window))
    #expect(parent.resolve(report) !== late)
    #expect(parent.invariantViolations == [])
  }

  // The parent keeps nothing of a child that went away. A shared instance resolved through a
  // dead child's kept context must not be linked in the dead child: the parent's instance
  // would keep the link, and through it the dead child's tables and observer, until it is
  // itself discarded.
  @Test("a context kept past its child leaves nothing of the child in the parent")
  func keptContextLeaksIntoParent() {
    let keeper = Provider<ContextKeeper>(scope: AppWindowScope(), name: "keeper") { pod in
      ContextKeeper(pod)
    }
    let shared = instanceProvider("shared")
    let parent = Pod()
    _ = parent.resolve(shared)
    weak var weakObserver: EventRecorder?
    var kept: ContextKeeper?
    do {
      let observer = EventRecorder()
      weakObserver = observer
      let closed = Pod(parent: parent, scopes: [AppWindowScope()], observer: observer)
      kept = closed.resolve(keeper)
    }
    _ = kept!.context.resolve(shared)
    kept = nil
    #expect(weakObserver == nil)
    #expect(parent.invariantViolations == [])
    #expect(parent.slotCount == 1)
  }

  // A pod's first tables are copied from empty ones its thread keeps, which go when the
  // thread ends: what the pod copied must be its own by then.
  @Test("pods made on threads that have ended work on, and go once each, with their instances")
  func podsOutliveTheThreadsThatMadeThem() {
    let log = DisposalLog()
    let shared = Provider(name: "shared", onDiscard: log.record) { _ in
      Instance("shared", serial: 0)
    }
    let step = Provider(scope: StepScope(), name: "step", onDiscard: log.record) { context in
      Instance("step", serial: 0, dependencies: [context.resolve(shared)])
    }
    let made = Shared<[(root: Pod, child: Pod)]>([])
    onThreadsUntilTheyEnd(4) { _ in
      let root = Pod()
      let child = Pod(parent: root, scopes: [StepScope()])
      made.withLock { $0.append((root, child)) }
    }
    var pods = made.withLock { $0 }
    made.withLock { $0 = [] }
    for (root, child) in pods {
      let first = child.resolve(step)
      #expect(child.resolve(step) === first)
      #expect(first.dependencies.first === root.resolve(shared))
      #expect(root.invariantViolations == [])
    }
    #expect(log.take() == [])
    // Each pair goes on this thread: the child's step first, then the root's shared instance.
    var remaining = pods
    pods = []
    while !remaining.isEmpty {
      remaining.removeLast()
      #expect(log.take() == ["step#0", "shared#0"])
    }
  }

  @Test(
    "a pod let go of by a cleanup hook, as a chain of pods goes, is gone with its hooks run when the drop returns"
  )
  func podDroppedByAHookGoesAtOnce() {
    let otherGone = Shared(false)
    let seenInHook = Shared<[Bool]>([])
    let other = Provider(
      name: "other", onDiscard: { (_: HookedInstance) in otherGone.withLock { $0 = true } }
    ) { _ in HookedInstance() }
    // The hook makes a pod and a child of it, and lets go of both: the child is the pod's
    // last holder, so the pod goes with it, and its own hook runs, before the drop returns.
    let dropping = Provider(
      scope: HookedScope(), name: "dropping",
      onDiscard: { (_: HookedInstance) in
        var pod: Pod? = Pod()
        _ = pod!.resolve(other)
        var child: Pod? = Pod(parent: pod!)
        _ = child
        pod = nil
        child = nil
        seenInHook.withLock { $0.append(otherGone.withLock { $0 }) }
      }
    ) { _ in HookedInstance() }
    // A chain: the hook runs as the middle pod goes, inside the release of the deepest one.
    var root: Pod? = Pod()
    var middle: Pod? = Pod(parent: root!, scopes: [HookedScope()])
    _ = middle!.resolve(dropping)
    var deepest: Pod? = Pod(parent: middle!)
    _ = deepest
    root = nil
    middle = nil
    deepest = nil
    #expect(seenInHook.withLock { $0 } == [true])
  }
}

private struct HookedScope: ProviderScope {}
private final class HookedInstance: Sendable {}
