import Foundation
import ProviderPod
import Testing

private struct BuildFailed: Error, Equatable {
  let attempt: Int
}

@Suite("Async providers", .timeLimit(.minutes(10)))
struct AsyncProviderTests {
  @Test("concurrent resolves share one build: the builder runs once, everyone gets its result")
  func singleFlight() async throws {
    let builds = Counter()
    let release = AsyncGate()
    let slow = AsyncProvider(name: "slow") { _ in
      await release.wait()
      return Instance("slow", serial: builds.next())
    }
    let pod = Pod()
    // Once the serial executor is idle, every caller is waiting for the build: none can come
    // late and be served from the cache, which would pass without any sharing.
    let executor = SerialTaskExecutor()
    let results = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
      for _ in 0..<50 {
        group.addTask(executorPreference: executor) {
          ObjectIdentifier(try await pod.resolve(slow))
        }
      }
      await executor.waitUntilIdle()
      await release.open()
      return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
    }
    #expect(builds.value == 1)
    #expect(results.count == 1)
  }

  @Test("a failed build caches nothing, every waiter gets the error, the next resolve retries")
  func failureThenRetry() async throws {
    let attempts = Counter()
    let release = AsyncGate()
    let flaky = AsyncProvider(name: "flaky") { _ -> Instance in
      let attempt = attempts.next()
      if attempt == 1 {
        await release.wait()
        throw BuildFailed(attempt: attempt)
      }
      return Instance("flaky", serial: attempt)
    }
    let pod = Pod()
    // The waiters run on one serial executor, so once it is idle each has joined the build
    // and is suspended waiting for it: none can arrive after the failure and start a retry.
    let executor = SerialTaskExecutor()
    let outcomes = await withTaskGroup(of: Result<Int, BuildFailed>.self) { group in
      for _ in 0..<5 {
        group.addTask(executorPreference: executor) {
          do { return .success(try await pod.resolve(flaky).serial) } catch let error
            as BuildFailed
          { return .failure(error) } catch { return .failure(BuildFailed(attempt: -1)) }
        }
      }
      await executor.waitUntilIdle()
      await release.open()
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(outcomes.count == 5)
    #expect(outcomes.allSatisfy { $0 == .failure(BuildFailed(attempt: 1)) })
    #expect(attempts.value == 1)
    let retried = try await pod.resolve(flaky)
    #expect(retried.serial == 2)
    #expect(try await pod.resolve(flaky) === retried)
  }

  @Test("a cancelled waiter stops waiting; the build goes on for the others")
  func cancelledWaiter() async throws {
    let builds = Counter()
    let started = AsyncGate()
    let release = AsyncGate()
    let slow = AsyncProvider(name: "slow") { _ in
      await started.open()
      await release.wait()
      return Instance("slow", serial: builds.next())
    }
    let pod = Pod()
    let first = Task { try await pod.resolve(slow) }
    await started.wait()
    // Cancelled only once it is waiting: a task cancelled before it resolves proves nothing.
    let executor = SerialTaskExecutor()
    let second = Task(executorPreference: executor) { try await pod.resolve(slow) }
    await executor.waitUntilIdle()
    second.cancel()
    await #expect(throws: CancellationError.self) { try await second.value }
    await release.open()
    let instance = try await first.value
    #expect(builds.value == 1)
    #expect(try await pod.resolve(slow) === instance)
  }

  @Test("when every waiter has gone, the build is cancelled")
  func everyoneLeft() async throws {
    let started = AsyncGate()
    let sawCancellation = AsyncGate()
    let attempts = Counter()
    let slow = AsyncProvider(name: "slow") { _ -> Int in
      let attempt = attempts.next()
      await started.open()
      await withTaskCancellationHandler {
        await AsyncGate().wait()  // never opens: only cancellation ends this build
      } onCancel: {
        Task { await sawCancellation.open() }
      }
      return attempt
    }
    let pod = Pod()
    let only = Task { try await pod.resolve(slow) }
    await started.wait()
    only.cancel()
    await #expect(throws: CancellationError.self) { try await only.value }
    await sawCancellation.wait()
    #expect(attempts.value == 1)
  }

  @Test(
    "a clear racing a build: the waiter gets that result, it is not cached, the next resolve builds again"
  )
  func clearRacingBuild() async throws {
    let builds = Counter()
    let started = AsyncGate()
    let release = AsyncGate()
    let scoped = AsyncProvider(scope: StepScope(), name: "scoped") { _ in
      let serial = builds.next()
      if serial == 1 {
        await started.open()
        await release.wait()
      }
      return Instance("scoped", serial: serial)
    }
    let pod = Pod()
    let racing = Task { try await pod.resolve(scoped) }
    await started.wait()
    pod.clearCachedInstances(forScope: StepScope())
    // A resolve after the clear does not join the stale build.
    let fresh = try await pod.resolve(scoped)
    #expect(fresh.serial == 2)
    await release.open()
    #expect(try await racing.value.serial == 1)
    #expect(try await pod.resolve(scoped) === fresh)
  }

  @Test("an async builder resolves plain and async providers, and is discarded with them")
  func dependencies() async throws {
    let plain = instanceProvider("plain", scope: FlowScope())
    let inner = AsyncProvider(name: "inner") { pod in
      Instance("inner", serial: 0, dependencies: [pod.resolve(plain)])
    }
    let outer = AsyncProvider(name: "outer") { pod in
      Instance("outer", serial: 0, dependencies: [try await pod.resolve(inner)])
    }
    let pod = Pod()
    let outer1 = try await pod.resolve(outer)
    #expect(try await pod.resolve(outer) === outer1)
    pod.clearCachedInstances(forScope: FlowScope())
    let outer2 = try await pod.resolve(outer)
    #expect(outer2 !== outer1)
    #expect(outer2.dependencies[0].dependencies[0] === pod.resolve(plain))
  }

  @Test("overrides: an async builder, a value, removal, and Pod(overrides:)")
  func overrides() async throws {
    let config = AsyncProvider(name: "config") { _ in "live" }
    let pod = Pod(overrides: [config.override { _ in "initial" }])
    #expect(try await pod.resolve(config) == "initial")
    pod.overrideProvider(config) { _ in
      await Task.yield()
      return "async"
    }
    #expect(try await pod.resolve(config) == "async")
    pod.overrideProvider(config, withValue: "value")
    #expect(try await pod.resolve(config) == "value")
    pod.removeOverrideProvider(config)
    #expect(try await pod.resolve(config) == "live")
    let valuePod = Pod(overrides: [config.override(withValue: "given")])
    #expect(try await valuePod.resolve(config) == "given")
  }

  @Test("always-new async providers build every time, in the caller's task")
  func alwaysNew() async throws {
    let counter = Counter()
    let fresh = AsyncProvider(scope: AlwaysCreateNewScope()) { _ in counter.next() }
    let pod = Pod()
    #expect(try await pod.resolve(fresh) == 1)
    #expect(try await pod.resolve(fresh) == 2)
  }

  @Test("async families: a member per argument, family-wide overrides, clearing")
  func families() async throws {
    let loads = Counter()
    let avatar = AsyncProviderFamily(scope: StepScope(), name: "avatar") { (_, id: Int) in
      loads.next()
      return "avatar\(id)"
    }
    let pod = Pod()
    #expect(try await pod.resolve(avatar(1)) == "avatar1")
    #expect(try await pod.resolve(avatar(1)) == "avatar1")
    #expect(loads.value == 1)
    pod.overrideProvider(avatar) { _, id in "placeholder\(id)" }
    #expect(try await pod.resolve(avatar(2)) == "placeholder2")
    pod.removeOverrideProvider(avatar)
    pod.clearCachedInstances(of: avatar)
    #expect(try await pod.resolve(avatar(1)) == "avatar1")
    #expect(loads.value == 2)
    #expect(avatar(3).name == "avatar(3)")
  }

  @Test("onDiscard runs for async instances the pod built")
  func disposal() async throws {
    let disposed = Shared<[String]>([])
    let session = AsyncProvider(
      scope: FlowScope(), name: "session",
      onDiscard: { value in disposed.withLock { $0.append(value) } }
    ) { _ in "session" }
    let pod = Pod()
    _ = try await pod.resolve(session)
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(disposed.withLock { $0 } == ["session"])
    pod.clearCachedInstance(of: session)
    #expect(disposed.withLock { $0 } == ["session"])
  }
}

let asyncCycleA: AsyncProvider<Int> = AsyncProvider(name: "asyncCycleA") { pod in
  try await pod.resolve(asyncCycleB) + 1
}
let asyncCycleB: AsyncProvider<Int> = AsyncProvider(name: "asyncCycleB") { pod in
  try await pod.resolve(asyncCycleA) + 1
}

@Suite("Async cycles")
struct AsyncCycleTests {
  @Test("a cycle of async providers stops with the chain instead of hanging")
  func asyncCycle() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = try? await Pod().resolve(asyncCycleA)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("ProviderPod: dependency cycle: asyncCycleA ("))
    #expect(message.contains(") -> asyncCycleB ("))
    #expect(message.contains(") -> asyncCycleA\n"))
  }
}
