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
/// Builders receive a ``BuildContext`` rather than the pod; it does everything the pod does
/// and records what the builder resolves. A builder may also resolve through the pod itself
/// (one kept in a global, say): on the thread or task running the build, that resolve is
/// nested in the build exactly as if it went through the context.
public final class Pod: Sendable {
  let engine: PodEngine

  /// The parent of a child pod, kept alive by its children.
  public var parent: Pod? { engine.pod.parentPod }

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
  public convenience init(overrides: [ProviderOverride] = [], observer: (any PodObserver)? = nil) {
    self.init(overrides: overrides.map(\.record), observer: observer, settings: nil)
  }

  /// A root pod; a test's isolation makes one with settings of its own.
  init(overrides: [OverrideRecord], observer: (any PodObserver)?, settings: PodSettings?) {
    engine = PodEngine(
      overrides: overrides, observer: .boxing(observer), settings: settings)
    engine.pod.owner = self
    engine.reportOverridden(overrides)
  }

  /// Creates a child pod: a pod of its own for the given scopes, sharing everything else
  /// with `parent`.
  ///
  /// ```swift
  /// let window = Pod(parent: appPod, scopes: [SignUpFlowScope()])
  /// let flow = window.resolve(signUpFlowProvider)   // this window's own flow
  /// let api = window.resolve(apiProvider)           // the app's API, shared
  /// ```
  ///
  /// A provider is the child's own, built and cached in the child, when the child overrides
  /// it, when its scope is one of `scopes` or below one in the scope tree, or when its
  /// instance is built (directly or through others) from one of the child's own. Everything
  /// else is the parent's: resolving it through the child gives the parent's instance, and
  /// an instance first built through the child is cached in the parent, for its other
  /// children too. Nobody lists dependencies by hand: the pod knows what each instance was
  /// built from.
  ///
  /// The parent's overrides apply in the child, unless the child overrides the same
  /// provider. A discard in the parent (a clear, an override) reaches what the child built
  /// from the parent's instances; a clear in the child never touches the parent or its other
  /// children. The child keeps its parent alive, not the other way round: when the child
  /// goes away, its instances are disposed of and the parent keeps nothing of it. Children
  /// can have children.
  ///
  /// - Parameters:
  ///   - parent: The pod to share instances and overrides with.
  ///   - scopes: The scopes this pod keeps instances of its own for, with their descendants.
  ///   - overrides: Providers to build differently in this pod and its children.
  ///   - observer: Told about what this pod builds, reuses and discards; an instance built
  ///     through this pod but cached in the parent is the parent's to report.
  public init(
    parent: borrowing Pod, scopes: [any ProviderScope] = [], overrides: [ProviderOverride] = [],
    observer: (any PodObserver)? = nil
  ) {
    let owned = OwnedScopes(scopes)
    let records = overrides.map(\.record)
    // Made inside a test's isolation of `parent`: a child of the test's pod, so that what it
    // shares lives there and not in the pod other tests use. Apart from the usual path, which
    // copies the borrowed `parent` once, to keep it: every other copy is a write to the app
    // pod's reference count (slow to change, the pod being weakly referenced) that every
    // request on every core makes.
    if Pod.isolationsRunning {
      let isolated = parent.isolatedPodOrSelf()
      engine = Pod.childEngine(
        of: isolated, ownedScopes: owned, overrides: records, observer: .boxing(observer))
      engine.pod.parentPod = isolated
    } else {
      engine = Pod.childEngine(
        of: parent, ownedScopes: owned, overrides: records, observer: .boxing(observer))
      engine.pod.parentPod = copy parent
    }
    engine.pod.noteOwner(self)
    engine.reportOverridden(records)
  }

  /// A child's engine, made from its parent's in a function of its own: made inline from the
  /// borrowed parent of `init(parent:)`, the parent's engine (then an object of its own) was
  /// retained and released, a write to a reference count that every request on every core
  /// shares.
  @inline(never)
  private static func childEngine(
    of parent: Pod, ownedScopes: OwnedScopes, overrides: [OverrideRecord],
    observer: ObserverBox?
  ) -> PodEngine {
    PodEngine(
      parent: parent.engine, ownedScopes: ownedScopes, overrides: overrides, observer: observer)
  }

  deinit {
    engine.shutDown()
    // The parent goes after this pod has shut down, and a chain of pods thousands deep a few
    // deinits deep at a time, not one inside another all the way (see `ParentRelease`). The
    // parent is moved out, not copied: a request's pod writes the app pod's count once as it
    // goes, where the compiler's release of a stored `Pod?` retained and released it once
    // more.
    guard let parent = engine.pod.parentPod.take() else { return }
    ParentRelease.letGo(of: consume parent)
  }

  /// Returns the provider's instance: the cached one if its scope has one, otherwise a new
  /// one from the provider's builder (or this pod's override of it).
  ///
  /// Never fails for a missing registration: the provider carries its own builder. A
  /// provider that needs itself, directly or through others, stops the program with the
  /// whole chain of providers (see <doc:Concurrency> for cycles across threads).
  public func resolve<Value>(_ provider: Provider<Value>) -> Value {
    if let isolated = isolatedPod { return isolated.resolveInThisPod(provider) }
    if let held = engine.cachedValue(of: provider.info) { return held.value(as: Value.self) }
    return engine.resolve(provider, from: nil, callerUnknown: true)
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
  /// A value that is not `Sendable` is overridden without a scope, by
  /// ``overrideProvider(_:isolation:with:)-(Provider<Value>,_,_)``: its provider builds one for
  /// each resolve, and so does the override.
  ///
  /// - Parameters:
  ///   - provider: The provider to override.
  ///   - scope: The scope for the override's instances; the provider's own scope if nil.
  ///   - isolation: The caller's actor, filled in by the compiler: main-actor `onDiscard`
  ///     hooks run at once when it is the main actor.
  ///   - build: The replacement builder.
  public func overrideProvider<Value: Sendable>(
    _ provider: Provider<Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) -> Value
  ) {
    operations.overrideProvider(provider, scope: scope, isolation: isolation, with: build)
  }

  /// Resolves the provider to `value` in this pod from now on.
  ///
  /// The value is cached in the provider's scope; the provider's earlier instance and
  /// everything built from it are discarded. Every resolve gets this one value, so it must
  /// be `Sendable`.
  public func overrideProvider<Value: Sendable>(
    _ provider: Provider<Value>, withValue value: Value,
    isolation: isolated (any Actor)? = #isolation
  ) {
    operations.overrideProvider(provider, withValue: value, isolation: isolation)
  }

  /// Goes back to the provider's own builder, discarding the override's instance and
  /// everything built from it. Does nothing if the provider is not overridden in this pod.
  public func removeOverrideProvider<Value>(
    _ provider: Provider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: provider.info.key, isolation: isolation)
  }

  /// Builds every member of `family` with `build` in this pod from now on. An override of one
  /// member wins over it.
  ///
  /// ```swift
  /// pod.overrideProvider(userProvider) { _, id in User.fake(id) }
  /// ```
  ///
  /// Every cached member and everything built from one is discarded, here and in the child
  /// pods that do not override that member or the family themselves: a child's own override
  /// is the nearer one, and its instances stay.
  ///
  /// - Parameters:
  ///   - family: The family to override.
  ///   - scope: The scope for the override's instances; the family's own scope if nil.
  ///   - isolation: The caller's actor, filled in by the compiler: main-actor `onDiscard`
  ///     hooks run at once when it is the main actor.
  ///   - build: The replacement builder.
  public func overrideProvider<Argument, Value: Sendable>(
    _ family: ProviderFamily<Argument, Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    operations.overrideProvider(family, scope: scope, isolation: isolation, with: build)
  }

  /// Goes back to the family's own builder for every member without an override of its own,
  /// discarding every cached member and everything built from one. Does nothing if the family
  /// is not overridden in this pod.
  public func removeOverrideProvider<Argument, Value>(
    _ family: ProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: family.info.key, isolation: isolation)
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
    operations.clearCachedInstances(forScope: scope, isolation: isolation)
  }

  /// Discards the provider's cached instance and everything built from it, leaving its scope
  /// alone. For an ``AlwaysCreateNewScope`` provider, discards what was built through it.
  ///
  /// In a child pod, this is the child's own instance: one it shares with its parent is the
  /// parent's to clear. Likewise an always-new provider the child does not override is built
  /// with the parent's builder, and clearing it in the parent reaches what the child built
  /// through it.
  ///
  /// ```swift
  /// pod.clearCachedInstance(of: profileProvider)  // the next resolve builds a fresh one
  /// ```
  public func clearCachedInstance<Value>(
    of provider: Provider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstance(of: provider.info, isolation: isolation)
  }

  /// Discards the cached instance of every member of `family`, and everything built from
  /// one.
  public func clearCachedInstances<Argument, Value>(
    of family: ProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstances(of: family.info, isolation: isolation)
  }

  // MARK: Introspection

  /// The instances this pod has cached right now, and which was built from which.
  ///
  /// ```swift
  /// print(pod.dependencyGraph())            // one line per instance
  /// print(pod.dependencyGraph().mermaid())  // or .dot()
  /// ```
  public func dependencyGraph() -> DependencyGraph {
    operations.dependencyGraph()
  }
}
