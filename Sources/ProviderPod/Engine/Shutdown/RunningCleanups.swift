/// The async cleanups that discards and shutdowns of a tree started and nobody else awaits,
/// until each ends, each naming the pods whose instances it disposes of and their ancestors.
/// A shutdown awaits those that name its pod: the cleanups of its own instances and of pods
/// below it, even pods gone since (a child let go of or shut down has left its parent's
/// children by the time the parent shuts down), so that a request's pod let go of or shut
/// down just before the app's pod is cleans up before the database closes. Only those:
/// nothing but a pod and the pods below it can build from its instances, so another request's
/// cleanup never uses what this shutdown closes, and a request's shutdown does not wait for
/// another request's hooks.
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

  /// Lists a cleanup task about to start, which disposes of instances of the pods `pods`,
  /// until it unlists itself at its end.
  func list(_ done: Completion, disposingIn pods: [PodRecord]) -> ObjectIdentifier {
    // Each pod and its ancestors: a pod's parent is fixed when it is made.
    var named: [ObjectIdentifier] = []
    for pod in pods {
      var next: PodRecord? = pod
      while let current = next, !named.contains(ObjectIdentifier(current)) {
        named.append(ObjectIdentifier(current))
        next = current.parent
      }
    }
    return gate.withCleanupList { list in
      list.running[ObjectIdentifier(done)] = (done, named)
      return ObjectIdentifier(done)
    }
  }

  /// Takes an ended task out of the list.
  func unlist(_ id: ObjectIdentifier) {
    // Let go of after the lock.
    let ended = gate.withCleanupList { $0.running.removeValue(forKey: id) }
    withExtendedLifetime(ended) {}
  }

  /// The tasks listed now that a shutdown of `pod` awaits: those that name it. (The root is
  /// named by every one.) A pod gone and a new one at its address may make a shutdown wait
  /// for a task it need not, never miss one.
  func awaited(byShutdownOf pod: PodRecord) -> [Completion] {
    let id = ObjectIdentifier(pod)
    return gate.withCleanupList { list in
      guard !list.running.isEmpty else { return [] }
      return list.running.values.compactMap { $0.pods.contains(id) ? $0.done : nil }
    }
  }
}

/// A cleanup task's place among its tree's running cleanups, and its end.
struct ListedCleanup {
  let id: ObjectIdentifier
  let done: Completion

  /// A task about to start, listed in `cleanups` as disposing of instances of `pods`.
  init(listingIn cleanups: RunningCleanups, disposingIn pods: [PodRecord]) {
    done = Completion()
    id = cleanups.list(done, disposingIn: pods)
  }
}

extension RunningCleanups {
  /// Marks `task` ended and takes it out of the list.
  func end(_ task: ListedCleanup) {
    task.done.complete()
    unlist(task.id)
  }
}

/// The list itself, in the gate's header.
struct CleanupList {
  // Keyed by the completion itself: a counter beside it would be written by every listing,
  // on a line that every lock-free read of the tree loads.
  var running: [ObjectIdentifier: (done: Completion, pods: [ObjectIdentifier])] = [:]
}
