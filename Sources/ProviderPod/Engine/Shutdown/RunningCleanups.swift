/// The async cleanups that discards and shutdowns of a tree started and nobody else awaits,
/// until each ends: a shutdown awaits those started before it, so that a request's pod let go
/// of or shut down just before the app's pod is cleans up before the database closes.
///
/// Not behind the tree's lock: a request pod shut down beside its siblings (in a shared
/// section of the tree's lock) lists its cleanups here, and every cleanup task unlists itself
/// when it ends, from any thread. The list lives in the header of the tree's `ThreadBuildGate`,
/// which every pod of the tree holds, so a tree allocates nothing for it until a cleanup is
/// listed, and is touched only under the tree's crossing spin lock, taken for a table insert
/// or removal: after a pod's own lock and after the tree's mutex, never before either. A
/// shutdown reads the list inside its section, so what a section listed is ordered with a
/// later shutdown as the sections are.
struct RunningCleanups {
  /// The tree whose list this is.
  let gate: ThreadBuildGate

  /// Lists a cleanup task about to start, until it unlists itself at its end.
  func list(_ done: Completion) -> Int {
    gate.withCleanupList { list in
      list.nextID += 1
      list.running[list.nextID] = done
      return list.nextID
    }
  }

  /// Takes an ended task out of the list.
  func unlist(_ id: Int) {
    // Let go of after the lock.
    let ended = gate.withCleanupList { $0.running.removeValue(forKey: id) }
    withExtendedLifetime(ended) {}
  }

  /// The tasks listed now, for a shutdown to await.
  var all: [Completion] {
    gate.withCleanupList { $0.running.isEmpty ? [] : Array($0.running.values) }
  }
}

/// The list itself, in the gate's header.
struct CleanupList {
  var running: [Int: Completion] = [:]
  var nextID = 0
}
