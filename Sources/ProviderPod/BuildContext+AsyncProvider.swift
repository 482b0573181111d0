extension BuildContext {
  /// Returns the async provider's instance and records that this build depends on it, as
  /// ``Pod`` does.
  public func resolve<Value: Sendable>(_ provider: AsyncProvider<Value>) async throws -> Value {
    try await engine.resolve(provider, from: frame)
  }

  /// Overrides the async provider in the pod, as ``Pod`` does.
  public func overrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) async throws -> Value
  ) {
    engine.install(
      TypedAsyncOverride(provider: provider, scope: scope, build: build), isolation: isolation)
  }

  /// Resolves the async provider to `value` in the pod from now on, as ``Pod`` does.
  public func overrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>, withValue value: Value,
    isolation: isolated (any Actor)? = #isolation
  ) {
    engine.install(TypedAsyncOverride(provider: provider, value: value), isolation: isolation)
  }

  /// Removes the async provider's override, as ``Pod`` does.
  public func removeOverrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    engine.removeOverride(of: provider.info.key, isolation: isolation)
  }

  /// Overrides every member of the async family, as ``Pod`` does.
  public func overrideProvider<Argument, Value: Sendable>(
    _ family: AsyncProviderFamily<Argument, Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) {
    engine.install(
      TypedAsyncFamilyOverride(family: family, scope: scope, build: build), isolation: isolation)
  }

  /// Removes the async family's override, as ``Pod`` does.
  public func removeOverrideProvider<Argument, Value: Sendable>(
    _ family: AsyncProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    engine.removeOverride(of: family.info.key, isolation: isolation)
  }

  /// Discards the async provider's instance, as ``Pod`` does.
  public func clearCachedInstance<Value: Sendable>(
    of provider: AsyncProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    engine.clear(provider: provider.info, isolation: isolation)
  }

  /// Discards every member of the async family, as ``Pod`` does.
  public func clearCachedInstances<Argument, Value: Sendable>(
    of family: AsyncProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    engine.clear(family: family.info, isolation: isolation)
  }
}
