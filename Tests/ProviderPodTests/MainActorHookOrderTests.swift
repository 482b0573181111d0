import Foundation
import Testing

@testable import ProviderPod

@Suite("Discards off the main actor: main-actor hooks keep their turn")
@MainActor
struct MainActorHookOrderTests {
  @Test(
    "a clear off the main actor runs a main-actor hook before the async hook of what it was built from"
  )
  func mainActorHookBeforeAsyncDependency() async {
    let order = Shared([String]())
    let storeClosing = DispatchSemaphore(value: 0)
    let storeClosed = OneShot()
    let store = Provider(
      scope: FlowScope(), name: "store",
      onDiscard: { (_: Resource) in
        await Task.yield()
        storeClosing.signal()
        order.withLock { $0.append("store") }
        storeClosed.set()
      }
    ) { _ in Resource("store") }
    let screen = MainActorProvider(
      scope: FlowScope(), name: "screen",
      onDiscard: { (_: ScreenModel) in order.withLock { $0.append("screen") } }
    ) { pod in ScreenModel(serial: 1, instance: Instance(pod.resolve(store).name, serial: 1)) }
    let pod = Pod()
    _ = pod.resolve(screen)
    // The main actor stays busy while another thread clears, so that its hook cannot run
    // before the store's cleanup unless that waits its turn.
    let cleared = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      pod.clearCachedInstances(forScope: FlowScope())
      cleared.signal()
    }
    cleared.wait()
    // Give a store cleanup started out of turn the time to show.
    _ = storeClosing.wait(timeout: .now() + .milliseconds(300))
    await withWatchdog("the store's cleanup") { await storeClosed.wait() }
    #expect(order.withLock { $0 } == ["screen", "store"])
  }
}
