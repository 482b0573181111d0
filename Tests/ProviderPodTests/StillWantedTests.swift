import Testing

@testable import ProviderPod

@Suite("Asking whether a build is still wanted", .timeLimit(.minutes(10)))
struct StillWantedTests {
  @Test("a running build is wanted; a context kept past its build is not")
  func whileRunning() throws {
    let kept = Shared<BuildContext?>(nil)
    let provider = Provider(name: "provider") { pod in
      kept.withLock { $0 = pod }
      return pod.isStillWanted
    }
    let always = Provider(scope: AlwaysCreateNewScope(), name: "always") { pod in
      pod.isStillWanted
    }
    let pod = Pod()
    #expect(pod.resolve(provider))
    #expect(pod.resolve(always))
    let context = try #require(kept.withLock { $0 })
    #expect(!context.isStillWanted)
    #expect(throws: CancellationError.self) { try context.checkStillWanted() }
  }

  /// Starts `provider`'s build, runs `change` once the builder is running, then lets the
  /// builder read its context; returns what it read.
  private func standing(
    after change: @Sendable (Pod) async -> Void, scope: any ProviderScope = SingletonScope()
  ) async throws -> (wanted: Bool, checkThrew: Bool) {
    let started = AsyncGate()
    let release = AsyncGate()
    let read = Shared<(Bool, Bool)?>(nil)
    let dependency = Provider(scope: StepScope(), name: "dependency") { _ in 1 }
    let slow = AsyncProvider(scope: scope, name: "slow") { pod in
      _ = pod.resolve(dependency)
      await started.open()
      await release.wait()
      let wanted = pod.isStillWanted
      var threw = false
      do { try pod.checkStillWanted() } catch { threw = error is CancellationError }
      read.withLock { $0 = (wanted, threw) }
      return 0
    }
    let pod = Pod()
    let caller = Task { try await pod.resolve(slow) }
    await started.wait()
    await change(pod)
    await release.open()
    _ = try? await caller.value
    let result = try #require(read.withLock { $0 })
    return result
  }

  @Test("unchanged, an async build stays wanted")
  func unchanged() async throws {
    let result = try await standing(after: { _ in })
    #expect(result.wanted && !result.checkThrew)
  }

  @Test("a discarded dependency makes the build unwanted")
  func dependencyDiscarded() async throws {
    let result = try await standing(after: { $0.clearCachedInstances(forScope: StepScope()) })
    #expect(!result.wanted && result.checkThrew)
  }

  @Test("a clear of the build's own scope makes it unwanted")
  func ownScopeCleared() async throws {
    let result = try await standing(
      after: { $0.clearCachedInstances(forScope: OtherStepScope()) }, scope: OtherStepScope())
    #expect(!result.wanted && result.checkThrew)
  }

  @Test("a clear of another scope leaves it wanted")
  func unrelatedClear() async throws {
    let result = try await standing(
      after: { $0.clearCachedInstances(forScope: UnrelatedScope()) }, scope: OtherStepScope())
    #expect(result.wanted && !result.checkThrew)
  }

  @Test("an override of the provider makes its build unwanted")
  func overridden() async throws {
    let target = AsyncProvider(name: "target") { _ in 0 }
    let started = AsyncGate()
    let release = AsyncGate()
    let read = Shared<Bool?>(nil)
    let pod = Pod()
    pod.overrideProvider(target) { pod in
      await started.open()
      await release.wait()
      read.withLock { $0 = pod.isStillWanted }
      return 1
    }
    let caller = Task { try await pod.resolve(target) }
    await started.wait()
    pod.overrideProvider(target, withValue: 2)
    await release.open()
    #expect(try await caller.value == 1)  // its caller still gets it, uncached
    #expect(read.withLock { $0 } == false)
    #expect(try await pod.resolve(target) == 2)
  }

  /// What a builder throws when it finds itself unwanted, instead of `CancellationError`.
  private struct Stopped: Error {}

  @Test(
    "a build that stops because a change made it unwanted starts its callers over",
    arguments: ["scope cleared", "provider overridden"], [false, true])
  func stoppedByChangeStartsOver(change: String, throwsItsOwnError: Bool) async throws {
    let started = AsyncGate()
    let release = AsyncGate()
    let builds = Counter()
    let versions = Counter()
    let dependency = Provider(scope: StepScope(), name: "dependency") { _ in versions.next() }
    let slow = AsyncProvider(scope: StepScope(), name: "slow") { pod in
      let build = builds.next()
      let version = pod.resolve(dependency)
      if build == 1 {
        await started.open()
        await release.wait()
      }
      if throwsItsOwnError {
        guard pod.isStillWanted else { throw Stopped() }
      } else {
        try pod.checkStillWanted()  // as the docs show
      }
      return Instance("slow", serial: version)
    }
    let events = EventRecorder()
    let pod = Pod(observer: events)
    let caller = Task { try await pod.resolve(slow) }
    await started.wait()
    // The watcher joins the running build: once the serial executor is idle it is waiting
    // for it, so it cannot arrive after the change and simply build anew.
    let executor = SerialTaskExecutor()
    let watcher = Task(executorPreference: executor) {
      var iterator = pod.instances(of: slow).makeAsyncIterator()
      return try await iterator.next()
    }
    await executor.waitUntilIdle()
    if change == "scope cleared" {
      pod.clearCachedInstances(forScope: StepScope())
    } else {
      pod.overrideProvider(slow) { _ in Instance("fake", serial: 0) }
    }
    await release.open()
    let called = await caller.result
    let watchedResult = await watcher.result
    // The stopped build did not fail: it counts no attempt.
    #expect(failures(in: events.events).isEmpty)
    #expect(throws: Never.self, "the caller") { try called.get() }
    #expect(throws: Never.self, "the watcher") { try watchedResult.get() }
    let value = try called.get()
    let watched = try #require(try watchedResult.get())
    // A fresh build that sees the change: the new dependency, or the override.
    if change == "scope cleared" {
      #expect(value.label == "slow" && value.serial == 2)
      #expect(builds.value == 2)
    } else {
      #expect(value.label == "fake")
      #expect(builds.value == 1)
    }
    #expect(watched === value)
    #expect(try await pod.resolve(slow) === value)
  }

  @Test("a caller through a child pod and a warm-up also start over after a stopped build")
  func stoppedBuildOtherCallers() async throws {
    let started = AsyncGate()
    let release = AsyncGate()
    let builds = Counter()
    let slow = AsyncProvider(scope: StepScope(), name: "slow") { pod in
      let build = builds.next()
      if build == 1 {
        await started.open()
        await release.wait()
      }
      try pod.checkStillWanted()
      return Instance("slow", serial: build)
    }
    let parent = Pod()
    let child = Pod(parent: parent)
    let caller = Task { try await parent.resolve(slow) }
    await started.wait()
    // Both join the parent's running build (the child through the tree) before the clear.
    let executor = SerialTaskExecutor()
    let throughChild = Task(executorPreference: executor) { try await child.resolve(slow) }
    let warmUp = Task(executorPreference: executor) { try await parent.warmUp(slow) }
    await executor.waitUntilIdle()
    parent.clearCachedInstances(forScope: StepScope())
    await release.open()
    let fromChild = await throughChild.result
    let warmed = await warmUp.result
    #expect(throws: Never.self, "the child's caller") { try fromChild.get() }
    #expect(throws: Never.self, "the warm-up") { try warmed.get() }
    let value = try await caller.value
    #expect(value.serial == 2)
    #expect(try fromChild.get() === value)
    #expect(try await parent.resolve(slow) === value)
  }

  @Test("when every caller has left, the build is unwanted and can stop early")
  func everyCallerLeft() async throws {
    let started = AsyncGate()
    let finished = AsyncGate()
    let read = Shared<Bool?>(nil)
    let slow = AsyncProvider(name: "slow") { pod in
      await started.open()
      // Not a cancellation-aware wait: the builder learns from its context alone.
      while pod.isStillWanted { await Task.yield() }
      read.withLock { $0 = pod.isStillWanted }
      await finished.open()
      return 0
    }
    let pod = Pod()
    let caller = Task { try await pod.resolve(slow) }
    await started.wait()
    caller.cancel()
    await finished.wait()
    #expect(read.withLock { $0 } == false)
  }

  @Test("when the pod goes away, the build is unwanted")
  func podGone() async throws {
    let started = AsyncGate()
    let release = AsyncGate()
    let finished = AsyncGate()
    let read = Shared<Bool?>(nil)
    let slow = AsyncProvider(name: "slow") { pod in
      await started.open()
      await release.wait()
      read.withLock { $0 = pod.isStillWanted }
      await finished.open()
      return 0
    }
    var pod: Pod? = Pod()
    // A watcher holds the engine but not the pod, so the pod can go while the build runs.
    let instances = pod!.instances(of: slow)
    let watcher = Task {
      var iterator = instances.makeAsyncIterator()
      return try await iterator.next()
    }
    await started.wait()
    pod = nil
    await release.open()
    await finished.wait()
    #expect(read.withLock { $0 } == false)
    #expect(try await watcher.value == nil)
  }

  @Test("an always-new build is wanted while it runs, on any thread; not after, nor without a pod")
  func stillWantedInThreadBuilds() {
    let kept = Shared<BuildContext?>(nil)
    let seen = Shared<[Bool]>([])
    let keeper = Provider(scope: AlwaysCreateNewScope(), name: "keeper") { context in
      let fromOther = Shared(false)
      waitWithWatchdog(startThread { fromOther.withLock { $0 = context.isStillWanted } })
      seen.withLock { $0 += [context.isStillWanted, fromOther.withLock { $0 }] }
      kept.withLock { $0 = context }
      return 0
    }
    let nested = Provider(scope: AlwaysCreateNewScope(), name: "nested") { context in
      context.resolve(keeper)
    }
    do {
      let pod = Pod()
      _ = pod.resolve(nested)
      #expect(seen.withLock { $0 } == [true, true])
      #expect(kept.withLock { $0?.isStillWanted } == false, "a build that is over")
      // A kept context builds anew, nested builds included; the pod goes away meanwhile.
      _ = kept.withLock { $0 }!.resolve(nested)
      #expect(seen.withLock { $0 } == [true, true, true, true])
    }
    #expect(kept.withLock { $0?.pod } == nil)
    _ = kept.withLock { $0 }!.resolve(nested)
    // Built through a pod that went away: nothing will keep it.
    #expect(seen.withLock { Array($0.suffix(2)) } == [false, false])
  }

  @Test(
    "a builder that keeps making its own build unwanted fails its callers after a bounded number of fresh starts"
  )
  func selfInvalidatingBuilderEnds() async {
    struct Stopped: Error {}
    let runs = Counter()
    let provider = AsyncProvider(scope: StepScope(), name: "clears its own scope") { pod -> Int in
      runs.next()
      pod.clearCachedInstances(forScope: StepScope())
      guard pod.isStillWanted else { throw Stopped() }
      return 0
    }
    let pod = Pod()
    await #expect(throws: Stopped.self) { try await pod.resolve(provider) }
    #expect(runs.value == 17, "the first build and 16 fresh starts")
  }
}
