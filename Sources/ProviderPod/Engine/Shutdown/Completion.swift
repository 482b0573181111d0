/// The end of a cleanup task that nobody else awaits (a discard's, or a shutdown's), for a
/// later shutdown of the same tree to await.
final class Completion: Sendable {
  private let state = Locked(State())

  private struct State {
    var isComplete = false
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  func complete() {
    let waiters = state.withLock { state in
      state.isComplete = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Returns once the task has ended. Not ended by cancellation: what waits for it is a
  /// shutdown's cleanups, which go on regardless.
  func wait() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state in
        if state.isComplete { return true }
        state.waiters.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }
}
