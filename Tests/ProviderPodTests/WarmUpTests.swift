import Testing

@testable import ProviderPod

@Suite("Warming providers up", .timeLimit(.minutes(10)))
struct WarmUpTests {
  @Test("plain, async and main-actor providers are built up front and cached")
  @MainActor
  func buildsEverything() async throws {
    let builds = Counter()
    let plain = Provider(name: "plain") { _ in Instance("plain", serial: builds.next()) }
    let async = AsyncProvider(name: "async") { pod in
      Instance("async", serial: builds.next(), dependencies: [pod.resolve(plain)])
    }
    let member = AsyncProviderFamily(name: "member") { (_, id: Int) in
      Instance("member", serial: id)
    }
    let onMain = MainActorProvider(name: "onMain") { _ in Instance("main", serial: builds.next()) }
    let pod = Pod()
    try await pod.warmUp(plain, async, member(7), onMain)
    #expect(builds.value == 3)
    let graph = Set(pod.dependencyGraph().nodes.map(\.provider))
    #expect(graph == ["plain", "async", "member(7)", "onMain"])
    #expect(try await pod.resolve(async).dependencies[0] === pod.resolve(plain))
    #expect(builds.value == 3)
  }

  @Test("async builds run concurrently")
  func concurrent() async throws {
    // Each builder waits for the other to have started: one after the other, they would
    // never finish.
    let firstStarted = AsyncGate()
    let secondStarted = AsyncGate()
    let first = AsyncProvider(name: "first") { _ in
      await firstStarted.open()
      await secondStarted.wait()
      return 1
    }
    let second = AsyncProvider(name: "second") { _ in
      await secondStarted.open()
      await firstStarted.wait()
      return 2
    }
    let pod = Pod()
    try await pod.warmUp([first, second])
    #expect(pod.dependencyGraph().nodes.count == 2)
  }

  @Test("the first failure names its provider and cancels the rest, which cache nothing")
  func firstFailure() async throws {
    let slowStarted = AsyncGate()
    let slowCancelled = AsyncGate()
    let slow = AsyncProvider(name: "slow") { _ -> Int in
      await slowStarted.open()
      do { try await waitUntilCancelled() } catch {
        await slowCancelled.open()
        throw error
      }
      return 0
    }
    let failing = AsyncProvider(name: "failing") { _ -> Int in
      await slowStarted.wait()
      throw Flaky(attempt: 1)
    }
    let plain = Provider(name: "plain") { _ in 3 }
    let pod = Pod()
    do {
      try await pod.warmUp(plain, slow, failing)
      Issue.record("the warm-up did not fail")
    } catch let error as WarmUpError {
      #expect(error.provider == "failing")
      #expect(error.underlying as? Flaky == Flaky(attempt: 1))
      #expect(error.description == "warming up failing failed: flaky #1")
    }
    // Its only caller was the warm-up, so its build is cancelled (else this waits forever).
    await slowCancelled.wait()
    let cached = Set(pod.dependencyGraph().nodes.map(\.provider))
    #expect(!cached.contains("slow") && !cached.contains("failing"))
  }

  @Test("a cancelled build that finishes anyway is not cached, and is disposed of")
  func nothingHalfBuilt() async throws {
    let failed = AsyncGate()
    let disposed = AsyncGate()
    let stubborn = AsyncProvider(
      name: "stubborn", onDiscard: { _ in Task { await disposed.open() } }
    ) { _ in
      // Ignores cancellation, and finishes after the warm-up has given up.
      await failed.wait()
      return Instance("stubborn", serial: 1)
    }
    let failing = AsyncProvider(name: "failing") { _ -> Int in throw Flaky(attempt: 1) }
    let pod = Pod()
    await #expect(throws: WarmUpError.self) { try await pod.warmUp(stubborn, failing) }
    await failed.open()
    await disposed.wait()
    #expect(pod.dependencyGraph().nodes.isEmpty)
  }

  @Test("a build someone else waits for goes on for them")
  func sharedBuildGoesOn() async throws {
    let started = AsyncGate()
    let release = AsyncGate()
    let shared = AsyncProvider(name: "shared") { _ in
      await started.open()
      await release.wait()
      return Instance("shared", serial: 1)
    }
    let failing = AsyncProvider(name: "failing") { _ -> Int in
      await started.wait()
      throw Flaky(attempt: 1)
    }
    let pod = Pod()
    let other = Task { try await pod.resolve(shared) }
    await started.wait()
    await #expect(throws: WarmUpError.self) { try await pod.warmUp(shared, failing) }
    await release.open()
    let value = try await other.value
    #expect(try await pod.resolve(shared) === value)
  }

  @Test("cancelling the warm-up's task throws CancellationError")
  func cancelled() async throws {
    let started = AsyncGate()
    let slow = AsyncProvider(name: "slow") { _ -> Int in
      await started.open()
      try await waitUntilCancelled()
      return 0
    }
    let pod = Pod()
    let warmUp = Task { try await pod.warmUp(slow) }
    await started.wait()
    warmUp.cancel()
    await #expect(throws: CancellationError.self) { try await warmUp.value }
  }
}
