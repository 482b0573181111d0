extension Pod {
  /// Returns the throwing provider's instance: the cached one, or a new one from its builder.
  ///
  /// - Throws: What the builder threw. Nothing is cached then: the next resolve builds anew.
  public func resolve<Value>(_ provider: ThrowingProvider<Value>) throws -> Value {
    try operations.resolve(provider.provider).get()
  }

  /// Builds the throwing provider with `build` in this pod from now on, discarding its cached
  /// instance and everything built from it.
  public func overrideProvider<Value: Sendable>(
    _ provider: ThrowingProvider<Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) throws -> Value
  ) {
    operations.overrideProvider(provider, scope: scope, isolation: isolation, with: build)
  }

  /// Resolves the throwing provider to `value` in this pod from now on.
  public func overrideProvider<Value: Sendable>(
    _ provider: ThrowingProvider<Value>, withValue value: Value,
    isolation: isolated (any Actor)? = #isolation
  ) {
    operations.overrideProvider(provider, withValue: value, isolation: isolation)
  }

  /// Goes back to the throwing provider's own builder. Does nothing if it is not overridden.
  public func removeOverrideProvider<Value>(
    _ provider: ThrowingProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: provider.provider.info.key, isolation: isolation)
  }

  /// Discards the throwing provider's cached instance and everything built from it.
  public func clearCachedInstance<Value>(
    of provider: ThrowingProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstance(of: provider.provider.info, isolation: isolation)
  }
}
