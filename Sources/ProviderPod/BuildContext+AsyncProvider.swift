extension BuildContext {
  /// Returns the async provider's instance and records that this build depends on it, as
  /// ``Pod`` does.
  public func resolve<Value: Sendable>(_ provider: AsyncProvider<Value>) async throws -> Value {
    try await operations.resolve(provider)
  }

  /// Overrides the async provider in the pod, as ``Pod`` does.
  public func overrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) async throws -> Value
  ) {
    operations.overrideProvider(provider, scope: scope, isolation: isolation, with: build)
  }

  /// Resolves the async provider to `value` in the pod from now on, as ``Pod`` does.
  public func overrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>, withValue value: Value,
    isolation: isolated (any Actor)? = #isolation
  ) {
    operations.overrideProvider(provider, withValue: value, isolation: isolation)
  }

  /// Removes the async provider's override, as ``Pod`` does.
  public func removeOverrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: provider.info.key, isolation: isolation)
  }

  /// Overrides every member of the async family, as ``Pod`` does.
  public func overrideProvider<Argument, Value: Sendable>(
    _ family: AsyncProviderFamily<Argument, Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) {
    operations.overrideProvider(family, scope: scope, isolation: isolation, with: build)
  }

  /// Removes the async family's override, as ``Pod`` does.
  public func removeOverrideProvider<Argument, Value: Sendable>(
    _ family: AsyncProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: family.info.key, isolation: isolation)
  }

  /// Discards the async provider's instance, as ``Pod`` does.
  public func clearCachedInstance<Value: Sendable>(
    of provider: AsyncProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstance(of: provider.info, isolation: isolation)
  }

  /// Discards every member of the async family, as ``Pod`` does.
  public func clearCachedInstances<Argument, Value: Sendable>(
    of family: AsyncProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstances(of: family.info, isolation: isolation)
  }
}
