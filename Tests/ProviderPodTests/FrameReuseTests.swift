import Dispatch
import Foundation
import Testing

@testable import ProviderPod

/// Resolves an always-new provider from a thread-exit destructor (glibc runs ours after the
/// library's: our key is made later).
let threadExitLeaf = Provider(scope: AlwaysCreateNewScope(), name: "threadExitLeaf") { _ in
  41
}
let threadExitChain = Provider(scope: AlwaysCreateNewScope(), name: "threadExitChain") {
  context in context.resolve(threadExitLeaf) + 1
}
let threadExitResults = Shared<[Int]>([])
let threadExitKey: pthread_key_t = {
  var key = pthread_key_t()
  let status = pthread_key_create(&key) { _ in
    threadExitResults.withLock { $0.append(globalPod.resolve(threadExitChain)) }
  }
  precondition(status == 0)
  return key
}()

@Suite("Builds reuse their frames")
struct FrameReuseTests {
  @Test("a build whose instance is cached keeps its frame in the pod for the next build")
  func cachingBuildsReuseFrames() {
    let first = Provider(name: "first") { _ in 1 }
    let second = Provider(name: "second") { pod in pod.resolve(first) + 1 }
    let pod = Pod()
    #expect(pod.spareFrameCount == 0)
    #expect(pod.resolve(first) == 1)
    #expect(pod.spareFrameCount == 1)
    // Nested: two frames at once, both back afterwards.
    let third = Provider(name: "third") { pod in pod.resolve(second) + 1 }
    #expect(pod.resolve(third) == 3)
    #expect(pod.spareFrameCount == 2)
  }

  @Test("an always-new build keeps its frame on its thread, and a chain reuses the same frames")
  func alwaysNewBuildsReuseThreadFrames() {
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { pod in
      pod.resolve(leaf) + 1
    }
    let root = Provider(scope: AlwaysCreateNewScope(), name: "root") { pod in
      pod.resolve(middle) + 1
    }
    let pod = Pod()
    // A thread of its own, which has no frames yet.
    onThreads(1) { _ in
      #expect(ThreadSpareFrames.count == 0)
      #expect(pod.resolve(leaf) == 1)
      #expect(ThreadSpareFrames.count == 1)
      let kept = ThreadSpareFrames.first.map(ObjectIdentifier.init)
      #expect(pod.resolve(leaf) == 1)
      #expect(ThreadSpareFrames.count == 1)
      #expect(ThreadSpareFrames.first.map(ObjectIdentifier.init) == kept)
      #expect(pod.resolve(root) == 3)
      #expect(ThreadSpareFrames.count == 3)
      #expect(pod.resolve(root) == 3)
      #expect(ThreadSpareFrames.count == 3)
    }
    // None went to the pod.
    #expect(pod.spareFrameCount == 0)
  }

  @Test("a frame whose context the builder kept is not reused while the context lives")
  func keptContextKeepsItsFrame() {
    let kept = Shared<BuildContext?>(nil)
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let keeper = Provider(scope: AlwaysCreateNewScope(), name: "keeper") { context in
      kept.withLock { $0 = context }
      return context.resolve(leaf)
    }
    let pod = Pod()
    onThreads(1) { _ in
      #expect(pod.resolve(keeper) == 1)
      let spares = ThreadSpareFrames.count
      let keptFrame = kept.withLock { $0.map { ObjectIdentifier($0.frame) } }
      #expect(ThreadSpareFrames.first.map(ObjectIdentifier.init) != keptFrame)
      // The kept context resolves like the pod once its build is over.
      #expect(kept.withLock { $0?.resolve(leaf) } == 1)
      #expect(pod.resolve(leaf) == 1)
      #expect(ThreadSpareFrames.count == spares)
    }
    #expect(pod.invariantViolations == [])
  }

  @Test("a thread lets go of its frames when it ends")
  func threadReleasesItsFrames() {
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let pod = Pod()
    let spare = WeakBox()
    runUntilThreadEnds {
      _ = pod.resolve(leaf)
      spare.object = ThreadSpareFrames.first
      #expect(spare.object != nil)
    }
    #expect(spare.object == nil)
  }

  @Test("the pod and its engine go away though threads keep idle frames that built for it")
  func podFreedDespiteThreadFrames() {
    weak var weakPod: Pod?
    weak var weakRecord: PodRecord?
    // Frames are watched only on threads that end: a weak reference to a frame that stays
    // parked on a pool thread gives it a side table that the leak checker cannot see.
    let frames = WeakList()
    let instances = WeakList()
    do {
      let pod = Pod()
      weakPod = pod
      weakRecord = pod.engine.pod
      let watching = Shared(false)
      let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { context in
        if watching.withLock({ $0 }) { frames.add(context.frame) }
        return Instance("leaf", serial: 0)
      }
      let keeper = Provider(scope: AlwaysCreateNewScope(), name: "keeper") { context in
        ContextKeeper(context, serial: context.resolve(leaf).serial)
      }
      // This thread's idle frames, which outlive the pod.
      for _ in 0..<10 { instances.add(pod.resolve(keeper)) }
      #expect(ThreadSpareFrames.count > 0)
      watching.withLock { $0 = true }
      onThreadsUntilTheyEnd(3) { _ in
        for _ in 0..<100 {
          instances.add(pod.resolve(leaf))
          instances.add(pod.resolve(keeper))
        }
      }
      #expect(frames.count == 600)
      #expect(frames.liveCount == 0, "threads that ended kept their frames")
    }
    #expect(weakPod == nil)
    #expect(weakRecord == nil, "an idle frame holds the pod's record")
    #expect(instances.liveCount == 0)
  }

  @Test("a thread keeps idle the frames of its deepest always-new chain, and frees them as it ends")
  func chainFramesKept() {
    let frames = WeakList()
    let deep = deepFamily(recordingFramesIn: frames)
    let pod = Pod()
    let idle = Shared(0)
    runUntilThreadEnds {
      #expect(ThreadSpareFrames.count == 0)
      #expect(pod.resolve(deep.family!(200)) == 200)
      idle.withLock { $0 = ThreadSpareFrames.count }
      // Again: the same frames serve the next chain.
      #expect(pod.resolve(deep.family!(200)) == 200)
      #expect(ThreadSpareFrames.count == 201)
    }
    #expect(idle.withLock { $0 } == 201)
    #expect(frames.liveCount == 0, "a thread that ended kept its frames")
    deep.family = nil  // the family's builder holds the box
  }

  @Test(
    "a chain deeper than a thread keeps frames for: that many stay idle, the rest are freed",
    .enabled(if: !underThreadSanitizer))
  func deepChainFramesFreed() {
    let frames = WeakList()
    let deep = deepFamily(recordingFramesIn: frames)
    let depth = ThreadRecord.spareFrameLimit + 100
    let pod = Pod()
    let idle = Shared(0)
    let liveAfterChain = Shared(0)
    // A debug build needs about 1 KB of stack per level.
    runUntilThreadEnds(stackSize: 32 << 20) {
      #expect(pod.resolve(deep.family!(depth)) == depth)
      idle.withLock { $0 = ThreadSpareFrames.count }
      liveAfterChain.withLock { $0 = frames.liveCount }
      #expect(pod.resolve(deep.family!(depth)) == depth)
      #expect(ThreadSpareFrames.count == ThreadRecord.spareFrameLimit)
    }
    #expect(idle.withLock { $0 } == ThreadRecord.spareFrameLimit)
    #expect(liveAfterChain.withLock { $0 } <= ThreadRecord.spareFrameLimit)
    #expect(frames.liveCount == 0, "a thread that ended kept its frames")
    deep.family = nil
  }

  @Test("a thread-exit destructor may resolve after the thread's record is gone")
  func resolveFromThreadExitDestructor() {
    _ = globalPod.resolve(threadExitChain)  // the library's key is made before ours
    let key = threadExitKey
    threadExitResults.withLock { $0 = [] }
    let frames = WeakList()
    let probe = Provider(scope: AlwaysCreateNewScope(), name: "probe") { context in
      frames.add(context.frame)
      return 0
    }
    runUntilThreadEnds {
      _ = globalPod.resolve(probe)
      pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
    }
    #expect(threadExitResults.withLock { $0 } == [42])
    #expect(frames.liveCount == 0)
  }
}

/// A weak reference tests can share with a thread.
private final class WeakBox: @unchecked Sendable {
  weak var object: AnyObject?
}

/// Holds a family of always-new providers, each level resolving the one below, whose builder
/// records every frame in `frames`; the builder holds the box, so set `family` to nil after.
private final class DeepFamily: @unchecked Sendable {
  var family: ProviderFamily<Int, Int>!
}

private func deepFamily(recordingFramesIn frames: WeakList) -> DeepFamily {
  let box = DeepFamily()
  box.family = ProviderFamily<Int, Int>(scope: AlwaysCreateNewScope(), name: "deep") {
    context, level in
    frames.add(context.frame)
    return level == 0 ? 0 : context.resolve(box.family(level - 1)) + 1
  }
  return box
}
