/// Everything a pod can be asked to do, written once for both askers: a ``Pod`` (no caller:
/// a resolve is nested in whichever build of the pod runs on this thread or task, if any) and
/// the ``BuildContext`` of one build (that build is the caller: what it resolves is recorded
/// as something its instance was built from). Each public method of either is a one-line
/// forward to a method here, so the two cannot drift apart.
///
/// One exception, on purpose: `Pod.resolve(_:)` and `BuildContext.resolve(_:)` for a plain
/// ``Provider`` keep their own copy of `resolve(_:)` below. They are the hot path, measured to
/// the instruction, and a forward through this struct is not free there.
struct PodOperations {
  /// The pod's engine.
  let engine: PodEngine
  /// The build asking, or nil for the pod itself: the build running on this thread or task,
  /// if any, is then found when a resolve needs it (see `PodEngine.currentFrame()`).
  let caller: Frame?

  // MARK: Resolving

  func resolve<Value>(_ provider: Provider<Value>) -> Value {
    if let caller { return engine.resolve(provider, from: caller) }
    if let held = engine.cachedValue(of: provider.info) { return held.value(as: Value.self) }
    return engine.resolve(provider, from: nil, callerUnknown: true)
  }

  func resolve<Value: Sendable>(_ provider: AsyncProvider<Value>) async throws -> Value {
    try await engine.resolve(provider, from: caller ?? engine.currentFrame())
  }

  @MainActor
  func resolve<Value>(_ provider: MainActorProvider<Value>) -> Value {
    resolve(provider.provider)
  }

  // MARK: Overrides

  func overrideProvider<Value>(
    _ provider: Provider<Value>, scope: (any ProviderScope)?, isolation: (any Actor)?,
    with build: @escaping @Sendable (BuildContext) -> Value
  ) {
    engine.install(
      TypedOverride(provider: provider, scope: scope, build: build), isolation: isolation)
  }

  func overrideProvider<Value>(
    _ provider: Provider<Value>, withValue value: Value, isolation: (any Actor)?
  ) {
    engine.install(TypedOverride(provider: provider, value: value), isolation: isolation)
  }

  func overrideProvider<Argument, Value>(
    _ family: ProviderFamily<Argument, Value>, scope: (any ProviderScope)?,
    isolation: (any Actor)?, with build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    engine.install(
      TypedFamilyOverride(family: family, scope: scope, build: build), isolation: isolation)
  }

  func overrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>, scope: (any ProviderScope)?, isolation: (any Actor)?,
    with build: @escaping @Sendable (BuildContext) async throws -> Value
  ) {
    engine.install(
      TypedAsyncOverride(provider: provider, scope: scope, build: build), isolation: isolation)
  }

  func overrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>, withValue value: Value, isolation: (any Actor)?
  ) {
    engine.install(TypedAsyncOverride(provider: provider, value: value), isolation: isolation)
  }

  func overrideProvider<Argument, Value: Sendable>(
    _ family: AsyncProviderFamily<Argument, Value>, scope: (any ProviderScope)?,
    isolation: (any Actor)?,
    with build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) {
    engine.install(
      TypedAsyncFamilyOverride(family: family, scope: scope, build: build), isolation: isolation)
  }

  /// A main-actor override is a plain one whose builder runs on the main actor; made on the
  /// main actor, so its discards run main-actor hooks at once.
  @MainActor
  func overrideProvider<Value>(
    _ provider: MainActorProvider<Value>, scope: (any ProviderScope)?,
    with build: @escaping @MainActor @Sendable (BuildContext) -> Value
  ) {
    overrideProvider(
      provider.provider, scope: scope, isolation: MainActor.shared,
      with: MainActorProvider.isolated(build))
  }

  @MainActor
  func overrideProvider<Value>(_ provider: MainActorProvider<Value>, withValue value: Value) {
    overrideProvider(provider.provider, withValue: value, isolation: MainActor.shared)
  }

  /// Removes the override of a provider or a family, whatever its kind.
  func removeOverride(of key: ProviderKey, isolation: (any Actor)?) {
    engine.removeOverride(of: key, isolation: isolation)
  }

  // MARK: Clearing

  func clearCachedInstances(forScope scope: any ProviderScope, isolation: (any Actor)?) {
    engine.clear(scope: scope, isolation: isolation)
  }

  /// Clears a provider of any kind.
  func clearCachedInstance(of provider: ProviderInfo, isolation: (any Actor)?) {
    engine.clear(provider: provider, isolation: isolation)
  }

  /// Clears a family of any kind.
  func clearCachedInstances(of family: FamilyInfo, isolation: (any Actor)?) {
    engine.clear(family: family, isolation: isolation)
  }

  // MARK: Introspection and watching

  func dependencyGraph() -> DependencyGraph {
    engine.dependencyGraph()
  }

  /// Watches the pod's instances of the provider. The sequence resolves later, from wherever
  /// it is iterated, so it never resolves from the caller's build, and records nothing in it.
  func instances<Value>(of provider: Provider<Value>) -> ProviderInstances<Value, Never> {
    joinForSequence()
    return ProviderInstances(engine: engine, info: provider.info) { engine in
      engine.resolve(provider, from: nil)
    }
  }

  func instances<Value: Sendable>(
    of provider: AsyncProvider<Value>
  ) -> ProviderInstances<Value, any Error> {
    joinForSequence()
    return ProviderInstances(engine: engine, info: provider.info) { engine in
      try await engine.resolve(provider, from: nil)
    }
  }

  /// A sequence keeps the engine, not the pod, and may watch after the pod has gone: a pod
  /// that had not joined its tree by then went without the lock, and a watch joining it later
  /// would list a pod that is gone. So the pod joins now, while its caller holds it. A build's
  /// pod has joined already, and a root is joined from the start: neither takes the lock.
  private func joinForSequence() {
    guard caller == nil, engine.pod.parent != nil else { return }
    let pod = engine.pod
    engine.state.withLock { $0.join(pod) }
  }
}

extension Pod {
  /// What this pod does, asked by no build in particular: inside a test's isolation of this
  /// pod, what the test's own pod does. The usual path does not copy `self`, whose reference
  /// count is slow to change (a pod is weakly referenced).
  var operations: PodOperations {
    PodOperations(
      engine: Pod.isolationsRunning ? isolatedPodOrSelf().engine : engine, caller: nil)
  }
}

extension BuildContext {
  /// The engine of the build's pod, which the frame keeps (see `Frame.engine`).
  var engine: PodEngine { frame.engine }

  /// What the pod does, asked by this context's build.
  var operations: PodOperations { PodOperations(engine: frame.engine, caller: frame) }
}
