// The overrides that keep the provider's own scope, as ``Pod`` has them (see
// `Pod+AlwaysNew.swift`): the only ones for a value that is not `Sendable`.

extension BuildContext {
  /// Overrides the provider in the pod, in the provider's own scope, as ``Pod`` does.
  public func overrideProvider<Value>(
    _ provider: Provider<Value>,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) -> Value
  ) {
    operations.overrideProvider(provider, scope: nil, isolation: isolation, with: build)
  }

  /// Overrides every member of the family, in the family's own scope, as ``Pod`` does.
  public func overrideProvider<Argument, Value>(
    _ family: ProviderFamily<Argument, Value>,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    operations.overrideProvider(family, scope: nil, isolation: isolation, with: build)
  }

  /// Overrides the throwing provider, in the provider's own scope, as ``Pod`` does.
  public func overrideProvider<Value>(
    _ provider: ThrowingProvider<Value>,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) throws -> Value
  ) {
    operations.overrideProvider(provider, scope: nil, isolation: isolation, with: build)
  }
}
