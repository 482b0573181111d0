import Testing

@testable import ProviderPod

@Suite("Builds reuse their frames")
struct FrameReuseTests {
  @Test("a finished build's frame is kept for the next build, not freed")
  func framesAreReused() {
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let cached = Provider(name: "cached") { pod in pod.resolve(leaf) + 1 }
    let pod = Pod()
    #expect(pod.spareFrameCount == 0)
    _ = pod.resolve(leaf)
    #expect(pod.spareFrameCount == 1)
    _ = pod.resolve(leaf)
    #expect(pod.spareFrameCount == 1)
    // Nested: two frames at once, both back afterwards.
    #expect(pod.resolve(cached) == 2)
    #expect(pod.spareFrameCount == 2)
  }
}
