extension Pod {
  /// Returns the async provider's instance: the cached one, the result of the build in
  /// progress, or the result of a new build.
  ///
  /// - Throws: What the builder threw, or `CancellationError` if this task was cancelled
  ///   while waiting.
  public func resolve<Value: Sendable>(_ provider: AsyncProvider<Value>) async throws -> Value {
    try await operations.resolve(provider)
  }

  /// Builds the async provider with `build` in this pod from now on, discarding its cached
  /// instance and everything built from it.
  public func overrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) async throws -> Value
  ) {
    operations.overrideProvider(provider, scope: scope, isolation: isolation, with: build)
  }

  /// Resolves the async provider to `value` in this pod from now on.
  public func overrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>, withValue value: Value,
    isolation: isolated (any Actor)? = #isolation
  ) {
    operations.overrideProvider(provider, withValue: value, isolation: isolation)
  }

  /// Goes back to the async provider's own builder. Does nothing if it is not overridden.
  public func removeOverrideProvider<Value: Sendable>(
    _ provider: AsyncProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: provider.info.key, isolation: isolation)
  }

  /// Builds every member of the async family with `build` in this pod from now on.
  public func overrideProvider<Argument, Value: Sendable>(
    _ family: AsyncProviderFamily<Argument, Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) {
    operations.overrideProvider(family, scope: scope, isolation: isolation, with: build)
  }

  /// Goes back to the async family's own builder.
  public func removeOverrideProvider<Argument, Value: Sendable>(
    _ family: AsyncProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: family.info.key, isolation: isolation)
  }

  /// Discards the async provider's cached instance and everything built from it. A build in
  /// progress is not cached when it finishes.
  public func clearCachedInstance<Value: Sendable>(
    of provider: AsyncProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstance(of: provider.info, isolation: isolation)
  }

  /// Discards the cached instance of every member of the async family.
  public func clearCachedInstances<Argument, Value: Sendable>(
    of family: AsyncProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstances(of: family.info, isolation: isolation)
  }
}
