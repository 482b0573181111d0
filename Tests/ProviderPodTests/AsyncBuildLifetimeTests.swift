import Foundation
import Testing

@testable import ProviderPod

/// Tells a test when something has happened, from any task.
private final class Signal: Sendable {
  let stream: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation
  init() { (stream, continuation) = AsyncStream.makeStream() }
  func fire() { continuation.yield() }
  /// Waits for the next signal; false after `hangWatchdogSeconds` (a watchdog, not a delay:
  /// the expected signal normally arrives at once).
  func next() async -> Bool {
    await ProviderPodTests.next(of: stream, within: hangWatchdogSeconds) != nil
  }
}

@Suite("Async builds and their callers")
struct AsyncBuildLifetimeTests {
  @Test("once every caller has left a build, a new caller starts a fresh one")
  func abandonedBuildIsNotJoined() async throws {
    let firstStarted = Signal()
    let secondStarted = Signal()
    let gate = Shared<CheckedContinuation<Void, Never>?>(nil)
    let builds = Counter()
    let provider = AsyncProvider(name: "slow") { _ in
      let build = builds.next()
      if build == 1 {
        // Holds on until the test lets it go, then notices it was cancelled.
        await withCheckedContinuation { continuation in
          gate.withLock { $0 = continuation }
          firstStarted.fire()
        }
        try Task.checkCancellation()
      } else {
        secondStarted.fire()
      }
      return build
    }
    let pod = Pod()
    let first = Task { try await pod.resolve(provider) }
    #expect(await firstStarted.next())
    first.cancel()
    await #expect(throws: CancellationError.self) { try await first.value }
    // Never cancelled: it must start a build of its own, not wait for the abandoned one and
    // inherit its cancellation.
    let second = Task { try await pod.resolve(provider) }
    #expect(await secondStarted.next())
    gate.withLock { $0 }?.resume()
    #expect(try await second.value == 2)
    #expect(try await pod.resolve(provider) == 2)
  }

  @Test("an async singleton built from a weak-scope value is cached like a sync one")
  func asyncFromWeakValueIsCached() async throws {
    let weakValue = Provider(scope: WeakScope(), name: "weakValue") { _ in 5 }
    let builds = Counter()
    let asyncSingleton = AsyncProvider(name: "fromWeak") { pod in
      builds.next()
      return pod.resolve(weakValue) * 2
    }
    let asyncWeak = AsyncProvider(scope: WeakScope(), name: "asyncWeak") { _ in 3 }
    let asyncBuilds = Counter()
    let fromAsyncWeak = AsyncProvider(name: "fromAsyncWeak") { pod in
      asyncBuilds.next()
      return try await pod.resolve(asyncWeak) + 1
    }
    let pod = Pod()
    for _ in 0..<5 {
      #expect(try await pod.resolve(asyncSingleton) == 10)
      #expect(try await pod.resolve(fromAsyncWeak) == 4)
    }
    #expect(builds.value == 1)
    #expect(asyncBuilds.value == 1)
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("a build that ends after its pod went away caches nothing and is disposed")
  func buildOutlivingItsPod() async throws {
    let started = Signal()
    let disposed = Signal()
    let gate = Shared<CheckedContinuation<Void, Never>?>(nil)
    let provider = AsyncProvider(name: "outliving", onDiscard: { (_: Instance) in disposed.fire() })
    {
      _ in
      await withCheckedContinuation { continuation in
        gate.withLock { $0 = continuation }
        started.fire()
      }
      return Instance("outliving", serial: 1)
    }
    weak var released: Pod?
    do {
      let pod = Pod()
      released = pod
      let caller = Task { try await pod.resolve(provider) }
      #expect(await started.next())
      caller.cancel()
      _ = await caller.result
    }
    #expect(released == nil)
    gate.withLock { $0 }!.resume()
    #expect(await disposed.next())
  }

  // Meant for the thread sanitizer: a task made inside an async build inherits the build's
  // frame, and reads `frame.pod` outside the lock while the build ends and clears it.
  @Test("a task spawned by an async builder resolves soundly while the build ends")
  func taskInheritingFrameResolvesWhileBuildEnds() async throws {
    let pod = Pod()
    let cached = instanceProvider("cached")
    let first = pod.resolve(cached)
    let stop = Shared(false)
    let looping = DispatchSemaphore(value: 0)
    let spawned = Shared<Task<Int, Never>?>(nil)
    let spawner = AsyncProvider(name: "spawner") { _ in
      let task = Task { () -> Int in
        var rounds = 0
        looping.signal()
        while !stop.withLock({ $0 }), rounds < 200_000 {
          if pod.resolve(cached) !== first { return -1 }
          rounds += 1
        }
        return rounds
      }
      spawned.withLock { $0 = task }
      await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
          waitWithWatchdog(looping)
          continuation.resume()
        }
      }
      return 1
    }
    // Another build keeps builds running, so the spawned task keeps looking at its frame.
    let holdProceed = DispatchSemaphore(value: 0)
    let holdEntered = DispatchSemaphore(value: 0)
    let holder = Provider(name: "holder") { _ in
      holdEntered.signal()
      waitWithWatchdog(holdProceed)
      return 0
    }
    let holding = startThread { _ = pod.resolve(holder) }
    #expect(waitWithWatchdog(holdEntered))
    #expect(try await pod.resolve(spawner) == 1)
    for _ in 0..<1_000 { #expect(pod.resolve(cached) === first) }
    stop.withLock { $0 = true }
    let rounds = await spawned.withLock { $0 }!.value
    holdProceed.signal()
    #expect(waitWithWatchdog(holding))
    #expect(rounds > 0)
    #expect(pod.invariantViolations == [])
  }
}

/// A pod released from a task that a plain `onDiscard` hook started: its main-actor hooks
/// must still run on the main actor.
let hookTaskPods = Shared<[Pod]>([])
let mainActorHookRan = Shared<Int>(0)

@Suite("Where disposal hooks run")
struct DisposalPlacementTests {
  @Test("a task started by a hook does not inherit the main actor's place")
  @MainActor
  func hookTasksDoNotInheritMainActor() async {
    await #expect(processExitsWith: .success) {
      alarm(30)
      await MainActor.run {
        makeInnerPodWithMainActorHook()  // held only by hookTaskPods from here on
        let outer = Pod()
        let trigger = Provider(
          scope: StepScope(),
          onDiscard: { _ in
            // Not on the main actor: releases the inner pod from a plain task.
            Task { hookTaskPods.withLock { $0.removeAll() } }
          }
        ) { _ in 1 }
        _ = outer.resolve(trigger)
        outer.clearCachedInstances(forScope: StepScope())  // from the main actor
      }
      while mainActorHookRan.withLock({ $0 }) == 0 { await Task.yield() }
      exit(0)
    }
  }
}

/// A pod with a cached main-actor instance whose hook counts its runs, held only by
/// `hookTaskPods`, so that whoever empties that list releases the pod.
@MainActor
private func makeInnerPodWithMainActorHook() {
  let inner = Pod()
  let onMain = MainActorProvider(onDiscard: { _ in
    MainActor.assertIsolated()
    mainActorHookRan.withLock { $0 += 1 }
  }) { _ in Instance("view model", serial: 1) }
  _ = inner.resolve(onMain)
  hookTaskPods.withLock { $0.append(inner) }
}
