/// Awaited shutdown: the discard under the lock, then the cleanups, awaited in order.
extension PodEngine {
  func shutdown(timeout: Duration?) async throws(PodShutdownError) {
    let pod = self.pod
    let progress = ShutdownProgress()
    var after = EngineState.Aftermath()
    let start = state.withLock {
      let start = $0.beginShutdown(of: pod, progress: progress, into: &after)
      $0.checkInvariantsInDebugBuilds()
      return start
    }
    let plan: CleanupPlan
    switch start {
    case .alreadyBegun(let earlier):
      await earlier.waitForFirstCall()
      return
    case .begun(let begun):
      plan = begun
    }
    report(after.events)
    for wakeUp in after.wakeUps { wakeUp() }
    Self.runDisposals(after.disposals, onMainActor: false)
    withExtendedLifetime(after.released) {}
    after = EngineState.Aftermath()

    progress.prepare(plan)
    // Unstructured, so that the cleanups go on when the caller stops waiting at its deadline:
    // the resources must still be released, in order.
    let cleanups = Task { await plan.run(reporting: progress) }
    let deadline = timeout.map { timeout in
      Task {
        guard (try? await Task.sleep(for: timeout)) != nil else { return }
        // Those still running are told to hurry (before the caller returns, so that it may
        // count on it); those waiting for them still start.
        cleanups.cancel()
        progress.deadlinePassed()
      }
    }
    await withTaskCancellationHandler {
      await progress.waitForCleanups()
    } onCancel: {
      cleanups.cancel()
    }
    deadline?.cancel()
    if let report = progress.finish() { throw report }
  }
}
