import Dispatch
import Testing

@testable import ProviderPod

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
}

/// A weak reference tests can share with a thread.
private final class WeakBox: @unchecked Sendable {
  weak var object: AnyObject?
}
