import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// An async build of a shared provider started through one child runs in the parent until it
// finishes; siblings and the parent join it. Each joiner must still get the instance it would
// have built itself, and a child going away must not fail a build others wait for.
extension Pod {
  /// How many callers wait for the async build of `provider` in progress in this pod.
  fileprivate func asyncWaiters<Value>(for provider: AsyncProvider<Value>) -> Int {
    let pod = engine.pod
    return engine.state.withLock { _ in
      pod.slots[provider.info.key]?.build?.asyncBuild?.waiterCount ?? 0
    }
  }
}

@Suite("Child pods: async builds shared through children")
struct ChildPodAsyncTests {
  // An instance built from a window's own instance belongs to that window. An async build
  // started through one child is placed in the parent's slot until it finishes; a sibling (or
  // the parent) that resolves meanwhile joins it, and must look again when it ends, as a
  // synchronous waiter does, rather than take its result as is: that would hand the sibling
  // an instance built from the other window's session, with a dependency on that window.
  @Test("a sibling joining an async build through another child gets its own instance")
  func siblingJoinsAsyncBuildOfAnotherWindow() async throws {
    let gate = AsyncGate()
    let sessions = Counter()
    let session = Provider<Instance>(scope: AppWindowScope(), name: "session") { _ in
      Instance("session", serial: sessions.next())
    }
    let analytics = AsyncProvider<Instance>(name: "analytics") { pod in
      let session = pod.resolve(session)
      await gate.wait()
      return Instance("analytics", serial: 0, dependencies: [session])
    }
    let parent = Pod()
    let first = Pod(parent: parent, scopes: [AppWindowScope()])
    let second = Pod(parent: parent, scopes: [AppWindowScope()])
    let firstTask = Task { try await first.resolve(analytics) }
    #expect(await eventually { parent.asyncWaiters(for: analytics) == 1 })
    let secondTask = Task { try await second.resolve(analytics) }
    let parentTask = Task { try await parent.resolve(analytics) }
    #expect(await eventually { parent.asyncWaiters(for: analytics) == 3 })
    await gate.open()
    let firsts = try await firstTask.value
    let seconds = try await secondTask.value
    let parents = try await parentTask.value
    #expect(firsts.dependencies[0] === first.resolve(session))
    #expect(seconds.dependencies[0] === second.resolve(session))
    #expect(parents.dependencies[0] === parent.resolve(session))
  }

  // A child's own override wins: the same join must not hand a child that overrides a
  // dependency the instance another child built without it.
  @Test("a child overriding a dependency never joins an async build made without it")
  func overridingChildJoinsAsyncBuild() async throws {
    let gate = AsyncGate()
    let client = instanceProvider("client")
    let catalog = AsyncProvider<Instance>(name: "catalog") { pod in
      let client = pod.resolve(client)
      await gate.wait()
      return Instance("catalog", serial: 0, dependencies: [client])
    }
    let parent = Pod()
    let plain = Pod(parent: parent)
    let preview = Pod(
      parent: parent, overrides: [client.override { _ in Instance("fake client", serial: 0) }])
    let plainTask = Task { try await plain.resolve(catalog) }
    #expect(await eventually { parent.asyncWaiters(for: catalog) == 1 })
    let previewTask = Task { try await preview.resolve(catalog) }
    #expect(await eventually { parent.asyncWaiters(for: catalog) == 2 })
    await gate.open()
    _ = try await plainTask.value
    let previews = try await previewTask.value
    #expect(previews.dependencies[0].label == "fake client")
    #expect(try await preview.resolve(catalog).dependencies[0].label == "fake client")
  }

  @Test("a shared async build through two children, one of them cancelled, builds once")
  func asyncThroughChildrenWithCancellation() async throws {
    let builds = Counter()
    let gate = AsyncGate()
    let window = Provider<Instance>(scope: AppWindowScope(), name: "window") { _ in
      Instance("window", serial: 0)
    }
    let config = AsyncProvider<Int>(name: "config") { _ in
      await gate.wait()
      return builds.next()
    }
    let own = AsyncProvider<Instance>(scope: AppWindowScope(), name: "own") { pod in
      Instance("own", serial: try await pod.resolve(config), dependencies: [pod.resolve(window)])
    }
    let parent = Pod()
    let first = Pod(parent: parent, scopes: [AppWindowScope()])
    let second = Pod(parent: parent, scopes: [AppWindowScope()])
    let cancelled = Task { try await first.resolve(own) }
    let waiting = Task { try await second.resolve(own) }
    #expect(await eventually { parent.asyncWaiters(for: config) == 2 })
    cancelled.cancel()
    await #expect(throws: CancellationError.self) { try await cancelled.value }
    await gate.open()
    let instance = try await waiting.value
    #expect(instance.serial == 1)
    #expect(instance.dependencies[0] === second.resolve(window))
    #expect(try await first.resolve(config) == 1)
    #expect(try await parent.resolve(config) == 1)
    #expect(try await first.resolve(own) !== instance)
    #expect(builds.value == 1)
    #expect(parent.invariantViolations == [])
  }

  // RetryPolicy: "the pod going away during a back-off ends the retries". Only the back-offs
  // of builds placed in the pod that goes away end: a shared build started through a child is
  // the parent's, and a sibling that still waits for it must not get a CancellationError it
  // never asked for when that child goes away.
  @Test("a child going away does not fail a shared build its sibling waits for")
  func siblingReleasedDuringBackOff() async throws {
    let sleeper = ManualSleep()
    let attempts = Counter()
    let config = AsyncProvider<Int>(
      name: "config", retry: .exponentialBackoff(maxAttempts: 3, sleep: sleeper.sleep)
    ) { _ in
      let attempt = attempts.next()
      if attempt == 1 { throw Flaky(attempt: attempt) }
      return attempt
    }
    let parent = Pod()
    let second = Pod(parent: parent)
    weak var weakFirst: Pod?
    let firstTask: Task<Int, any Error>
    do {
      let first = Pod(parent: parent)
      weakFirst = first
      firstTask = Task { try await first.resolve(config) }
    }
    guard await sleeper.requests.next("the first back-off") != nil else { return }
    let secondTask = Task { try await second.resolve(config) }
    #expect(await eventually { parent.asyncWaiters(for: config) == 2 })
    firstTask.cancel()
    _ = await firstTask.result
    #expect(await eventually { weakFirst == nil })  // the first window closed
    sleeper.wake()
    #expect(try await secondTask.value == 2)
    #expect(parent.invariantViolations == [])
  }

  @Test("warming up through a child builds shared instances in the parent, once")
  func warmUpThroughAChild() async throws {
    let configBuilds = Counter()
    let config = AsyncProvider<Int>(name: "config") { _ in configBuilds.next() }
    let own = AsyncProvider<Int>(scope: AppWindowScope(), name: "own") { pod in
      try await pod.resolve(config) + 10
    }
    let plain = instanceProvider("plain", scope: AppWindowScope())
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [AppWindowScope()])
    try await child.warmUp(config, own, plain, config)
    #expect(configBuilds.value == 1)
    #expect(try await parent.resolve(config) == 1)
    #expect(try await child.resolve(own) == 11)
    #expect(parent.slotCount == 1)

    // A failure leaves nothing half-built in the parent.
    let failing = AsyncProvider<Int>(scope: AppWindowScope(), name: "failing") { _ in
      throw Flaky(attempt: 1)
    }
    let slow = AsyncProvider<Int>(name: "slow") { _ in
      try await waitUntilCancelled()
      return 0
    }
    let other = Pod(parent: parent, scopes: [AppWindowScope()])
    await #expect(throws: WarmUpError.self) { try await other.warmUp(slow, failing) }
    #expect(await eventually { parent.slotCount == 1 })
    #expect(parent.invariantViolations == [])
  }

  @Test("families and main-actor providers in children: shared, overridden, disposed once")
  @MainActor
  func familiesAndMainActorProviders() async {
    let disposals = DisposalCounts()
    let api = instanceProvider("api")
    let profiles = ProviderFamily<Int, Instance>(name: "profile") { pod, id in
      Instance("profile", serial: id, dependencies: [pod.resolve(api)])
    }
    let viewModel = MainActorProvider<Instance>(
      scope: AppWindowScope(), name: "view model", onDiscard: { disposals.record($0) }
    ) { pod in Instance("view model", serial: 0, dependencies: [pod.resolve(profiles(1))]) }
    let parent = Pod()
    let sibling = Pod(parent: parent, scopes: [AppWindowScope()])
    var child: Pod? = Pod(parent: parent, scopes: [AppWindowScope()])
    child!.overrideProvider(profiles) { _, id in Instance("fake profile", serial: id) }

    #expect(sibling.resolve(profiles(1)) === parent.resolve(profiles(1)))
    #expect(child!.resolve(profiles(1)).label == "fake profile")
    let childViewModel = child!.resolve(viewModel)
    #expect(childViewModel.dependencies[0].label == "fake profile")
    let siblingViewModel = sibling.resolve(viewModel)
    #expect(siblingViewModel.dependencies[0] === parent.resolve(profiles(1)))

    parent.clearCachedInstances(of: profiles)  // reaches the sibling, not the overriding child
    #expect(child!.resolve(viewModel) === childViewModel)
    #expect(sibling.resolve(viewModel) !== siblingViewModel)
    #expect(disposals.count(of: siblingViewModel) == 1)

    child = nil  // disposed of off the main actor's call: the hook hops to it
    #expect(await eventually { disposals.count(of: childViewModel) == 1 })
    #expect(disposals.duplicates == 0)
    #expect(parent.childCount == 1)
    #expect(parent.invariantViolations == [])
  }
}

@Suite("Child pods: watching instances through a child")
struct ChildPodWatchTests {
  // "A new one each time it is discarded and rebuilt; nothing is missed." That holds for a
  // child watching a shared instance that its own first resolve built: the build was cached
  // in the parent, and the child keeps a link to it only from its next resolve, so the watch
  // must not take the instance for uncached and miss the parent's discard.
  @Test("a child watching a shared instance it built first sees the parent discard it")
  func watchOfSharedInstanceBuiltThroughChild() async {
    let api = instanceProvider("api")
    let parent = Pod()
    let child = Pod(parent: parent)
    let apis = child.instances(of: api)
    let (seen, yield) = AsyncStream<Instance>.makeStream()
    let watcher = Task {
      for await instance in apis { yield.yield(instance) }
    }
    defer { watcher.cancel() }
    guard let first = await seen.next("the first api") else { return }
    #expect(first === parent.resolve(api))
    parent.clearCachedInstance(of: api)
    let second = await seen.next("the second api")
    #expect(second != nil)
    #expect(second !== first)
  }

  @Test("watching through a child sees the parent's discards, and ends with the child")
  func watchingThroughAChild() async {
    let apiBuilds = Counter()
    let api = instanceProvider("api", counter: apiBuilds)
    let session = instanceProvider("session", scope: AppWindowScope(), dependencies: [api])
    let parent = Pod()
    var child: Pod? = Pod(parent: parent, scopes: [AppWindowScope()])
    let sessions = child!.instances(of: session)
    let apis = child!.instances(of: api)
    let (seen, yield) = AsyncStream<Instance>.makeStream()
    let watcher = Task {
      for await instance in sessions { yield.yield(instance) }
      for await instance in apis {
        yield.yield(instance)
        break
      }
      yield.yield(Instance("end", serial: 0))  // both watches ended
    }
    guard let first = await seen.next("the first session") else { return }
    parent.clearCachedInstance(of: api)
    guard let second = await seen.next("the session after the parent's discard") else { return }
    #expect(second !== first)
    #expect(second.dependencies[0] === parent.resolve(api))
    #expect(second === child!.resolve(session))
    child = nil  // the window closes: the watch of its sessions ends, and a new one at once
    #expect(await seen.next("the end of the watches")?.label == "end")
    await watcher.value
    #expect(parent.childCount == 0)
    #expect(parent.invariantViolations == [])
  }
}
