import Dispatch
import ProviderPod
import Testing

// A builder may hand its context to another thread or task that resolves for the build while
// the builder waits (see `BuildContext`). What is resolved there is what the instance was built
// from, exactly as if the builder had resolved it itself: discarding it must discard the
// instance, whichever kind of provider was resolved and however the other task was started.

private struct SourceScope: ProviderScope {}

private final class Made: Sendable {
  let from: ObjectIdentifier?
  init(from: AnyObject? = nil) { self.from = from.map(ObjectIdentifier.init) }
}

@Suite("Dependencies resolved through a context on another task or thread")
struct ContextOnAnotherTaskTests {
  @Test("an async provider's cached instance resolved from a detached task is recorded")
  func asyncCachedInstanceFromDetachedTask() async throws {
    let source = AsyncProvider(scope: SourceScope(), name: "source") { _ in Made() }
    let made = AsyncProvider(name: "made") { context in
      let from = try await Task.detached { try await context.resolve(source) }.value
      return Made(from: from)
    }
    let pod = Pod()
    // Cached before the build resolves it, so the resolve finds it already there.
    _ = try await pod.resolve(source)
    let first = try await pod.resolve(made)
    pod.clearCachedInstances(forScope: SourceScope())
    let second = try await pod.resolve(made)
    #expect(first !== second, "made was built from source, which was discarded")
    #expect(second.from == ObjectIdentifier(try await pod.resolve(source)))
  }

  @Test("an async provider's cached instance resolved from a child task is recorded")
  func asyncCachedInstanceFromChildTask() async throws {
    let source = AsyncProvider(scope: SourceScope(), name: "source") { _ in Made() }
    let made = AsyncProvider(name: "made") { context in
      let from = try await Task { try await context.resolve(source) }.value
      return Made(from: from)
    }
    let pod = Pod()
    _ = try await pod.resolve(source)
    let first = try await pod.resolve(made)
    pod.clearCachedInstances(forScope: SourceScope())
    let second = try await pod.resolve(made)
    #expect(first !== second, "made was built from source, which was discarded")
  }

  @Test("a provider's cached instance resolved from a detached task is recorded")
  func cachedInstanceFromDetachedTask() async throws {
    let source = Provider(scope: SourceScope(), name: "source") { _ in Made() }
    let made = AsyncProvider(name: "made") { context in
      let from = await Task.detached { context.resolve(source) }.value
      return Made(from: from)
    }
    let pod = Pod()
    _ = pod.resolve(source)
    let first = try await pod.resolve(made)
    pod.clearCachedInstances(forScope: SourceScope())
    let second = try await pod.resolve(made)
    #expect(first !== second, "made was built from source, which was discarded")
  }

  @Test("a provider's cached instance resolved on another thread for a waiting builder is recorded")
  func cachedInstanceFromAnotherThread() {
    let source = Provider(scope: SourceScope(), name: "source") { _ in Made() }
    let made = Provider(name: "made") { context in
      nonisolated(unsafe) var from: Made?
      let done = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        from = context.resolve(source)
        done.signal()
      }
      done.wait()
      return Made(from: from)
    }
    let pod = Pod()
    _ = pod.resolve(source)
    let first = pod.resolve(made)
    pod.clearCachedInstances(forScope: SourceScope())
    let second = pod.resolve(made)
    #expect(first !== second, "made was built from source, which was discarded")
  }
}
