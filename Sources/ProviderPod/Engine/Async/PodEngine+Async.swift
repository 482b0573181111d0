/// The state of one shared async build, whatever its value type. Guarded by the pod's lock.
class AnyAsyncBuild {
  /// Callers still interested in the result; when the last one is cancelled, so is the build.
  var waiterCount = 0
  var nextWaiterID = 0
  var cancelledWaiters: Set<Int> = []
  var task: Task<Void, Never>?
  /// The build's frame while it runs, so that the last caller to leave can abandon it.
  var frame: Frame?
  /// The pod the build was started through: only its callers may take the result as is.
  var requester: PodRecord?
  /// The entry the build cached, if it did, and the slot it is cached in (in a tree of pods,
  /// perhaps not the one the build was placed in).
  var cachedEntry: CacheEntry?
  var cachedSlot: Slot?
  /// For a weak-scope value that is not an object, which is never cached: the slots of what
  /// it was built from, which each caller's own build then depends on instead, and its own.
  var uncachedDependencies: [Slot]?
  var uncachedSlot: Slot?
  var isFinished = false

  func takeWaiterID() -> Int {
    nextWaiterID += 1
    waiterCount += 1
    return nextWaiterID
  }
}

/// A shared async build of a `Value`.
final class AsyncBuild<Value: Sendable>: AnyAsyncBuild {
  var result: Result<Value, any Error>?
  var continuations: [Int: CheckedContinuation<Result<Value, any Error>, Never>] = [:]
}

extension PodEngine {
  func resolve<Value: Sendable>(
    _ provider: AsyncProvider<Value>, from caller: Frame?, startOvers: Int = 0
  ) async throws -> Value {
    let info = provider.info
    // A known caller must record what it resolves: only a resolve with none may skip the
    // lookup (the shortcut itself finds a build on this thread or task, not one whose context
    // was handed to another task).
    if caller == nil, let held = cachedValue(of: info) { return held.value(as: Value.self) }
    let reporting = isObserved
    let newBuild = AsyncBuild<Value>()
    var events: [ReportedEvent] = []
    var released: [AnyObject] = []
    let pod = self.pod
    let step = state.withLock {
      $0.step(
        for: info, in: pod, from: caller, asyncBuild: newBuild, treeID: treeID,
        reporting: reporting, events: &events, released: &released)
    }
    withExtendedLifetime(released) {}
    if reporting { report(events) }
    let shared: (build: AsyncBuild<Value>, waiterID: Int, waitID: Int?)
    switch step {
    case .cached(let entry):
      return entry.value(as: Value.self)
    case .cachedObject(let object):
      return object.value as! Value
    case .stop(let message):
      fatalError(message)
    case .shutDown(let message):
      throw ResolveAfterShutdownError(provider: info.name, message: message)
    case .callerFinished:
      // A context kept past its build: resolve as the pod would from here.
      let current = currentFrame()
      return try await resolve(provider, from: current === caller ? nil : current)
    case .borrowed:
      preconditionFailure("ProviderPod: a shared section's read reached an async resolve")
    case .wait:
      // Only a synchronous build is waited for, and an async provider has none.
      preconditionFailure("ProviderPod: \(provider.name) is being built synchronously")
    case .build(let frame, let override):
      guard frame.caches else {
        return try await runInline(provider, in: frame, override: override, caller: caller)
      }
      let (waiterID, waitID) = state.withLock {
        $0.joinStartedAsyncBuild(newBuild, runningIn: frame, from: caller)
      }
      startBuild(provider, in: frame, override: override, build: newBuild)
      shared = (newBuild, waiterID, waitID)
    case .joinAsync(let build, let waiterID, let waitID):
      shared = (build as! AsyncBuild<Value>, waiterID, waitID)
      // A build started through another pod of the tree may turn out to be that pod's own
      // (built from something it shadows), or built without what this pod overrides: wait
      // for it, then look again, which shares its instance only if it is valid here.
      if build.requester !== pod {
        do {
          _ = try await wait(
            for: shared.build, waiterID: waiterID, waitID: waitID, info: info, caller: nil)
        } catch is CancellationError {
          throw CancellationError()
        } catch let startOver as RetryPolicy.StartOver {
          if startOvers >= RetryPolicy.StartOver.limit { throw startOver.error }
        } catch {}
        return try await resolve(provider, from: caller, startOvers: startOvers + 1)
      }
    }
    do {
      return try await wait(
        for: shared.build, waiterID: shared.waiterID, waitID: shared.waitID, info: info,
        caller: caller)
    } catch let startOver as RetryPolicy.StartOver {
      // The build was invalidated while it backed off before a retry, or stopped once
      // invalidated: start over with a build that sees the change, a bounded number of times.
      if startOvers >= RetryPolicy.StartOver.limit { throw startOver.error }
      return try await resolve(provider, from: caller, startOvers: startOvers + 1)
    }
  }

  /// Runs the builder with a context of its own, bound to the task so that resolves through
  /// the pod itself are nested in the build.
  private func runBuilder<Value: Sendable>(
    _ provider: AsyncProvider<Value>, in frame: Frame, override: OverrideRecord?
  ) async -> Result<Value, any Error> {
    frame.attach(to: self)
    let context = BuildContext(frame: frame)
    let attempt = { () async throws -> Value in
      guard let override else { return try await provider.build(context) }
      if override.family != nil, let familyBuild = provider.familyBuild {
        return try await familyBuild(context, override)
      }
      return try await override.typed(TypedAsyncOverride<Value>.self).build(context)
    }
    // While the task carries the frame, resolves through the root pod look for it there.
    threadBuildGate.asyncBuildStarted()
    defer { threadBuildGate.asyncBuildEnded() }
    do {
      let value = try await CurrentFrame.$task.withValue(frame) {
        try await provider.retry.run(attempt, in: context)
      }
      return .success(value)
    } catch {
      return .failure(error)
    }
  }

  /// An always-new build, in the caller's task.
  private func runInline<Value: Sendable>(
    _ provider: AsyncProvider<Value>, in frame: Frame, override: OverrideRecord?,
    caller: Frame?
  ) async throws -> Value {
    var frame = frame
    let result = await runBuilder(provider, in: frame, override: override)
    let reporting = isObserved
    var events: [ReportedEvent] = []
    var released: [AnyObject] = []
    _ = state.withLock {
      $0.finish(
        &frame, entry: nil, caller: caller, reporting: reporting, events: &events,
        released: &released)
    }
    withExtendedLifetime(released) {}
    if reporting { reportBuild(of: provider.info, events: events) }
    return try result.get()
  }

  /// Starts the shared build in a task of its own, so no caller's cancellation reaches it
  /// while others still wait.
  private func startBuild<Value: Sendable>(
    _ provider: AsyncProvider<Value>, in frame: Frame, override: OverrideRecord?,
    build: AsyncBuild<Value>
  ) {
    let task = Task { [self] in
      var frame = frame
      let result = await runBuilder(provider, in: frame, override: override)
      let entry = (try? result.get()).flatMap {
        makeEntry(
          caching: $0, of: provider.info, in: frame, override: override,
          onDiscard: provider.onDiscard)
      }
      let reporting = isObserved
      var events: [ReportedEvent] = []
      var released: [AnyObject] = []
      let pod = self.pod
      let (after, listed) = state.withLock {
        let after = $0.commitAsyncBuild(
          build, in: &frame, result: result, entry: entry, reporting: reporting,
          events: &events, released: &released)
        let unwanted = after.unwanted.map { [$0] } ?? []
        return (after, listTask(for: unwanted, onMainActor: false, disposedIn: [pod]))
      }
      withExtendedLifetime(released) {}
      if reporting { reportBuild(of: provider.info, events: events) }
      if let unwanted = after.unwanted {
        runDisposals([unwanted], onMainActor: false, listed: listed)
      }
      for continuation in after.continuations { continuation.resume(returning: result) }
    }
    let cancelNow = state.withLock { $0.attach(task, to: build) }
    if cancelNow { task.cancel() }
  }

  /// Waits for a shared build; a cancelled caller stops waiting, and the last one to stop
  /// cancels the build and abandons it, so that a later caller starts a new one.
  private func wait<Value: Sendable>(
    for build: AsyncBuild<Value>, waiterID: Int, waitID: Int?, info: ProviderInfo,
    caller: Frame?
  ) async throws -> Value {
    let state = self.state
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let ready = state.withLock {
          $0.awaitResult(of: build, waiterID: waiterID, continuation: continuation)
        }
        if let ready { continuation.resume(returning: ready) }
      }
    } onCancel: {
      let after = state.withLock { $0.cancelWaiter(waiterID, of: build) }
      after.continuation?.resume(returning: .failure(CancellationError()))
      after.abandonedTask?.cancel()
    }
    let gotValue = if case .success = result { true } else { false }
    var released: [AnyObject] = []
    state.withLock {
      $0.endWait(
        for: build, waitID: waitID, caller: caller, gotValue: gotValue, released: &released)
    }
    withExtendedLifetime(released) {}
    return try result.get()
  }
}
