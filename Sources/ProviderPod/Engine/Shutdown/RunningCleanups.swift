/// The async cleanups that discards and shutdowns of a tree started and nobody else awaits,
/// until each ends: a shutdown awaits those started before it, so that a request's pod let go
/// of or shut down just before the app's pod is cleans up before the database closes.
///
/// Kept in the tree's `ThreadBuildGate`, which every pod of the tree holds. Behind a lock of
/// its own rather than the tree's (one that reclaims nothing, since it is taken inside the
/// tree's sections): a request pod shut down beside its
/// siblings (in a shared section of the tree's lock) lists its cleanups here, and every
/// cleanup task unlists itself when it ends, from any thread. A shutdown reads the list while
/// it shuts pods down, so what a section lists is ordered with it as the sections are.
final class RunningCleanups: Sendable {
  private let state = Locked(State())

  private struct State {
    var running: [Int: Completion] = [:]
    var nextID = 0
  }

  /// Lists a cleanup task about to start, until it unlists itself at its end.
  func list(_ done: Completion) -> Int {
    state.withLock { state in
      state.nextID += 1
      state.running[state.nextID] = done
      return state.nextID
    }
  }

  /// Takes an ended task out of the list.
  func unlist(_ id: Int) {
    _ = state.withLock { $0.running.removeValue(forKey: id) }
  }

  /// The tasks listed now, for a shutdown to await.
  var all: [Completion] {
    state.withLock { Array($0.running.values) }
  }
}
