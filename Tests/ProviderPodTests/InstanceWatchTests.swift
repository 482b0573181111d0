import Testing

@testable import ProviderPod

// What a watch records after resolving decides which later changes make it look again. A
// stress run (a child and its parent each toggling an override while builds ran through the
// child) left a child's watcher on an instance the parent had replaced: its last resolve had
// found nothing cached in the child, which the watch took for a provider that is never cached,
// so no later change woke it. That moment is set up here directly.

@Suite("What an instance watch records")
struct InstanceWatchTests {
  @Test("a watch whose pod kept nothing of a cached provider looks again at the next change")
  func nothingKeptForACachedProvider() {
    let service = instanceProvider("service")
    let middle = Pod(overrides: [service.override { _ in Instance("middle's", serial: 0) }])
    let child = Pod(parent: middle)
    _ = middle.resolve(service)  // cached in the middle pod; the child keeps nothing of it
    let state = child.engine.state
    let watch = InstanceWatch(info: service.info, pod: child.engine.pod)
    let id = state.withLock { $0.addInstanceWatch(watch) }
    #expect(state.withLock { $0.beginResolving(watch, id: id) })
    _ = state.withLock { $0.endResolving(watch) }
    #expect(state.withLock { _ in watch.isChanged } == false)

    middle.clearCachedInstance(of: service)
    #expect(state.withLock { _ in watch.isChanged })
    _ = state.withLock { $0.removeInstanceWatch(id) }
  }

  @Test("a watch of a provider its pod never caches waits for a change of its own")
  func nothingKeptForAnAlwaysNewProvider() {
    let service = instanceProvider("service")
    let fresh = instanceProvider("fresh", scope: AlwaysCreateNewScope())
    let middle = Pod()
    let child = Pod(parent: middle)
    _ = middle.resolve(service)
    let state = child.engine.state
    let watch = InstanceWatch(info: fresh.info, pod: child.engine.pod)
    let id = state.withLock { $0.addInstanceWatch(watch) }
    #expect(state.withLock { $0.beginResolving(watch, id: id) })
    _ = state.withLock { $0.endResolving(watch) }

    middle.clearCachedInstance(of: service)
    #expect(state.withLock { _ in watch.isChanged } == false)
    _ = state.withLock { $0.removeInstanceWatch(id) }
  }
}
