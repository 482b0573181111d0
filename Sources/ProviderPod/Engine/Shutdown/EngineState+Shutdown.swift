/// Shutting a pod down: the one discard that ends a pod's life on purpose, leaving its hooks
/// to a plan the caller awaits. Runs under the lock, like every change.
extension EngineState {
  /// What a call to shut a pod down found.
  enum ShutdownStart {
    /// This call shut the pod down: the plan of cleanups to run, once the cleanups that
    /// discards and shutdowns of the tree started before it have ended; whether it runs on
    /// the caller's thread at once; and, when it has hooks to run, its place among the tree's
    /// running cleanups and its end.
    case begun(
      CleanupPlan, after: [Completion], runNow: Bool,
      listed: (id: ObjectIdentifier, done: Completion)?)
    /// An earlier call did (on this pod or an ancestor): the progress to wait for.
    case alreadyBegun(ShutdownProgress)
  }

  /// Discards everything `pod` and its children hold, in one step, and marks them shut down:
  /// from here on they cache nothing, and a resolve through them stops (see `step`). The
  /// instances' hooks come back as a plan rather than in `after.disposals`; events, wake-ups
  /// and objects to release come in `after`.
  mutating func beginShutdown(
    of pod: PodRecord, progress: ShutdownProgress, into after: inout Aftermath
  ) -> ShutdownStart {
    if let earlier = pod.shutdown { return .alreadyBegun(earlier) }
    let pods = pod.subtree
    var slots: [Slot] = []
    var owned: [(slot: Slot, entry: CacheEntry)] = []
    for member in pods {
      for slot in member.slots where slot.entry != nil || slot.build != nil {
        slots.append(slot)
        // A link owns nothing: its ancestor's slot, in this tree or above it, does.
        if let entry = slot.entry, slot.linkTarget == nil { owned.append((slot, entry)) }
      }
    }
    // The ordinary discard takes the instances out (the published ones first), stops builds
    // in progress from caching and reports each discard; it must run while the pods are
    // alive, since it skips the slots of pods that are not.
    discard(slots, reason: .podShutDown, into: &after)
    let plan = CleanupPlan(owned)
    // Whatever the discard reached beyond what the pods owned is disposed of as a clear's
    // would be; the plan awaits the rest.
    if !after.disposals.isEmpty {
      var planned = Set<ObjectIdentifier>()
      for (_, entry) in owned where entry.hasDisposal {
        planned.insert(ObjectIdentifier(entry.holder))
      }
      after.disposals.removeAll { planned.contains(ObjectIdentifier($0.holder)) }
    }
    for member in pods {
      member.shutdown = progress
      member.isAlive = false
      member.removeFromParent()
      after.wakeUps.append(contentsOf: endWatchers(of: member))
    }
    if pod === root { noteRootOverrides() }
    return Self.start(plan, of: pod, listedIn: runningCleanups)
  }

  /// How a shutdown of `pod` with `plan` goes on: after the cleanups the tree runs now that
  /// dispose of its instances or those of pods below it (all of them, for the root's), and
  /// listed among them while its own run.
  static func start(
    _ plan: CleanupPlan, of pod: PodRecord, listedIn cleanups: RunningCleanups
  ) -> ShutdownStart {
    let earlier = cleanups.awaited(byShutdownOf: pod)
    // A plan of synchronous hooks with nothing to wait for runs on the caller's thread, as a
    // request's pod shut down at the end of each request mostly has: a task costs more than
    // the rest of the shutdown.
    let runNow = !plan.mustBeAwaited && earlier.isEmpty
    // Listed even when they run on the caller's thread: an ancestor's shutdown that begins
    // while they run must not close what they still use.
    guard !plan.steps.isEmpty || !runNow else {
      return .begun(plan, after: [], runNow: true, listed: nil)
    }
    let done = Completion()
    return .begun(
      plan, after: earlier, runNow: runNow,
      listed: (cleanups.list(done, disposingIn: [pod]), done))
  }

  /// What a resolve through a shut-down pod stops (or throws) with.
  static func shutDownReport(resolving provider: ProviderInfo) -> String {
    """
    ProviderPod: \(provider.name) was resolved through a pod that was shut down (or whose \
    parent was). A shut-down pod builds nothing: resolve through a new pod, and let the work \
    that uses a pod end before awaiting its shutdown().
    """
  }
}
