import ProviderPod
import ProviderPodTesting
import Testing

/// Fails until its third attempt; each attempt counted in the pod resolving it.
let attemptsProvider = Provider(name: "attempts") { _ in Counter() }
struct Unavailable: Error {}
let flakyProvider = AsyncProvider(
  name: "flaky", retry: .exponentialBackoff(initialDelay: .seconds(10), maxAttempts: 3)
) { pod in
  let attempt = pod.resolve(attemptsProvider).next()
  if attempt < 3 { throw Unavailable() }
  return attempt
}

/// Counts calls from any thread.
final class Counter: Sendable {
  private let count = Shared(0)

  func next() -> Int {
    count.withLock {
      $0 += 1
      return $0
    }
  }
}

/// Keeps the back-offs a pod reports.
final class BackOffs: PodObserver {
  private let delays = Shared<[Duration]>([])

  func pod(_ pod: Pod, didReport event: PodEvent) {
    if case .buildFailed(_, _, _, let retryingIn?) = event {
      delays.withLock { $0.append(retryingIn) }
    }
  }

  var all: [Duration] { delays.withLock { $0 } }
}

/// An immediate clock that keeps what it was asked to wait: a back-off that slept on the real
/// clock instead leaves nothing here (and takes its full time).
struct RecordingClock: Clock {
  let waits = Shared<[Duration]>([])
  private let clock = ImmediateClock()

  var now: ImmediateClock.Instant { clock.now }
  var minimumResolution: Duration { clock.minimumResolution }

  func sleep(until deadline: ImmediateClock.Instant, tolerance: Duration?) async throws {
    waits.withLock { $0.append(now.duration(to: deadline)) }
    try await clock.sleep(until: deadline, tolerance: tolerance)
  }

  var all: [Duration] { waits.withLock { $0 } }
}

@Suite struct RetryClockTests {
  static let testClock = RecordingClock()

  @Test(.isolated(appPod, clock: testClock))
  func aTenSecondBackOffTakesNoRealTimeInATestWithAnImmediateClock() async throws {
    #expect(try await appPod.resolve(flakyProvider) == 3)
    #expect(Self.testClock.all == [.seconds(10), .seconds(20)])
  }

  @Test func aPodsClockIsWhatItsRetriesAndItsChildrensSleepOn() async throws {
    let backOffs = BackOffs()
    let clock = RecordingClock()
    let pod = Pod(observer: backOffs, clock: clock)
    #expect(try await pod.resolve(flakyProvider) == 3)
    #expect(backOffs.all == [.seconds(10), .seconds(20)])

    let child = Pod(parent: pod, overrides: [attemptsProvider.override { _ in Counter() }])
    #expect(try await child.resolve(flakyProvider) == 3)
    #expect(clock.all == [.seconds(10), .seconds(20), .seconds(10), .seconds(20)])
  }

  @Test func anIsolationWithoutAClockKeepsThePodsClock() async throws {
    let clock = RecordingClock()
    let pod = Pod(clock: clock)
    try await pod.withIsolation { (testPod: Pod) async throws in
      #expect(try await testPod.resolve(flakyProvider) == 3)
    }
    #expect(clock.all == [.seconds(10), .seconds(20)])
  }

  @Test func aPolicysOwnSleepWinsOverThePodsClock() async throws {
    let clock = RecordingClock()
    let slept = Shared(0)
    let provider = AsyncProvider(
      retry: .exponentialBackoff(maxAttempts: 2, sleep: { _ in slept.withLock { $0 += 1 } })
    ) { pod in
      if pod.resolve(attemptsProvider).next() < 2 { throw Unavailable() }
      return "built"
    }
    #expect(try await Pod(clock: clock).resolve(provider) == "built")
    #expect(slept.withLock { $0 } == 1)
    #expect(clock.all.isEmpty)
  }

  @Test func aSleepOfTheImmediateClockStillEndsWhenItsTaskIsCancelled() async {
    let task = Task {
      while !Task.isCancelled { await Task.yield() }
      try await ImmediateClock().sleep(for: .seconds(60))
    }
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
  }
}
