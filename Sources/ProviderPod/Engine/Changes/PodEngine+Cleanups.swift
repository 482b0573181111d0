/// Running the hooks of what a synchronous call discarded (a clear, an override, a pod going
/// away), which cannot wait for an asynchronous one.
extension PodEngine {
  /// Runs the hooks of `entries`, given dependents first. Synchronous hooks run now, in that
  /// order, until the first asynchronous one (or main-actor one, off the main actor: only
  /// scheduled there, it would run after what follows it); from there on, every hook runs in
  /// one task
  /// started here, one after the other in the same order, so that nothing is cleaned up while
  /// something built from it may still be using it. Nobody awaits that task but a later
  /// shutdown of the tree, and what the hooks throw goes nowhere: there is no caller left to
  /// tell. `listed` is the task's place among the tree's running cleanups, taken by
  /// `listTask` in the section that discarded the instances; the task first awaits `earlier`,
  /// cleanups started before it that may still use the instances it disposes of.
  @inline(__always)
  func runDisposals(
    _ entries: [CacheEntry], onMainActor: Bool, listed: ListedCleanup?,
    after earlier: [Completion] = []
  ) {
    // A request's pod going away disposes of nothing, most of the time.
    guard !entries.isEmpty else { return }
    runAnyDisposals(entries, onMainActor: onMainActor, listed: listed, after: earlier)
  }

  private func runAnyDisposals(
    _ entries: [CacheEntry], onMainActor: Bool, listed: ListedCleanup?, after earlier: [Completion]
  ) {
    var firstAsync = 0
    while firstAsync < entries.count, runsNow(entries[firstAsync], onMainActor: onMainActor) {
      entries[firstAsync].dispose(onMainActor: onMainActor)
      firstAsync += 1
    }
    let cleanups = runningCleanups
    guard firstAsync < entries.count else {
      // `listTask` decides as this does: it listed no task.
      if let listed { cleanups.end(listed) }
      return
    }
    let pending = entries[firstAsync...].compactMap(\.cleanup)
    let task = listed ?? ListedCleanup(listingIn: cleanups, disposingIn: [pod])
    Task {
      for done in earlier { await done.wait() }
      await EnclosingCleanups.within([task.done]) {
        for cleanup in pending { try? await cleanup.run() }
      }
      cleanups.end(task)
    }
  }

  /// Lists, in the section that discarded `entries` (of the pods `pods`), the task that
  /// `runDisposals` will start for their hooks, if it will start one. Listed any later, a
  /// shutdown of the app's pod that began in between would not wait for it.
  /// (`pods` is made only then: a request's pod going away lists nothing, most of the time.)
  @inline(__always)
  func listTask(
    for entries: [CacheEntry], onMainActor: @autoclosure () -> Bool,
    disposedIn pods: @autoclosure () -> [PodRecord]
  ) -> ListedCleanup? {
    guard !entries.isEmpty else { return nil }
    let onMainActor = onMainActor()
    guard entries.contains(where: { !runsNow($0, onMainActor: onMainActor) }) else {
      return nil
    }
    return ListedCleanup(listingIn: runningCleanups, disposingIn: pods())
  }

  /// The tree's list of running cleanups: fixed when the tree is made, read without a lock.
  var runningCleanups: RunningCleanups { threadBuildGate.runningCleanups }

  /// Whether the hook runs to its end on this thread: a synchronous one, or a main-actor one
  /// when the discard is made on the main actor.
  private func runsNow(_ entry: CacheEntry, onMainActor: Bool) -> Bool {
    guard let cleanup = entry.cleanup else { return true }
    return onMainActor ? !entry.hasAsyncDisposal : !cleanup.mustBeAwaited
  }
}
