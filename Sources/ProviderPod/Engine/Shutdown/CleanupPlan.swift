/// The cleanups a shutdown runs, and what each waits for: an instance's cleanup starts once
/// the cleanups of everything built from it have ended. Made under the tree's lock from the
/// instances the shutdown removed, run after it.
struct CleanupPlan: Sendable {
  struct Step: Sendable {
    /// The provider's name, for the shutdown's report.
    let provider: String
    /// Nil for an instance without a hook: it is kept only so that an instance built from it
    /// (through it, from another with a hook) is cleaned up before what it was built from.
    let cleanup: Cleanup?
    /// The steps of the instances this one was built from: each waits for this one.
    let builtFrom: [Int]
  }

  var steps: [Step] = []
  /// For each step, how many steps are of instances built from it.
  var dependentCounts: [Int] = []
  /// Whether some hook must be awaited (an asynchronous or main-actor one); if not, the plan
  /// runs on the caller's thread, one hook after the other, without starting a task.
  private(set) var mustBeAwaited = false

  /// The plan for `removed`, instances of one tree with the slots they were cached in: nothing
  /// to run unless one of them has a hook.
  init(_ removed: [(slot: Slot, entry: CacheEntry)]) {
    guard removed.contains(where: \.entry.hasDisposal) else { return }
    var index: [SlotID: Int] = [:]
    index.reserveCapacity(removed.count)
    for (position, item) in removed.enumerated() { index[item.slot.id] = position }
    var counts = [Int](repeating: 0, count: removed.count)
    steps = removed.map { slot, entry in
      // "Built from" may name an ancestor pod's instance, which this shutdown leaves alone.
      let builtFrom = entry.dependencies.compactMap { index[$0.id] }
      for dependency in builtFrom { counts[dependency] += 1 }
      let cleanup = entry.cleanup
      if cleanup?.mustBeAwaited == true { mustBeAwaited = true }
      return Step(provider: slot.info.name, cleanup: cleanup, builtFrom: builtFrom)
    }
    dependentCounts = counts
  }

  /// The step of the one hook to run, when there is only one.
  private var onlyCleanup: Int? {
    var only: Int?
    for (index, step) in steps.enumerated() where step.cleanup != nil {
      if only != nil { return nil }
      only = index
    }
    return only
  }

  /// Runs every synchronous hook on this thread, each once everything built from its instance
  /// has been cleaned up: for a plan with nothing to await.
  func runNow(reporting progress: ShutdownProgress) {
    var waitingFor = dependentCounts
    var ready = waitingFor.indices.filter { waitingFor[$0] == 0 }
    while let step = ready.popLast() {
      if let cleanup = steps[step].cleanup {
        progress.started(step)
        cleanup.runNow()
        progress.ended(step, error: nil)
      }
      for dependency in steps[step].builtFrom {
        waitingFor[dependency] -= 1
        if waitingFor[dependency] == 0 { ready.append(dependency) }
      }
    }
    progress.cleanupsEnded()
  }

  init() {}

  /// Runs every cleanup, each once everything built from its instance has been cleaned up
  /// (or failed to be), as many at once as the order allows. Every cleanup is started, also
  /// when the task is cancelled: the resources must be released, and a cancelled cleanup can
  /// tell that it should hurry.
  func run(reporting progress: ShutdownProgress) async {
    if let only = onlyCleanup {
      // One hook to run, as a request's pod often has: no group of tasks for it.
      progress.started(only)
      do {
        try await steps[only].cleanup?.run()
        progress.ended(only, error: nil)
      } catch {
        progress.ended(only, error: error)
      }
      progress.cleanupsEnded()
      return
    }
    var waitingFor = dependentCounts
    var ready = waitingFor.indices.filter { waitingFor[$0] == 0 }
    await withTaskGroup(of: (step: Int, error: (any Error)?).self) { group in
      while true {
        while let step = ready.popLast() {
          if let cleanup = steps[step].cleanup {
            progress.started(step)
            group.addTask {
              do {
                try await cleanup.run()
                return (step, nil)
              } catch {
                return (step, error)
              }
            }
          } else {
            for dependency in steps[step].builtFrom {
              waitingFor[dependency] -= 1
              if waitingFor[dependency] == 0 { ready.append(dependency) }
            }
          }
        }
        guard let (step, error) = await group.next() else { break }
        progress.ended(step, error: error)
        for dependency in steps[step].builtFrom {
          waitingFor[dependency] -= 1
          if waitingFor[dependency] == 0 { ready.append(dependency) }
        }
      }
    }
    progress.cleanupsEnded()
  }
}
