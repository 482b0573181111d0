/// Running the hooks of what a synchronous call discarded (a clear, an override, a pod going
/// away), which cannot wait for an asynchronous one.
extension PodEngine {
  /// Runs the hooks of `entries`, given dependents first. Synchronous hooks run now, in that
  /// order, until the first asynchronous one; from there on, every hook runs in one task
  /// started here, one after the other in the same order, so that nothing is cleaned up while
  /// something built from it may still be using it. Nobody awaits that task but a later
  /// shutdown of the tree, and what the hooks throw goes nowhere: there is no caller left to
  /// tell.
  func runDisposals(_ entries: [CacheEntry], onMainActor: Bool) {
    guard let firstAsync = entries.firstIndex(where: \.hasAsyncDisposal) else {
      for entry in entries { entry.dispose(onMainActor: onMainActor) }
      return
    }
    for entry in entries[..<firstAsync] { entry.dispose(onMainActor: onMainActor) }
    let pending = entries[firstAsync...].map(\.cleanup)
    let state = self.state
    let done = Completion()
    let id = state.withLock { $0.listCleanup(done) }
    Task {
      for cleanup in pending { try? await cleanup.run() }
      done.complete()
      state.withLock { $0.runningCleanups[id] = nil }
    }
  }
}
