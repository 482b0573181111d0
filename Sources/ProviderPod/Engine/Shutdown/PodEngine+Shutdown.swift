/// Awaited shutdown: the discard under the lock, then the cleanups, awaited in order.
extension PodEngine {
  func shutdown(timeout: Duration?) async throws(PodShutdownError) {
    let pod = self.pod
    let progress = ShutdownProgress()
    var after = EngineState.Aftermath()
    var released = EngineState.ReleasedPod()
    var disposalTask: ListedCleanup?
    let start =
      sharedShutdown(progress: progress, events: &after.events, released: &released)
      ?? state.withLock {
        $0.join(pod)
        let start = $0.beginShutdown(of: pod, progress: progress, into: &after)
        $0.checkInvariantsInDebugBuilds()
        disposalTask = listTask(
          for: after.disposals, onMainActor: false, disposedIn: after.disposedIn ?? [])
        return start
      }
    guard case .begun(let plan, let allEarlier, let runNow, let listed) = start else {
      // From inside one of its own cleanups it cannot wait: the first call awaits the hook.
      if case .alreadyBegun(let first) = start, !EnclosingCleanups.contain(first) {
        await first.waitForFirstCall()
      }
      return
    }
    // Nor can it wait for a discard's or a child's cleanups it is called from.
    let earlier = allEarlier.filter { !EnclosingCleanups.contain($0) }
    report(after.events)
    for wakeUp in after.wakeUps { wakeUp() }
    runDisposals(after.disposals, onMainActor: false, listed: disposalTask)
    withExtendedLifetime(after.released) {}
    after = EngineState.Aftermath()
    // A request pod shut down beside its siblings hands its tables over, with the instances
    // that have no hook: freed here, once its observer has heard of their discard, as the
    // exclusive side frees what it took out.
    released = EngineState.ReleasedPod()

    progress.prepare(plan)
    let running = runningCleanups
    if runNow {
      plan.runNow(reporting: progress)
      if let (id, done) = listed {
        done.complete()
        running.unlist(id)
      }
      if let report = progress.finish() { throw report }
      return
    }
    // Whatever is not run at once has been listed.
    guard let (id, done) = listed else { return }
    guard let timeout else {
      // Nothing to stop waiting for: the cleanups run in the caller's task, which passes its
      // cancellation on to them as the task below would.
      await EnclosingCleanups.within([progress, done]) {
        for cleanup in earlier { await cleanup.wait() }
        await plan.run(reporting: progress)
      }
      done.complete()
      running.unlist(id)
      if let report = progress.finish() { throw report }
      return
    }
    // Unstructured, so that the cleanups go on when the caller stops waiting at its deadline:
    // the resources must still be released, in order.
    let cleanups = Task {
      // A request's pod let go of just before the app shuts down is cleaned up before the
      // database it used.
      await EnclosingCleanups.within([progress, done]) {
        for cleanup in earlier { await cleanup.wait() }
        await plan.run(reporting: progress)
      }
      done.complete()
      running.unlist(id)
    }
    let deadline = Task {
      guard (try? await Task.sleep(for: timeout)) != nil else { return }
      // Those still running are told to hurry (before the caller returns, so that it may
      // count on it); those waiting for them still start.
      cleanups.cancel()
      progress.deadlinePassed()
    }
    await withTaskCancellationHandler {
      await progress.waitForCleanups()
    } onCancel: {
      cleanups.cancel()
    }
    deadline.cancel()
    if let report = progress.finish() { throw report }
  }

  /// `beginShutdown` of a request pod in a shared section of the tree's lock, beside its
  /// siblings' work, where it can decide alone (see `EngineState.sharedShutdown`).
  private func sharedShutdown(
    progress: ShutdownProgress, events: inout [ReportedEvent],
    released: inout EngineState.ReleasedPod
  ) -> EngineState.ShutdownStart? {
    guard runsSharedSections else { return nil }
    let pod = self.pod
    return state.withShared { access in
      withTreeRoot { root in
        EngineState.sharedShutdown(
          of: pod, root: root, progress: progress, tree: sharedTree(access),
          cleanups: runningCleanups, events: &events, released: &released)
      }
    }
  }
}
