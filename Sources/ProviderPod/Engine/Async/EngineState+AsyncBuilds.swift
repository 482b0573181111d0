/// A shared async build's life under the tree's lock: callers joining it, waiting, leaving, and
/// its result committed. Each method changes only what the lock guards and returns what is
/// left to do: continuations to resume, a task to cancel and an instance to dispose of are
/// the caller's, once the lock is released.
extension EngineState {
  /// What committing an async build leaves to do after the lock.
  struct AsyncBuildCommit<Value: Sendable> {
    /// The callers waiting for the result, to resume with it.
    let continuations: [CheckedContinuation<Result<Value, any Error>, Never>]
    /// The instance built, when it is neither cached nor wanted by anyone (every caller left,
    /// or the pod went away): nobody else will ever dispose of it.
    let unwanted: CacheEntry?
  }

  /// What a caller leaving an async build (its task cancelled) leaves to do after the lock.
  struct AsyncWaiterExit<Value: Sendable> {
    /// The caller's own parked continuation, to resume with `CancellationError`.
    let continuation: CheckedContinuation<Result<Value, any Error>, Never>?
    /// The build's task, to cancel: the caller was the last one waiting.
    let abandonedTask: Task<Void, Never>?
  }

  /// Counts the caller that started `build` as its first waiter, and records that it waits on
  /// `frame`, for the cross-thread cycle check. Returns the ids that `awaitResult`,
  /// `cancelWaiter` and `endWait` take; nothing is left to do after the lock.
  mutating func joinStartedAsyncBuild(
    _ build: AnyAsyncBuild, runningIn frame: Frame, from caller: Frame?
  ) -> (waiterID: Int, waitID: Int?) {
    (build.takeWaiterID(), registerWait(caller, on: frame, takesValue: true))
  }

  /// Hands the build the task that runs it. Returns whether the caller must cancel the task
  /// after the lock: every caller left before it was attached, so nobody else would.
  mutating func attach(_ task: Task<Void, Never>, to build: AnyAsyncBuild) -> Bool {
    build.task = task
    return build.waiterCount == 0
  }

  /// Ends an async build that ran in `frame`: records its result, caches `entry` unless the
  /// build failed or went stale (`finish` decides where), and takes the waiting continuations.
  /// Returns them, to be resumed with `result` after the lock, and the instance to dispose of
  /// if nobody will have it. Events and released objects are left in `events` and `released`
  /// for the caller, as `finish` leaves them.
  mutating func commitAsyncBuild<Value: Sendable>(
    _ build: AsyncBuild<Value>, in frame: inout Frame, result: Result<Value, any Error>,
    entry: CacheEntry?, reporting: Bool, events: inout [ReportedEvent],
    released: inout [AnyObject]
  ) -> AsyncBuildCommit<Value> {
    // A failed build caches nothing; a stale one is not cached either, though its waiters
    // still get its result.
    if case .failure = result { frame.invalidate() }
    let slot = frame.slot!
    let home = Self.home(placedIn: slot, builtFrom: frame.dependencies)
    // Looked at before `finish`, which empties the frame's dependencies.
    let keepsDependencies = entry == nil && !isStale(frame) && slot.pod.isAlive
    if keepsDependencies {
      build.uncachedDependencies = frame.dependencies
      build.uncachedSlot = slot
    }
    _ = finish(
      &frame, entry: entry, caller: nil, reporting: reporting, events: &events,
      released: &released)
    checkInvariantsInDebugBuilds()
    if let entry, let cached = home.slots[slot.key], entry.isSame(as: cached.entry) {
      build.cachedEntry = entry
      build.cachedSlot = cached
    }
    build.frame = nil
    build.result = result
    build.isFinished = true
    let waiting = Array(build.continuations.values)
    build.continuations = [:]
    return AsyncBuildCommit(
      continuations: waiting,
      unwanted: build.cachedEntry == nil && build.waiterCount == 0 ? entry : nil)
  }

  /// Parks a caller's continuation until the build commits. Returns, instead, the result to
  /// resume it with at once after the lock: the build's own if it already finished, or
  /// `CancellationError` if the caller's task was cancelled before it got here.
  mutating func awaitResult<Value: Sendable>(
    of build: AsyncBuild<Value>, waiterID: Int,
    continuation: CheckedContinuation<Result<Value, any Error>, Never>
  ) -> Result<Value, any Error>? {
    if let result = build.result { return result }
    if build.cancelledWaiters.contains(waiterID) { return .failure(CancellationError()) }
    build.continuations[waiterID] = continuation
    return nil
  }

  /// A caller's task was cancelled: the caller stops waiting, and when it was the last one,
  /// the build is abandoned (made stale, so that a later caller starts a new one). Returns the
  /// caller's parked continuation, if it got that far, and the build's task when abandoned,
  /// for the caller to resume and cancel after the lock; nothing once the build finished.
  mutating func cancelWaiter<Value: Sendable>(
    _ waiterID: Int, of build: AsyncBuild<Value>
  ) -> AsyncWaiterExit<Value> {
    guard !build.isFinished, !build.cancelledWaiters.contains(waiterID) else {
      return AsyncWaiterExit(continuation: nil, abandonedTask: nil)
    }
    build.cancelledWaiters.insert(waiterID)
    build.waiterCount -= 1
    let continuation = build.continuations.removeValue(forKey: waiterID)
    guard build.waiterCount == 0 else {
      return AsyncWaiterExit(continuation: continuation, abandonedTask: nil)
    }
    build.frame?.invalidate()
    return AsyncWaiterExit(continuation: continuation, abandonedTask: build.task)
  }

  /// A caller is done waiting for `build`: forgets its wait, and, when it got the value from
  /// inside a build of its own, records what that build now depends on. What it lets go of
  /// (slots swept to make room) is left in `released`, to be dropped after the lock.
  mutating func endWait(
    for build: AnyAsyncBuild, waitID: Int?, caller: Frame?, gotValue: Bool,
    released: inout [AnyObject]
  ) {
    if let waitID { waits[waitID] = nil }
    guard let caller, caller.isBuilding, let owner = caller.owner, gotValue else { return }
    // Record the dependency only if the instance is still the cached one; otherwise the
    // caller holds something the pod no longer keeps, and must not be cached itself.
    if let entry = build.cachedEntry, let slot = build.cachedSlot, entry.isSame(as: slot.entry),
      slot.pod.slots[slot.key] === slot
    {
      recordDependency(on: slot, from: caller)
    } else if let dependencies = build.uncachedDependencies, let own = build.uncachedSlot {
      for dependency in dependencies {
        recordDependency(
          on: dependency.info, in: dependency.pod, from: caller, released: &released)
      }
      recordDependency(on: own.info, in: own.pod, from: caller, released: &released)
    } else {
      invalidate(owner, released: &released)
    }
  }
}
