import Testing

@testable import ProviderPod

@Suite("Retrying async builds", .timeLimit(.minutes(10)))
struct RetryPolicyTests {
  @Test("delays grow by the multiplier from the initial delay up to the cap")
  func delays() {
    let policy = RetryPolicy.exponentialBackoff(
      initialDelay: .milliseconds(200), multiplier: 2, maxDelay: .seconds(1), maxAttempts: 9)
    #expect(
      (1...5).map { policy.delay(afterAttempt: $0) } == [
        .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1),
      ])
    #expect(policy.delay(afterAttempt: 1_000_000) == .seconds(1))
    #expect(policy.maxAttempts == 9)
    #expect(RetryPolicy.never.maxAttempts == 1)
  }

  @Test("a failing build is retried after each back-off; callers share the attempts")
  func retriesUntilSuccess() async throws {
    let sleep = ManualSleep()
    let attempts = Counter()
    let flaky = AsyncProvider(
      name: "flaky",
      retry: .exponentialBackoff(
        initialDelay: .milliseconds(100), multiplier: 2, maxDelay: .milliseconds(300),
        maxAttempts: 5, sleep: sleep.sleep)
    ) { _ in
      let attempt = attempts.next()
      if attempt < 4 { throw Flaky(attempt: attempt) }
      return Instance("flaky", serial: attempt)
    }
    let events = EventRecorder()
    let pod = Pod(observer: events)
    let first = Task { try await pod.resolve(flaky) }
    #expect(await sleep.requests.next("the first back-off") == .milliseconds(100))
    // Joins the build while it backs off: it waits for the same retries.
    let second = Task { try await pod.resolve(flaky) }
    sleep.wake()
    #expect(await sleep.requests.next("the second back-off") == .milliseconds(200))
    sleep.wake()
    #expect(await sleep.requests.next("the third back-off") == .milliseconds(300))
    sleep.wake()
    let (a, b) = try await (first.value, second.value)
    #expect(a === b)
    #expect(a.serial == 4)
    #expect(attempts.value == 4)
    #expect(try await pod.resolve(flaky) === a)
    let failed = failures(in: events.events)
    #expect(failed.map(\.1) == [1, 2, 3])
    #expect(failed.map(\.2) == [.milliseconds(100), .milliseconds(200), .milliseconds(300)])
    #expect(failed.allSatisfy { $0.0 == "flaky" })
    #expect(events.events.contains(.built(provider: "flaky", scope: "SingletonScope")))
  }

  @Test("after the last attempt every caller gets its error, and nothing is cached")
  func givesUp() async throws {
    let sleep = ManualSleep()
    let attempts = Counter()
    let failing = AsyncProvider(
      name: "failing", retry: .exponentialBackoff(maxAttempts: 3, sleep: sleep.sleep)
    ) { _ -> Int in
      throw Flaky(attempt: attempts.next())
    }
    let events = EventRecorder()
    let pod = Pod(observer: events)
    let caller = Task { try await pod.resolve(failing) }
    for _ in 1...2 {
      _ = await sleep.requests.next("a back-off")
      sleep.wake()
    }
    await #expect(throws: Flaky(attempt: 3)) { try await caller.value }
    #expect(failures(in: events.events).map(\.2) == [.milliseconds(200), .milliseconds(400), nil])
    #expect(
      events.events.contains(
        .buildFailed(provider: "failing", attempt: 3, error: "flaky #3", retryingIn: nil)))
    #expect(pod.dependencyGraph().nodes.isEmpty)
  }

  @Test("only the errors retryIf accepts are retried")
  func retryIf() async throws {
    let sleep = ManualSleep()
    let attempts = Counter()
    let picky = AsyncProvider(
      name: "picky",
      retry: .exponentialBackoff(retryIf: { ($0 as? Flaky)?.attempt == 1 }, sleep: sleep.sleep)
    ) { _ -> Int in
      throw Flaky(attempt: attempts.next())
    }
    let events = EventRecorder()
    let pod = Pod(observer: events)
    let caller = Task { try await pod.resolve(picky) }
    _ = await sleep.requests.next("the back-off after the first attempt")
    sleep.wake()
    await #expect(throws: Flaky(attempt: 2)) { try await caller.value }
    #expect(attempts.value == 2)
    #expect(failures(in: events.events).map(\.2) == [.milliseconds(200), nil])
  }

  @Test("without a policy, a failure is one failed attempt that gives up")
  func neverRetries() async throws {
    let failing = AsyncProvider(name: "once") { _ -> Int in throw Flaky(attempt: 1) }
    let events = EventRecorder()
    let pod = Pod(observer: events)
    await #expect(throws: Flaky(attempt: 1)) { try await pod.resolve(failing) }
    let failed = PodEvent.buildFailed(
      provider: "once", attempt: 1, error: "flaky #1", retryingIn: nil)
    #expect(events.events.filter { failures(in: [$0]).count == 1 } == [failed])
    #expect(failed.description == "build of once failed (attempt 1): flaky #1; giving up")
    #expect(
      PodEvent.buildFailed(
        provider: "config", attempt: 2, error: "timeout", retryingIn: .milliseconds(400)
      ).description == "build of config failed (attempt 2): timeout; retrying in 400 ms")
    #expect(
      PodEvent.buildFailed(provider: "c", attempt: 3, error: "e", retryingIn: .milliseconds(1500))
        .description.hasSuffix("retrying in 1.5 s"))
  }

  @Test("when every caller leaves during a back-off, the sleep and the retries stop")
  func cancellationStopsRetries() async throws {
    let sleep = ManualSleep()
    let attempts = Counter()
    let flaky = AsyncProvider(
      name: "flaky", retry: .exponentialBackoff(maxAttempts: 5, sleep: sleep.sleep)
    ) { _ in
      let attempt = attempts.next()
      if attempt == 1 { throw Flaky(attempt: attempt) }
      return Instance("flaky", serial: attempt)
    }
    let pod = Pod()
    let caller = Task { try await pod.resolve(flaky) }
    _ = await sleep.requests.next("the back-off")
    caller.cancel()
    await #expect(throws: CancellationError.self) { try await caller.value }
    // The build's task was cancelled with its last caller: its sleep ends, and no second
    // attempt runs. A later resolve starts a build of its own.
    let restarted = try await pod.resolve(flaky)
    #expect(restarted.serial == 2)
    #expect(sleep.cancellations == 1)
    #expect(attempts.value == 2)
  }

  @Test("an override during a back-off starts the build over, with the change")
  func invalidationStartsOver() async throws {
    let sleep = ManualSleep()
    let endpoint = Provider(name: "endpoint") { _ in "down" }
    let attempts = Counter()
    let client = AsyncProvider(
      name: "client", retry: .exponentialBackoff(maxAttempts: 3, sleep: sleep.sleep)
    ) { pod in
      let attempt = attempts.next()
      let url = pod.resolve(endpoint)
      if url == "down" { throw Flaky(attempt: attempt) }
      return Instance(url, serial: attempt)
    }
    let events = EventRecorder()
    let pod = Pod(observer: events)
    let caller = Task { try await pod.resolve(client) }
    _ = await sleep.requests.next("the back-off")
    // Discards what the build was built from: the back-off ends without the test waking it.
    pod.overrideProvider(endpoint, withValue: "up")
    let value = try await caller.value
    #expect(value.label == "up")
    #expect(value.serial == 2)
    #expect(sleep.cancellations == 1)
    #expect(try await pod.resolve(client) === value)
    #expect(failures(in: events.events).map(\.1) == [1])
  }

  @Test("a clear of the build's scope during a back-off starts it over with fresh attempts")
  func scopeClearStartsOver() async throws {
    let sleep = ManualSleep()
    let attempts = Counter()
    let flaky = AsyncProvider(
      scope: StepScope(), name: "flaky",
      retry: .exponentialBackoff(maxAttempts: 2, sleep: sleep.sleep)
    ) { _ -> Instance in
      let attempt = attempts.next()
      if attempt <= 2 { throw Flaky(attempt: attempt) }
      return Instance("flaky", serial: attempt)
    }
    let events = EventRecorder()
    let pod = Pod(observer: events)
    let caller = Task { try await pod.resolve(flaky) }
    _ = await sleep.requests.next("the first build's back-off")
    pod.clearCachedInstances(forScope: FlowScope())
    // The new build counts its attempts from 1: its first one (attempt 2 overall) fails and
    // backs off again, its second succeeds, although the policy allows two attempts in all.
    _ = await sleep.requests.next("the new build's back-off")
    sleep.wake()
    let value = try await caller.value
    #expect(value.serial == 3)
    #expect(failures(in: events.events).map(\.1) == [1, 1])
  }

  @Test("an override's builder is retried with the provider's policy")
  func overridesRetry() async throws {
    let sleep = ManualSleep()
    let attempts = Counter()
    let real = AsyncProvider(
      name: "real", retry: .exponentialBackoff(maxAttempts: 2, sleep: sleep.sleep)
    ) { _ in 0 }
    let pod = Pod(overrides: [
      real.override { _ in
        let attempt = attempts.next()
        if attempt == 1 { throw Flaky(attempt: attempt) }
        return attempt
      }
    ])
    let caller = Task { try await pod.resolve(real) }
    _ = await sleep.requests.next("the override's back-off")
    sleep.wake()
    #expect(try await caller.value == 2)
  }

  @Test("the pod going away during a back-off stops the retries")
  func podGoneStopsRetries() async throws {
    let sleep = ManualSleep()
    let attempts = Counter()
    let flaky = AsyncProvider(
      name: "flaky", retry: .exponentialBackoff(maxAttempts: 5, sleep: sleep.sleep)
    ) { _ -> Int in
      throw Flaky(attempt: attempts.next())
    }
    var pod: Pod? = Pod()
    // A watcher holds the engine but not the pod, so the pod can go while it waits.
    let instances = pod!.instances(of: flaky)
    let watcher = Task {
      var iterator = instances.makeAsyncIterator()
      return try await iterator.next()
    }
    _ = await sleep.requests.next("the back-off")
    pod = nil
    #expect(try await watcher.value == nil)
    #expect(sleep.cancellations == 1)
    #expect(attempts.value == 1)
  }
}
