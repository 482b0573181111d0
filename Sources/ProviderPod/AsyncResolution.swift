/// The state of one shared async build, whatever its value type. Guarded by the pod's lock.
class AnyAsyncBuild: @unchecked Sendable {
  /// Callers still interested in the result; when the last one is cancelled, so is the build.
  var waiterCount = 0
  var nextWaiterID = 0
  var cancelledWaiters: Set<Int> = []
  var task: Task<Void, Never>?
  /// The entry the build cached, if it did.
  var cachedEntry: CacheEntry?
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
  case runInline(Pod, override: OverrideRecord?)
  /// Start the shared build in this view, then wait for it like everyone else.
  case start(Pod, override: OverrideRecord?, waiterID: Int, waitID: Int?)
  case join(AnyAsyncBuild, waiterID: Int, waitID: Int?)
}

extension PodState {
  mutating func asyncStep(
    for provider: ProviderInfo, from caller: Pod?, core: PodCore, newBuild: AnyAsyncBuild,
    reporting: Bool, events: inout [PodEvent]
  ) -> AsyncResolveStep {
    let key = provider.key
    let caller = caller?.isActive == true ? caller : nil
    if let caller, let report = cycleReport(resolving: key, provider: provider, from: caller) {
      return .cycle(report)
    }
    // Join a shared build in progress (unless cached meanwhile, or invalidated: see `step`).
    if entries[key] == nil, let running = building[key], !running.isInvalidated,
      let build = running.asyncBuild
    {
      if let caller, let report = crossThreadCycleReport(waiter: caller, target: running) {
        return .cycle(report)
      }
      return .join(build, waiterID: build.takeWaiterID(), waitID: registerWait(caller, on: running))
    }
    switch step(for: provider, from: caller, core: core, reporting: reporting, events: &events) {
    case .cached(let entry): return .cached(entry)
    case .cachedObject(let object): return .cachedObject(object)
    case .cycle(let report): return .cycle(report)
    case .build(let view, let override):
      guard view.caches else { return .runInline(view, override: override) }
      view.asyncBuild = newBuild
      return .start(
        view, override: override, waiterID: newBuild.takeWaiterID(),
        waitID: registerWait(caller, on: view))
    case .wait:
      // Only a synchronous build is waited for in `step`, and an async provider has none.
      preconditionFailure("ProviderPod: \(provider.name) is being built synchronously")
    }
  }

  private mutating func registerWait(_ caller: Pod?, on target: Pod) -> Int? {
    guard let caller else { return nil }
    nextWaitID += 1
    waits[nextWaitID] = Wait(waiter: caller, target: target)
    return nextWaitID
  }

}

extension Pod {
  /// Returns the async provider's instance: the cached one, the result of the build in
  /// progress, or the result of a new build.
  ///
  /// - Throws: What the builder threw, or `CancellationError` if this task was cancelled
  ///   while waiting.
  public func resolve<Value: Sendable>(_ provider: AsyncProvider<Value>) async throws -> Value {
    let info = provider.info
    if let entry = cachedEntry(of: info) { return entry.value(as: Value.self) }
    let reporting = core.isObserved
    let caller = isView ? self : nil
    let newBuild = AsyncBuild<Value>()
    var events: [PodEvent] = []
    let step = core.state.withLock {
      $0.asyncStep(
        for: info, from: caller, core: core, newBuild: newBuild, reporting: reporting,
        events: &events)
    }
    if reporting { report(events) }
    switch step {
    case .cached(let entry):
      return entry.value(as: Value.self)
    case .cachedObject(let object):
      return object.value as! Value
    case .cycle(let message):
      fatalError(message)
    case .runInline(let view, let override):
      return try await runInline(provider, in: view, override: override)
    case .start(let view, let override, let waiterID, let waitID):
      startBuild(provider, in: view, override: override, build: newBuild)
      return try await wait(for: newBuild, waiterID: waiterID, waitID: waitID, info: info)
    case .join(let build, let waiterID, let waitID):
      return try await wait(
        for: unsafeDowncast(build, to: AsyncBuild<Value>.self), waiterID: waiterID,
        waitID: waitID, info: info)
    }
  }

  private static func runBuilder<Value: Sendable>(
    _ provider: AsyncProvider<Value>, in view: Pod, override: OverrideRecord?
  ) async throws -> Value {
    if let override {
      if override.isFamilyOverride, let familyBuild = provider.familyBuild {
        return try await familyBuild(view, override)
      }
      return try await unsafeDowncast(override, to: TypedAsyncOverride<Value>.self).build(view)
    }
    return try await provider.build(view)
  }

  /// An always-new async build, in the caller's task.
  private func runInline<Value: Sendable>(
    _ provider: AsyncProvider<Value>, in view: Pod, override: OverrideRecord?
  ) async throws -> Value {
    var view = view
    let result: Result<Value, any Error>
    do {
      result = .success(try await Self.runBuilder(provider, in: view, override: override))
    } catch {
      result = .failure(error)
    }
    let reporting = core.isObserved
    let caller = isView ? self : nil
    var events: [PodEvent] = []
    _ = core.state.withLock {
      $0.finish(&view, entry: nil, caller: caller, reporting: reporting, events: &events)
    }
    if reporting { report(events) }
    return try result.get()
  }

  /// Starts the shared build in a task of its own, so no caller's cancellation reaches it
  /// while others still wait.
  private func startBuild<Value: Sendable>(
    _ provider: AsyncProvider<Value>, in view: Pod, override: OverrideRecord?,
    build: AsyncBuild<Value>
  ) {
    let task = Task { [self] in
      var view = view
      var result: Result<Value, any Error>
      do {
        result = .success(try await Self.runBuilder(provider, in: view, override: override))
      } catch {
        result = .failure(error)
      }
      let entry = (try? result.get()).flatMap {
        view.entry(
          caching: $0, for: provider.info, override: override, onDiscard: provider.onDiscard)
      }
      let reporting = core.isObserved
      var events: [PodEvent] = []
      let continuations = core.state.withLock { state in
        // A failed build caches nothing; one that was invalidated while running is not
        // cached either, though its waiters still get its result.
        if case .failure = result { view.isInvalidated = true }
        let key = view.key
        _ = state.finish(&view, entry: entry, caller: nil, reporting: reporting, events: &events)
        if let entry, state.entries[key] === entry { build.cachedEntry = entry }
        build.result = result
        build.isFinished = true
        let waiting = build.continuations
        build.continuations = [:]
        return waiting
      }
      if reporting { report(events) }
      for continuation in continuations.values { continuation.resume(returning: result) }
    }
    let cancelNow = core.state.withLock { _ in
      build.task = task
      return build.waiterCount == 0
    }
    if cancelNow { task.cancel() }
  }

  /// Waits for a shared build; a cancelled caller stops waiting, and the last one to stop
  /// cancels the build.
  private func wait<Value: Sendable>(
    for build: AsyncBuild<Value>, waiterID: Int, waitID: Int?, info: ProviderInfo
  ) async throws -> Value {
    let state = core.state
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
        return (continuation, build.waiterCount == 0 ? build.task : nil)
      }
      continuation?.resume(returning: .failure(CancellationError()))
      task?.cancel()
    }
    let caller = isView ? self : nil
    let key = info.key
    state.withLock { state in
      if let waitID { state.waits[waitID] = nil }
      guard let caller, caller.isActive, case .success = result else { return }
      // Record the dependency only if the instance is still the cached one; otherwise the
      // caller holds something the pod no longer keeps, and must not be cached itself.
      if let entry = build.cachedEntry, state.entries[key] === entry {
        state.recordDependency(on: key, provider: info, from: caller)
      } else {
        caller.owner?.isInvalidated = true
      }
    }
    return try result.get()
  }
}
