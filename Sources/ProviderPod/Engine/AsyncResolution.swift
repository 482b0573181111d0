/// The state of one shared async build, whatever its value type. Guarded by the pod's lock.
class AnyAsyncBuild: @unchecked Sendable {
  /// Callers still interested in the result; when the last one is cancelled, so is the build.
  var waiterCount = 0
  var nextWaiterID = 0
  var cancelledWaiters: Set<Int> = []
  var task: Task<Void, Never>?
  /// The build's frame while it runs, so that the last caller to leave can abandon it.
  var frame: Frame?
  /// The entry the build cached, if it did.
  var cachedEntry: CacheEntry?
  /// For a weak-scope value that is not an object, which is never cached: the providers it
  /// was built from, which each caller's own build then depends on instead.
  var uncachedDependencies: [ProviderInfo]?
  var isFinished = false

  func takeWaiterID() -> Int {
    nextWaiterID += 1
    waiterCount += 1
    return nextWaiterID
  }
}

/// A shared async build of a `Value`.
final class AsyncBuild<Value: Sendable>: AnyAsyncBuild, @unchecked Sendable {
  var result: Result<Value, any Error>?
  var continuations: [Int: CheckedContinuation<Result<Value, any Error>, Never>] = [:]
}

/// What an async resolve does next, decided under the pod's lock.
enum AsyncResolveStep: Sendable {
  case cached(CacheEntry)
  case cachedObject(UncheckedSendable<AnyObject>)
  case cycle(String)
  /// An always-new build: run it in the caller's task.
  case runInline(Frame, override: OverrideRecord?)
  /// Start the shared build in this frame, then wait for it like everyone else.
  case start(Frame, override: OverrideRecord?, waiterID: Int, waitID: Int?)
  case join(AnyAsyncBuild, waiterID: Int, waitID: Int?)
  /// The caller's build is over: resolve as the pod would.
  case callerFinished
}

extension EngineState {
  mutating func asyncStep(
    for provider: ProviderInfo, from caller: Frame?, engineID: ObjectIdentifier,
    newBuild: AnyAsyncBuild, reporting: Bool, events: inout [PodEvent],
    released: inout [AnyObject]
  ) -> AsyncResolveStep {
    if let caller, !caller.isBuilding { return .callerFinished }
    // Join a shared build in progress, unless it went stale (see `step`).
    if let slot = slots[provider.key], slot.entry == nil, let running = slot.build {
      if let caller, running.isAncestor(ofOrSameAs: caller) {
        return .cycle(cycleReport(resolving: provider, from: caller, through: running))
      }
      if !isStale(running), let build = running.asyncBuild {
        if let caller, let report = crossThreadCycleReport(waiter: caller, target: running) {
          return .cycle(report)
        }
        return .join(
          build, waiterID: build.takeWaiterID(), waitID: registerWait(caller, on: running))
      }
    }
    switch step(
      for: provider, from: caller, engineID: engineID, reporting: reporting, events: &events,
      released: &released)
    {
    case .cached(let entry): return .cached(entry)
    case .cachedObject(let object): return .cachedObject(object)
    case .cycle(let report): return .cycle(report)
    case .build(let frame, let override):
      guard frame.caches else { return .runInline(frame, override: override) }
      frame.asyncBuild = newBuild
      newBuild.frame = frame
      return .start(
        frame, override: override, waiterID: newBuild.takeWaiterID(),
        waitID: registerWait(caller, on: frame))
    case .callerFinished: return .callerFinished
    case .wait:
      // Only a synchronous build is waited for in `step`, and an async provider has none.
      preconditionFailure("ProviderPod: \(provider.name) is being built synchronously")
    }
  }
}

extension PodEngine {
  func resolve<Value: Sendable>(
    _ provider: AsyncProvider<Value>, from caller: Frame?
  ) async throws -> Value {
    let info = provider.info
    if let entry = cachedEntry(of: info) { return entry.value(as: Value.self) }
    let reporting = isObserved
    let newBuild = AsyncBuild<Value>()
    var events: [PodEvent] = []
    var released: [AnyObject] = []
    let step = state.withLock {
      $0.asyncStep(
        for: info, from: caller, engineID: id, newBuild: newBuild, reporting: reporting,
        events: &events, released: &released)
    }
    withExtendedLifetime(released) {}
    if reporting { report(events) }
    let shared: (build: AsyncBuild<Value>, waiterID: Int, waitID: Int?)
    switch step {
    case .cached(let entry):
      return entry.value(as: Value.self)
    case .cachedObject(let object):
      return object.value as! Value
    case .cycle(let message):
      fatalError(message)
    case .callerFinished:
      // A context kept past its build: resolve as the pod would from here.
      let current = currentFrame()
      return try await resolve(provider, from: current === caller ? nil : current)
    case .runInline(let frame, let override):
      return try await runInline(provider, in: frame, override: override, caller: caller)
    case .start(let frame, let override, let waiterID, let waitID):
      startBuild(provider, in: frame, override: override, build: newBuild)
      shared = (newBuild, waiterID, waitID)
    case .join(let build, let waiterID, let waitID):
      shared = (unsafeDowncast(build, to: AsyncBuild<Value>.self), waiterID, waitID)
    }
    do {
      return try await wait(
        for: shared.build, waiterID: shared.waiterID, waitID: shared.waitID, info: info,
        caller: caller)
    } catch is RetryPolicy.StartOver {
      // The build was invalidated while it backed off before a retry: start over with a
      // build that sees the change.
      return try await resolve(provider, from: caller)
    }
  }

  /// Runs the builder with a context of its own, bound to the task so that resolves through
  /// the pod itself are nested in the build.
  private func runBuilder<Value: Sendable>(
    _ provider: AsyncProvider<Value>, in frame: Frame, override: OverrideRecord?
  ) async -> Result<Value, any Error> {
    let context = BuildContext(engine: self, frame: frame)
    let attempt = { () async throws -> Value in
      guard let override else { return try await provider.build(context) }
      if override.family != nil, let familyBuild = provider.familyBuild {
        return try await familyBuild(context, override)
      }
      return try await override.typed(TypedAsyncOverride<Value>.self).build(context)
    }
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
    var events: [PodEvent] = []
    var released: [AnyObject] = []
    _ = state.withLock {
      $0.finish(
        &frame, entry: nil, caller: caller, reporting: reporting, events: &events,
        released: &released)
    }
    withExtendedLifetime(released) {}
    if reporting { report(events) }
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
        makeEntry(caching: $0, in: frame, override: override, onDiscard: provider.onDiscard)
      }
      let reporting = isObserved
      var events: [PodEvent] = []
      var released: [AnyObject] = []
      let (continuations, unwanted) = state.withLock { state in
        // A failed build caches nothing; a stale one is not cached either, though its
        // waiters still get its result.
        if case .failure = result { frame.invalidate() }
        let key = frame.key
        let keepsDependencies = entry == nil && !state.isStale(frame) && state.isAlive
        if keepsDependencies { build.uncachedDependencies = frame.dependencies.values.map(\.info) }
        _ = state.finish(
          &frame, entry: entry, caller: nil, reporting: reporting, events: &events,
          released: &released)
        if let entry, state.slots[key]?.entry === entry { build.cachedEntry = entry }
        build.frame = nil
        build.result = result
        build.isFinished = true
        let waiting = build.continuations
        build.continuations = [:]
        // Built but neither cached nor wanted by anyone (every caller left, or the pod went
        // away): nobody else will ever dispose of it.
        let unwanted = build.cachedEntry == nil && build.waiterCount == 0 ? entry : nil
        return (waiting, unwanted)
      }
      withExtendedLifetime(released) {}
      if reporting { report(events) }
      unwanted?.dispose(onMainActor: false)
      for continuation in continuations.values { continuation.resume(returning: result) }
    }
    let cancelNow = state.withLock { _ in
      build.task = task
      return build.waiterCount == 0
    }
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
        let ready: Result<Value, any Error>? = state.withLock { _ in
          if let result = build.result { return result }
          if build.cancelledWaiters.contains(waiterID) { return .failure(CancellationError()) }
          build.continuations[waiterID] = continuation
          return nil
        }
        if let ready { continuation.resume(returning: ready) }
      }
    } onCancel: {
      let (continuation, task) = state.withLock {
        _ -> (CheckedContinuation<Result<Value, any Error>, Never>?, Task<Void, Never>?) in
        guard !build.isFinished, !build.cancelledWaiters.contains(waiterID) else {
          return (nil, nil)
        }
        build.cancelledWaiters.insert(waiterID)
        build.waiterCount -= 1
        let continuation = build.continuations.removeValue(forKey: waiterID)
        guard build.waiterCount == 0 else { return (continuation, nil) }
        build.frame?.invalidate()
        return (continuation, build.task)
      }
      continuation?.resume(returning: .failure(CancellationError()))
      task?.cancel()
    }
    state.withLock { state in
      if let waitID { state.waits[waitID] = nil }
      guard let caller, caller.isBuilding, let owner = caller.owner, case .success = result
      else { return }
      // Record the dependency only if the instance is still the cached one; otherwise the
      // caller holds something the pod no longer keeps, and must not be cached itself.
      if let entry = build.cachedEntry, let slot = state.slots[info.key], slot.entry === entry {
        state.recordDependency(on: slot, from: caller)
      } else if let dependencies = build.uncachedDependencies {
        for dependency in dependencies {
          state.recordDependency(on: state.slot(for: dependency), from: caller)
        }
        state.recordDependency(on: state.slot(for: info), from: caller)
      } else {
        owner.invalidate()
      }
    }
    return try result.get()
  }
}
