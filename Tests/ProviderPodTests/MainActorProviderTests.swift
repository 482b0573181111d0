import Foundation
import Testing

@testable import ProviderPod

/// A view model: main-actor state, not Sendable.
@MainActor
final class ScreenModel {
  let serial: Int
  let instance: Instance
  var title = ""

  init(serial: Int, instance: Instance) {
    self.serial = serial
    self.instance = instance
  }
}

private let screenBuilds = Counter()
private let screenService = instanceProvider("screenService", scope: StepScope())
private let screenModelProvider = MainActorProvider(scope: FlowScope(), name: "screenModel") {
  pod in
  MainActor.assertIsolated()
  return ScreenModel(serial: screenBuilds.next(), instance: pod.resolve(screenService))
}

@Suite("Main-actor providers", .timeLimit(.minutes(10)))
@MainActor
struct MainActorProviderTests {
  @Test("built on the main actor, cached in its scope, and discarded with its dependencies")
  func caching() {
    let pod = Pod()
    let model = pod.resolve(screenModelProvider)
    model.title = "Sign up"
    #expect(pod.resolve(screenModelProvider) === model)
    pod.clearCachedInstances(forScope: StepScope())  // the model was built from the service
    let rebuilt = pod.resolve(screenModelProvider)
    #expect(rebuilt !== model)
    #expect(rebuilt.title == "")
  }

  @Test("overrides with a main-actor builder or a value, and removal")
  func overrides() {
    let pod = Pod()
    let original = pod.resolve(screenModelProvider)
    pod.overrideProvider(screenModelProvider) { _ in
      ScreenModel(serial: -1, instance: Instance("fake", serial: 0))
    }
    #expect(pod.resolve(screenModelProvider).serial == -1)
    let given = ScreenModel(serial: -2, instance: Instance("given", serial: 0))
    pod.overrideProvider(screenModelProvider, withValue: given)
    #expect(pod.resolve(screenModelProvider) === given)
    pod.removeOverrideProvider(screenModelProvider)
    #expect(pod.resolve(screenModelProvider) !== original)
    let testPod = Pod(overrides: [screenModelProvider.override(withValue: given)])
    #expect(testPod.resolve(screenModelProvider) === given)
  }

  @Test("onDiscard runs at once when the discard happens on the main actor")
  func hookInline() {
    var closed: [Int] = []
    let holder = Shared<[Int]>([])
    let provider = MainActorProvider(
      scope: FlowScope(), name: "closing",
      onDiscard: { model in holder.withLock { $0.append(model.serial) } }
    ) { _ in ScreenModel(serial: 7, instance: Instance("x", serial: 0)) }
    let pod = Pod()
    _ = pod.resolve(provider)
    pod.clearCachedInstances(forScope: FlowScope())
    closed = holder.withLock { $0 }
    #expect(closed == [7])
  }

  @Test("onDiscard is scheduled onto the main actor when the discard happens elsewhere")
  func hookScheduled() async {
    let ran = AsyncGate()
    let onMain = Shared<Bool?>(nil)
    let provider = MainActorProvider(
      scope: FlowScope(), name: "closing",
      onDiscard: { _ in
        MainActor.assertIsolated()
        onMain.withLock { $0 = true }
        Task { await ran.open() }
      }
    ) { _ in ScreenModel(serial: 1, instance: Instance("x", serial: 0)) }
    let pod = Pod()
    _ = pod.resolve(provider)
    await Task.detached { pod.clearCachedInstances(forScope: FlowScope()) }.value
    await ran.wait()
    #expect(onMain.withLock { $0 } == true)
  }

  @Test("an async builder can resolve a main-actor provider by hopping to the main actor")
  func fromAsync() async throws {
    let title = AsyncProvider(name: "title") { pod in
      await pod.resolve(screenModelProvider).instance.label
    }
    #expect(try await Pod().resolve(title) == "screenService")
  }

  @Test("always-new builds on the main actor and on threads at once get the right values")
  @MainActor func mainActorAndThreads() async {
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let onMain = MainActorProvider(scope: AlwaysCreateNewScope(), name: "onMain") { context in
      MainActor.assertIsolated()
      return context.resolve(leaf) + 1
    }
    let pod = Pod()
    let stop = Shared(false)
    let wrong = Counter()
    let started = DispatchSemaphore(value: 0)
    // Bounded by its own count, not only by the main actor's progress: on a loaded machine, a
    // thread spinning until the main actor is done takes the time the main actor needs.
    let hammer = startThread {
      started.signal()
      var rounds = 0
      while rounds < 20_000, !stop.withLock({ $0 }) {
        if pod.resolve(leaf) != 1 { wrong.next() }
        rounds += 1
      }
    }
    #expect(waitWithWatchdog(started))
    for round in 1...2_000 {
      if pod.resolve(onMain) != 2 { wrong.next() }
      // Now and then, so that other tests' main-actor work is not held up for long.
      if round % 100 == 0 { await Task.yield() }
    }
    stop.withLock { $0 = true }
    _ = waitOrFail(hammer, "the hammering thread")
    #expect(wrong.value == 0)
    #expect(pod.invariantViolations == [])
  }
}
