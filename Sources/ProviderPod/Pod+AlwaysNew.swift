// The overrides that keep the provider's own scope. They are the only ones for a value that is
// not `Sendable`, whose provider builds a new value on every resolve: the override does too,
// so each caller still gets a value of its own. `Sendable` values also have the overloads that
// take a scope or a value.

extension Pod {
  /// Builds the provider with `build` in this pod from now on, in the provider's own scope;
  /// see ``overrideProvider(_:scope:isolation:with:)-(Provider<Value>,_,_,_)``.
  ///
  /// ```swift
  /// pod.overrideProvider(reportDraftProvider) { _ in ReportDraft.sample() }
  /// ```
  ///
  /// - Parameters:
  ///   - provider: The provider to override.
  ///   - isolation: The caller's actor, filled in by the compiler.
  ///   - build: The replacement builder.
  public func overrideProvider<Value>(
    _ provider: Provider<Value>,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) -> Value
  ) {
    operations.overrideProvider(provider, scope: nil, isolation: isolation, with: build)
  }

  /// Builds every member of `family` with `build` in this pod from now on, in the family's
  /// own scope; see ``overrideProvider(_:scope:isolation:with:)-(ProviderFamily<Argument,Value>,_,_,_)``.
  ///
  /// - Parameters:
  ///   - family: The family to override.
  ///   - isolation: The caller's actor, filled in by the compiler.
  ///   - build: The replacement builder.
  public func overrideProvider<Argument, Value>(
    _ family: ProviderFamily<Argument, Value>,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    operations.overrideProvider(family, scope: nil, isolation: isolation, with: build)
  }

  /// Builds the throwing provider with `build` in this pod from now on, in the provider's own
  /// scope; see ``overrideProvider(_:scope:isolation:with:)-(ThrowingProvider<Value>,_,_,_)``.
  ///
  /// - Parameters:
  ///   - provider: The provider to override.
  ///   - isolation: The caller's actor, filled in by the compiler.
  ///   - build: The replacement builder.
  public func overrideProvider<Value>(
    _ provider: ThrowingProvider<Value>,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) throws -> Value
  ) {
    operations.overrideProvider(provider, scope: nil, isolation: isolation, with: build)
  }
}
