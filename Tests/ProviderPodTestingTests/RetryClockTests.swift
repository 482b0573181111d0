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

@Suite struct RetryClockTests {
  /// The back-offs below add up to 30 seconds: a run well under 10 waited for none of them.
  private static let noRealWaiting = Duration.seconds(9)

  @Test(.isolated(appPod, clock: ImmediateClock()))
  func aTenSecondBackOffTakesNoRealTimeInATestWithAnImmediateClock() async throws {
    let start = ContinuousClock.now
    #expect(try await appPod.resolve(flakyProvider) == 3)
    #expect(ContinuousClock.now - start < Self.noRealWaiting)
  }

  @Test func aPodsClockIsWhatItsRetriesAndItsChildrensSleepOn() async throws {
    let backOffs = BackOffs()
    let pod = Pod(observer: backOffs, clock: ImmediateClock())
    let start = ContinuousClock.now
    #expect(try await pod.resolve(flakyProvider) == 3)
    // Retried after the policy's delays, which the clock did not make real.
    #expect(backOffs.all == [.seconds(10), .seconds(20)])

    let child = Pod(parent: pod, overrides: [attemptsProvider.override { _ in Counter() }])
    #expect(try await child.resolve(flakyProvider) == 3)
    #expect(ContinuousClock.now - start < Self.noRealWaiting)
  }

  @Test func anIsolationWithoutAClockKeepsThePodsClock() async throws {
    let pod = Pod(clock: ImmediateClock())
    try await pod.withIsolation { (testPod: Pod) async throws in
      let start = ContinuousClock.now
      #expect(try await testPod.resolve(flakyProvider) == 3)
      #expect(ContinuousClock.now - start < Self.noRealWaiting)
    }
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
