/// What a pod is made of: its state behind one lock, and its observer. The public ``Pod`` and
/// the ``BuildContext`` its builders receive both drive the same engine; a context keeps the
/// engine alive, never the pod.
final class PodEngine: @unchecked Sendable {
  // Sendable: every field is immutable except `root`, written once before the engine is
  // shared; the state is behind its lock.
  let state: Locked<EngineState>
  let observer: (any PodObserver)?
  /// `observer != nil`, kept apart: testing the existential copies it on every resolve.
  let isObserved: Bool
  /// The pod itself, for observers.
  weak var root: Pod?

  init(state: EngineState, observer: (any PodObserver)?) {
    self.state = Locked(state)
    self.observer = observer
    self.isObserved = observer != nil
  }

  var id: ObjectIdentifier { ObjectIdentifier(self) }

  /// The running build on this thread or task that a resolve through the pod is nested in.
  func currentFrame() -> Frame? {
    CurrentFrame.innermost(in: id)
  }

  // MARK: Resolving

  /// The hot path: the provider's cached instance, when nobody observes the pod and this
  /// thread is not inside one of its builds. Only non-generic types cross the lock: a
  /// `Value?` would have its metadata looked up on every call.
  @inline(__always)
  func cachedEntry(of info: ProviderInfo) -> CacheEntry? {
    guard !isObserved, !info.isAlwaysNew else { return nil }
    let key = info.key
    let (found, runningBuilds) = state.withLock { ($0.slots[key]?.entry, $0.runningBuilds) }
    guard let entry = found, entry.isStrong else { return nil }
    // Inside a build, the resolve must be recorded as one of its dependencies.
    if runningBuilds > 0, CurrentFrame.isInsideBuild(of: id) { return nil }
    return entry
  }

  /// Resolves from `caller`'s build; with `callerUnknown`, from whichever build of this pod
  /// runs on the current thread or task, if any (a resolve through the pod itself).
  func resolve<Value>(
    _ provider: Provider<Value>, from caller: Frame?, callerUnknown: Bool = false
  ) -> Value {
    var caller = caller
    var callerUnknown = callerUnknown
    let info = provider.info
    let reporting = isObserved
    while true {
      var events: [PodEvent] = []
      var released: [AnyObject] = []
      let step = state.withLock {
        $0.step(
          for: info, from: caller, callerUnknown: callerUnknown, engineID: id,
          reporting: reporting, events: &events, released: &released)
      }
      withExtendedLifetime(released) {}
      switch consume step {
      case .cached(let entry):
        if reporting { report(events) }
        return entry.value(as: Value.self)
      case .cachedObject(let object):
        if reporting { report(events) }
        // The entry was made from a `Value`, so the cast back cannot fail.
        return object.value as! Value
      case .cycle(let message):
        fatalError(message)
      case .wait(let group, let waitID):
        group.wait()
        if let waitID { _ = state.withLock { $0.waits.removeValue(forKey: waitID) } }
      case .build(let frame, let override):
        return run(provider, in: frame, override: override, caller: caller)
      case .callerFinished:
        let current = currentFrame()
        caller = current === caller ? nil : current
        callerUnknown = false
      }
    }
  }

  private func run<Value>(
    _ provider: Provider<Value>, in frame: consuming Frame, override: OverrideRecord?,
    caller: Frame?
  ) -> Value {
    var frame = frame
    let value = CurrentFrame.withThreadFrame(frame) {
      callBuilder(provider, in: frame, override: override)
    }
    let entry =
      frame.caches
      ? makeEntry(caching: value, in: frame, override: override, onDiscard: provider.onDiscard)
      : nil
    let reporting = isObserved
    var events: [PodEvent] = []
    var released: [AnyObject] = []
    let waiters = state.withLock {
      $0.finish(
        &frame, entry: entry, caller: caller, reporting: reporting, events: &events,
        released: &released)
    }
    waiters?.leave()
    withExtendedLifetime(released) {}
    if reporting { report(events) }
    return value
  }

  /// Runs the builder with a context of its own; the context is gone when this returns, so
  /// the frame can be reused unless the builder kept it.
  private func callBuilder<Value>(
    _ provider: Provider<Value>, in frame: Frame, override: OverrideRecord?
  ) -> Value {
    let context = BuildContext(engine: self, frame: frame)
    guard let override else { return provider.build(context) }
    // A member's own override, or its family's: the pod looked up the one that applies.
    if override.family != nil, let familyBuild = provider.familyBuild {
      return familyBuild(context, override)
    }
    return override.typed(TypedOverride<Value>.self).build(context)
  }

  /// The entry to cache for `value`: nil when its scope is ``WeakScope`` and the value is not
  /// an object. The pod owns what it built, but not a value handed to it with `withValue:`,
  /// so only the former gets the hook.
  func makeEntry<Value>(
    caching value: Value, in frame: Frame, override: OverrideRecord?,
    onDiscard: DisposalHook<Value>?
  ) -> CacheEntry? {
    // Written under the lock when the build began, by this thread.
    let scope = frame.scope!
    let provider = frame.info!
    if scope.kind != .weak {
      let ownsValue = override?.ownsValue ?? true
      return StrongEntry(
        value: value, provider: provider, scope: scope, onDiscard: ownsValue ? onDiscard : nil)
    }
    return classInstance(value).map { WeakEntry(object: $0, provider: provider, scope: scope) }
  }

  // MARK: Changing

  /// Applies a change to the state, then reports its events and runs its disposal hooks,
  /// outside the lock and before returning.
  func change(
    isolation: (any Actor)?, _ body: (inout EngineState, inout EngineState.Aftermath) -> Void
  ) {
    var after = EngineState.Aftermath()
    state.withLock {
      body(&$0, &after)
      $0.noticeChange(into: &after)
    }
    defer { withExtendedLifetime(after.released) {} }
    report(after.events)
    for wakeUp in after.wakeUps { wakeUp() }
    guard !after.disposals.isEmpty else { return }
    // Main-actor hooks run at once when the caller is on the main actor.
    let onMainActor = isolation.map { ($0 as AnyObject) === MainActor.shared } ?? false
    for entry in after.disposals { entry.dispose(onMainActor: onMainActor) }
  }

  func install(_ record: OverrideRecord, isolation: (any Actor)?) {
    change(isolation: isolation) { $0.install(record, into: &$1) }
  }

  func removeOverride(of key: ProviderKey, isolation: (any Actor)?) {
    change(isolation: isolation) { $0.removeOverride(key, into: &$1) }
  }

  func clear(scope: any ProviderScope, isolation: (any Actor)?) {
    // `children` is user code: walk the tree before taking the lock.
    let scopes = ScopeInfo.clearableSubtree(of: scope)
    guard !scopes.isEmpty else { return }
    change(isolation: isolation) { $0.clear(scopes: scopes, into: &$1) }
  }

  func clear(provider: ProviderInfo, isolation: (any Actor)?) {
    change(isolation: isolation) {
      $0.discard([provider.key], reason: .providerCleared, into: &$1)
    }
  }

  func clear(family: FamilyInfo, isolation: (any Actor)?) {
    change(isolation: isolation) {
      $0.discard($0.members(of: family), reason: .providerCleared, into: &$1)
    }
  }

  func dependencyGraph() -> DependencyGraph {
    // Weak instances are held while the graph is made, and let go after the lock.
    var held: [AnyObject] = []
    let graph = state.withLock { $0.dependencyGraph(holding: &held) }
    withExtendedLifetime(held) {}
    return graph
  }

  /// The pod is going away: dispose of what it built (no events: there is no pod left to
  /// report about), and let running builds finish without caching.
  func shutDown() {
    let (released, disposals) = state.withLock { $0.discardAll() }
    for wakeUp in state.withLock({ $0.endWatchers() }) { wakeUp() }
    for entry in disposals { entry.dispose(onMainActor: false) }
    withExtendedLifetime(released) {}
  }

  // MARK: Events

  func report(_ events: [PodEvent]) {
    guard let observer, !events.isEmpty, let pod = root else { return }
    for event in events {
      observer.pod(pod, didReport: event)
    }
  }
}
