/// One shutdown of a pod and its children: where each of its cleanups stands, what they
/// threw, and who waits for it. Shared by the pods it shut down, so that a second call, on the
/// pod or on one of its children, waits for the first.
final class ShutdownProgress: Sendable {
  private let state = Locked(State())

  private struct State {
    /// What the report needs of each step of the plan. Not the plan itself: its cleanups hold
    /// the instances, and the pods keep this for good (`PodRecord.shutdown`), so an instance
    /// that keeps its build's context (which keeps its pod's tables) would keep itself alive.
    var steps: [Step] = []
    var status: [Status] = []
    var failures: [PodShutdownError.Failure] = []
    /// Every cleanup has ended.
    var ended = false
    /// The first call stopped waiting for the cleanups: they ended, or its deadline passed.
    var stoppedWaiting = false
    /// The first call has returned.
    var returned = false
    var waiters: [Int: Waiter] = [:]
    var nextWaiter = 0

    mutating func takeWaiters(forReturn: Bool) -> [CheckedContinuation<Void, Never>] {
      var taken: [CheckedContinuation<Void, Never>] = []
      for (id, waiter) in waiters where waiter.forReturn == forReturn {
        taken.append(waiter.continuation)
        waiters[id] = nil
      }
      return taken
    }
  }

  private enum Status {
    case waiting, running, ended
  }

  private struct Step {
    let provider: String
    let hasCleanup: Bool
  }

  private struct Waiter {
    let continuation: CheckedContinuation<Void, Never>
    /// Waits for the first call to return, rather than for the cleanups to end.
    let forReturn: Bool
  }

  func prepare(_ plan: CleanupPlan) {
    state.withLock {
      $0.steps = plan.steps.map { Step(provider: $0.provider, hasCleanup: $0.cleanup != nil) }
      $0.status = [Status](repeating: .waiting, count: plan.steps.count)
    }
  }

  func started(_ step: Int) {
    state.withLock { $0.status[step] = .running }
  }

  func ended(_ step: Int, error: (any Error)?) {
    state.withLock {
      $0.status[step] = .ended
      if let error {
        $0.failures.append(.init(provider: $0.steps[step].provider, error: error))
      }
    }
  }

  /// Every cleanup has ended: the first call stops waiting, if it still does.
  func cleanupsEnded() {
    let waiters = state.withLock {
      $0.ended = true
      $0.stoppedWaiting = true
      return $0.takeWaiters(forReturn: false)
    }
    for waiter in waiters { waiter.resume() }
  }

  /// The first call's deadline passed: it stops waiting for the cleanups.
  func deadlinePassed() {
    let waiters = state.withLock {
      $0.stoppedWaiting = true
      return $0.takeWaiters(forReturn: false)
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Waits until every cleanup has ended or the deadline has passed; cancellation does not
  /// end the wait (the caller passes it on to the cleanups instead).
  func waitForCleanups() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock {
        if $0.stoppedWaiting { return true }
        $0.nextWaiter += 1
        $0.waiters[$0.nextWaiter] = Waiter(continuation: continuation, forReturn: false)
        return false
      }
      if now { continuation.resume() }
    }
  }

  /// The first call returns: a second one waiting for it may return too. Returns the report
  /// of what failed or did not finish, if anything did.
  func finish() -> PodShutdownError? {
    let (waiters, report) = state.withLock {
      state -> ([CheckedContinuation<Void, Never>], PodShutdownError?) in
      state.returned = true
      var unfinished: [String] = []
      for (step, status) in state.status.enumerated()
      where status != .ended && state.steps[step].hasCleanup {
        unfinished.append(state.steps[step].provider)
      }
      let report =
        state.failures.isEmpty && unfinished.isEmpty
        ? nil : PodShutdownError(failures: state.failures, unfinished: unfinished)
      return (state.takeWaiters(forReturn: true), report)
    }
    for waiter in waiters { waiter.resume() }
    return report
  }

  /// Waits until the first call has returned, or this task is cancelled.
  func waitForFirstCall() async {
    let id = state.withLock {
      $0.nextWaiter += 1
      return $0.nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let now = state.withLock {
          if $0.returned || Task.isCancelled { return true }
          $0.waiters[id] = Waiter(continuation: continuation, forReturn: true)
          return false
        }
        if now { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.continuation.resume()
    }
  }
}
