import Foundation
import Testing

@testable import ProviderPod

/// Strongly holds a builder's pod, the way a service that resolves lazily would.
private final class StrongPodBox: @unchecked Sendable {
  var pod: BuildContext?
}

@Suite("Pod lifetime")
struct PodLifetimeTests {
  @Test("a pod is freed when the last reference goes, also after many builds")
  func podIsFreed() {
    weak var released: Pod?
    do {
      let pod = Pod()
      let fresh = instanceProvider("fresh", scope: AlwaysCreateNewScope())
      let cached = instanceProvider("cached", dependencies: [fresh])
      for _ in 0..<10 { _ = pod.resolve(fresh) }
      _ = pod.resolve(cached)
      released = pod
      #expect(released != nil)
    }
    #expect(released == nil)
  }

  @Test(
    "a cached instance lives exactly as long as the pod holds it, however often it was resolved",
    arguments: ["class", "class with a hook", "protocol existential", "struct holding a class"])
  func cachedValuesAreReleased(kind: String) {
    weak var instance: Instance?
    let disposed = Shared(0)
    do {
      let pod = Pod()
      let made = Provider(scope: StepScope(), name: "made") { _ in Instance("made", serial: 0) }
      let resolveMany: () -> Instance
      switch kind {
      case "class":
        resolveMany = { (0..<1_000).map { _ in pod.resolve(made) }.last! }
      case "class with a hook":
        let hooked = Provider(
          scope: StepScope(), name: "hooked", onDiscard: { _ in disposed.withLock { $0 += 1 } }
        ) { _ in Instance("hooked", serial: 0) }
        resolveMany = { (0..<1_000).map { _ in pod.resolve(hooked) }.last! }
      case "protocol existential":
        let existential = Provider<any Sendable>(scope: StepScope(), name: "existential") { _ in
          Instance("existential", serial: 0)
        }
        resolveMany = { (0..<1_000).map { _ in pod.resolve(existential) as! Instance }.last! }
      default:
        struct Holder: Sendable { let instance: Instance }
        let holder = Provider(scope: StepScope(), name: "holder") { _ in
          Holder(instance: Instance("held", serial: 0))
        }
        resolveMany = { (0..<1_000).map { _ in pod.resolve(holder).instance }.last! }
      }
      do {
        let first = resolveMany()
        instance = first
        #expect(resolveMany() === first)
      }
      #expect(instance != nil)
      pod.clearCachedInstances(forScope: StepScope())
      #expect(instance == nil)
      instance = resolveMany()
      #expect(instance != nil)
    }
    #expect(instance == nil)
    #expect(disposed.withLock { $0 } == (kind == "class with a hook" ? 2 : 0))
  }

  @Test("a context kept by a builder is never handed to another build")
  func keptContextIsNotReused() {
    let box = StrongPodBox()
    let target = instanceProvider("target", scope: StepScope())
    let remembering = Provider(scope: AlwaysCreateNewScope(), name: "remembering") { pod in
      box.pod = pod
      return 1
    }
    // While `other` builds, another thread resolves through the kept context. Had the kept
    // context's frame been reused for `other`'s build, that resolve would count as something
    // `other` was built from.
    let other = Provider(name: "other") { _ in
      let done = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        _ = box.pod!.resolve(target)
        done.signal()
      }
      done.wait()
      return Instance("other", serial: 0)
    }
    let pod = Pod()
    _ = pod.resolve(remembering)
    let first = pod.resolve(other)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(other) === first)
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("a builder's pod kept after the build behaves like the pod")
  func keptViewActsLikeThePod() {
    let box = StrongPodBox()
    let target = instanceProvider("target", scope: StepScope())
    let keeperBuilds = Counter()
    let keeper = Provider(name: "keeper") { pod in
      box.pod = pod
      return keeperBuilds.next()
    }
    let pod = Pod()
    _ = pod.resolve(keeper)
    let kept = box.pod!
    // Resolving through it later is not part of the keeper's build: no dependency, no cycle.
    #expect(kept.resolve(target) === pod.resolve(target))
    #expect(kept.resolve(keeper) == 1)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(keeper) == 1)  // still cached: it was not built from target
    #expect(keeperBuilds.value == 1)
  }

  @Test(
    "cached values resolved on threads while cleared are neither leaked nor released twice",
    arguments: [
      "class", "class with a hook", "existential", "struct", "weak", "withValue", "child link",
    ])
  func cachedValuesUnderClears(kind: String) {
    let live = LiveCount()
    let serials = Counter()
    let disposed = Shared<[Int]>([])
    do {
      let root = Pod()
      let pod = kind == "child link" ? Pod(parent: root) : root
      let plain = Provider(scope: StepScope(), name: "plain") { _ in
        Tracked(live, serial: serials.next())
      }
      let hooked = Provider(
        scope: StepScope(), name: "hooked",
        onDiscard: { value in disposed.withLock { $0.append(value.serial) } }
      ) { _ in Tracked(live, serial: serials.next()) }
      let existential = Provider<any Sendable>(scope: StepScope(), name: "existential") { _ in
        Tracked(live, serial: serials.next())
      }
      struct Holder: Sendable { let tracked: Tracked }
      let holder = Provider(scope: StepScope(), name: "holder") { _ in
        Holder(tracked: Tracked(live, serial: serials.next()))
      }
      let weak = Provider(scope: WeakScope(), name: "weak") { _ in
        Tracked(live, serial: serials.next())
      }
      if kind == "withValue" {
        pod.overrideProvider(plain, withValue: Tracked(live, serial: serials.next()))
      }
      // Threads reach the pods through a box emptied after them: a finished thread may still
      // hold its closure for a moment, and must not keep a pod alive past the check.
      let pods = Shared<(root: Pod, pod: Pod)?>((root, pod))
      let resolve: @Sendable (Pod) -> Tracked = { pod in
        switch kind {
        case "class with a hook": return pod.resolve(hooked)
        case "existential": return pod.resolve(existential) as! Tracked
        case "struct": return pod.resolve(holder).tracked
        case "weak": return pod.resolve(weak)
        default: return pod.resolve(plain)
        }
      }
      onThreads(4) { index in
        guard let (root, pod) = pods.withLock({ $0 }) else { return }
        var held: [Tracked] = []
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
}

/// Holds the pod itself: the retain cycle the README warns about.
final class PodKeeper: @unchecked Sendable {
  var pod: Pod?
}

let lastReferenceBox = StrongPodBoxForExit()
final class StrongPodBoxForExit: @unchecked Sendable {
  var root: Pod?
  var view: BuildContext?
}

let podKeepingProvider = Provider(scope: StepScope(), name: "podKeeping") { _ in
  let keeper = PodKeeper()
  keeper.pod = lastReferenceBox.root
  return keeper
}
let viewKeepingProvider = Provider(name: "viewKeeping") { pod in
  lastReferenceBox.view = pod
  return 0
}

@Suite("Pod lifetime under the lock")
struct PodLifetimeUnderLockTests {
  @Test("a discard that drops the pod's last reference does not deadlock")
  func lastReferenceDroppedByDiscard() async {
    await #expect(processExitsWith: .success) {
      alarm(10)  // a deadlock would hang: this turns it into a failed exit
      lastReferenceBox.root = Pod()
      _ = lastReferenceBox.root!.resolve(podKeepingProvider)
      _ = lastReferenceBox.root!.resolve(viewKeepingProvider)
      lastReferenceBox.root = nil  // now only the cached PodKeeper holds the pod
      // Clearing through the builder's view drops that last reference.
      lastReferenceBox.view!.clearCachedInstances(forScope: StepScope())
      exit(0)
    }
  }
}
