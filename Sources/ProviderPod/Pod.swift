import Dispatch

/// Resolves providers and caches their instances per scope.
///
/// ```swift
/// let pod = Pod()
/// let api = pod.resolve(apiProvider)
/// ```
///
/// A pod is safe to use from any thread or task. Each pod has its own instances and its own
/// overrides: tests and previews make a pod of their own and override what they need.
///
/// Builders receive the pod they are resolved in (strictly, a view of it that records what
/// the builder resolves), so `pod.resolve(...)` inside a builder works exactly as outside.
public final class Pod: @unchecked Sendable {
  // Sendable: `core` is immutable and thread-safe; every `var` below belongs to a view's
  // frame and is only touched under the pod's lock.
  let core: PodCore
  /// False for the pod itself, true for a view handed to builders.
  let isView: Bool

  /// The frame of the build a view belongs to (see PodView.swift), behind a pointer: the
  /// class's own stored `var`s would pay a dynamic exclusivity check on every access.
  let frame: UnsafeMutablePointer<Frame>

  /// Creates a pod.
  ///
  /// ```swift
  /// let testPod = Pod(overrides: [httpClientProvider.override { _ in FakeHTTPClient() }])
  /// ```
  ///
  /// - Parameters:
  ///   - overrides: Providers to build differently in this pod. When two overrides name the
  ///     same provider, the later one wins, so `baseOverrides + [specific]` works.
  ///   - observer: Told about everything the pod does; see ``PodObserver``.
  public init(overrides: [ProviderOverride] = [], observer: (any PodObserver)? = nil) {
    var initial = PodState()
    for override in overrides {
      initial.overrides[override.record.providerKey] = override.record
    }
    core = PodCore(state: initial, observer: observer)
    isView = false
    frame = .allocate(capacity: 1)
    frame.initialize(to: Frame())
    core.root = self
    report(overrides.map { .overridden(provider: $0.record.name) })
  }

  /// An idle view, for the pod's state to hand to builds.
  init(view core: PodCore) {
    self.core = core
    isView = true
    frame = .allocate(capacity: 1)
    frame.initialize(to: Frame())
  }

  deinit {
    defer {
      frame.deinitialize(count: 1)
      frame.deallocate()
    }
    guard !isView else { return }
    // Idle views hold the core; the core's state holds them. Let them go with the pod, and
    // dispose of what the pod built (no events: there is no pod left to report about).
    // Everything taken out under the lock is released after it (see Aftermath.released).
    let (spares, (released, disposals)) = core.state.withLock {
      $0.isRootAlive = false
      let spares = $0.spareViews
      $0.spareViews = []
      return (spares, $0.discardAll())
    }
    for entry in disposals { entry.dispose() }
    withExtendedLifetime((spares, released)) {}
  }

  /// Returns the provider's instance: the cached one if its scope has one, otherwise a new
  /// one from the provider's builder (or this pod's override of it).
  ///
  /// Never fails for a missing registration: the provider carries its own builder. A
  /// provider that needs itself, directly or through others, stops the program with the
  /// whole chain of providers (see <doc:Concurrency> for cycles across threads).
  public func resolve<Value>(_ provider: Provider<Value>) -> Value {
    if let entry = cachedEntry(of: provider.info) { return entry.value(as: Value.self) }
    return resolveUncached(provider)
  }

  /// The hot path: the provider's cached instance, with nothing else touched, when this is
  /// the pod itself and nobody observes it. Only non-generic types cross the lock: a `Value?`
  /// would have its metadata looked up on every call.
  @inline(__always)
  func cachedEntry(of info: ProviderInfo) -> CacheEntry? {
    guard !isView, !core.isObserved, !info.isAlwaysNew else { return nil }
    let key = info.key
    guard let entry = core.state.withLock({ $0.entries[key] }), entry.isStrong else { return nil }
    return entry
  }

  private func resolveUncached<Value>(_ provider: Provider<Value>) -> Value {
    let info = provider.info
    let reporting = core.isObserved
    let caller = isView ? self : nil
    while true {
      var events: [PodEvent] = []
      let step = core.state.withLock {
        $0.step(for: info, from: caller, core: core, reporting: reporting, events: &events)
      }
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
        if let waitID { _ = core.state.withLock { $0.waits.removeValue(forKey: waitID) } }
      case .build(let view, let override):
        return run(provider, in: view, override: override)
      }
    }
  }

  private func run<Value>(
    _ provider: Provider<Value>, in view: consuming Pod, override: OverrideRecord?
  ) -> Value {
    var view = view
    let value: Value
    if let override {
      // A member's own override, or its family's: the pod looked up the one that applies.
      if override.isFamilyOverride, let familyBuild = provider.familyBuild {
        value = familyBuild(view, override)
      } else {
        value = unsafeDowncast(override, to: TypedOverride<Value>.self).build(view)
      }
    } else {
      value = provider.build(view)
    }
    // Checked here too: an always-new build (the hot case) need not pass its hook along.
    let entry =
      view.caches
      ? view.entry(
        caching: value, for: provider.info, override: override, onDiscard: provider.onDiscard)
      : nil
    let reporting = core.isObserved
    let caller = isView ? self : nil
    var events: [PodEvent] = []
    let waiters = core.state.withLock {
      $0.finish(&view, entry: entry, caller: caller, reporting: reporting, events: &events)
    }
    waiters?.leave()
    if reporting { report(events) }
    return value
  }

  // MARK: Overrides

  /// Builds the provider with `build` in this pod from now on, for direct and nested resolves.
  ///
  /// The provider's cached instance and everything built from it are discarded, so the next
  /// resolve reflects the override at once. Replaces an earlier override of the provider.
  ///
  /// ```swift
  /// pod.overrideProvider(httpClientProvider) { _ in FakeHTTPClient() }
  /// ```
  ///
  /// - Parameters:
  ///   - provider: The provider to override.
  ///   - scope: The scope for the override's instances; the provider's own scope if nil.
  ///   - isolation: The caller's actor, filled in by the compiler: main-actor `onDiscard`
  ///     hooks run at once when it is the main actor.
  ///   - build: The replacement builder.
  public func overrideProvider<Value>(
    _ provider: Provider<Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation, with build: @escaping @Sendable (Pod) -> Value
  ) {
    install(TypedOverride(provider: provider, scope: scope, build: build), isolation: isolation)
  }

  /// Resolves the provider to `value` in this pod from now on.
  ///
  /// The value is cached in the provider's scope; the provider's earlier instance and
  /// everything built from it are discarded.
  public func overrideProvider<Value>(
    _ provider: Provider<Value>, withValue value: Value,
    isolation: isolated (any Actor)? = #isolation
  ) {
    install(TypedOverride(provider: provider, value: value), isolation: isolation)
  }

  /// Goes back to the provider's own builder, discarding the override's instance and
  /// everything built from it. Does nothing if the provider is not overridden in this pod.
  public func removeOverrideProvider<Value>(
    _ provider: Provider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    change(isolation: isolation) { $0.removeOverride(provider.info.key, family: nil, into: &$1) }
  }

  /// Builds every member of `family` with `build` in this pod from now on. An override of one
  /// member wins over it.
  ///
  /// ```swift
  /// pod.overrideProvider(userProvider) { _, id in User.fake(id) }
  /// ```
  ///
  /// Every cached member and everything built from one is discarded.
  ///
  /// - Parameters:
  ///   - family: The family to override.
  ///   - scope: The scope for the override's instances; the family's own scope if nil.
  ///   - isolation: The caller's actor, filled in by the compiler: main-actor `onDiscard`
  ///     hooks run at once when it is the main actor.
  ///   - build: The replacement builder.
  public func overrideProvider<Argument, Value>(
    _ family: ProviderFamily<Argument, Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (Pod, Argument) -> Value
  ) {
    let record = TypedFamilyOverride(family: family, scope: scope, build: build)
    change(isolation: isolation) { $0.install(record, family: family.info, into: &$1) }
  }

  /// Goes back to the family's own builder for every member without an override of its own,
  /// discarding every cached member and everything built from one. Does nothing if the family
  /// is not overridden in this pod.
  public func removeOverrideProvider<Argument, Value>(
    _ family: ProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    change(isolation: isolation) {
      $0.removeOverride(family.info.key, family: family.info, into: &$1)
    }
  }

  func install(_ record: OverrideRecord, isolation: (any Actor)?) {
    change(isolation: isolation) { $0.install(record, family: nil, into: &$1) }
  }

  /// Applies a change to the state, then reports its events and runs its disposal hooks,
  /// outside the lock and before returning.
  func change(
    isolation: (any Actor)?, _ body: (inout PodState, inout PodState.Aftermath) -> Void
  ) {
    var after = PodState.Aftermath()
    core.state.withLock { body(&$0, &after) }
    defer { withExtendedLifetime(after.released) {} }
    report(after.events)
    guard !after.disposals.isEmpty else { return }
    // Main-actor hooks run at once when the caller is on the main actor (see onMainActor).
    let onMainActor = isolation.map { ($0 as AnyObject) === MainActor.shared } ?? false
    Disposal.$isOnMainActor.withValue(onMainActor) {
      for entry in after.disposals { entry.dispose() }
    }
  }

  // MARK: Scopes

  /// Discards the instances cached in `scope` and in all its descendant scopes, together
  /// with everything built from them, wherever that is cached.
  ///
  /// ```swift
  /// pod.clearCachedInstances(forScope: SignUpFlowScope())
  /// ```
  ///
  /// Clearing ``SingletonScope`` or ``AlwaysCreateNewScope`` does nothing. A build of an
  /// instance in a cleared scope that is running at the same time is not cached: its caller
  /// gets the instance, the next resolve builds a new one.
  public func clearCachedInstances(
    forScope scope: any ProviderScope, isolation: isolated (any Actor)? = #isolation
  ) {
    // `children` is user code: walk the tree before taking the lock.
    let scopes = ScopeInfo.clearableSubtree(of: scope)
    guard !scopes.isEmpty else { return }
    change(isolation: isolation) { $0.clear(scopes: scopes, into: &$1) }
  }

  /// Discards the provider's cached instance and everything built from it, leaving its scope
  /// alone. For an ``AlwaysCreateNewScope`` provider, discards what was built through it.
  ///
  /// ```swift
  /// pod.clearCachedInstance(of: profileProvider)  // the next resolve builds a fresh one
  /// ```
  public func clearCachedInstance<Value>(
    of provider: Provider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    change(isolation: isolation) {
      $0.discard([provider.info.key], reason: .providerCleared, into: &$1)
    }
  }

  /// Discards the cached instance of every member of `family`, and everything built from
  /// one.
  public func clearCachedInstances<Argument, Value>(
    of family: ProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    change(isolation: isolation) {
      $0.discard($0.members(of: family.info), reason: .providerCleared, into: &$1)
    }
  }

  // MARK: Introspection

  /// The instances this pod has cached right now, and which was built from which.
  ///
  /// ```swift
  /// print(pod.dependencyGraph())            // one line per instance
  /// print(pod.dependencyGraph().mermaid())  // or .dot()
  /// ```
  public func dependencyGraph() -> DependencyGraph {
    core.state.withLock { $0.dependencyGraph() }
  }

  // MARK: Events

  func report(_ events: [PodEvent]) {
    guard let observer = core.observer, !events.isEmpty else { return }
    // Observers are told about the pod itself, not a builder's view of it.
    let pod = isView ? (core.root ?? self) : self
    for event in events {
      observer.pod(pod, didReport: event)
    }
  }
}
