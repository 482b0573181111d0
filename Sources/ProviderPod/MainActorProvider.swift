/// A dependency built and used on the main actor, such as a view model.
///
/// ```swift
/// let signUpViewModelProvider = MainActorProvider(scope: SignUpFlowScope()) { pod in
///   SignUpViewModel(service: pod.resolve(signUpServiceProvider))
/// }
///
/// @MainActor func showSignUp() {
///   let viewModel = pod.resolve(signUpViewModelProvider)
/// }
/// ```
///
/// Its builder runs on the main actor and can resolve plain providers. Resolving it is
/// `@MainActor`, so a plain provider's builder cannot resolve it: the compiler says so.
/// Caching, scopes, overrides, dependency tracking and `onDiscard` work as for ``Provider``;
/// the hook runs on the main actor, at once when the discard happens there and scheduled onto
/// it otherwise.
public final class MainActorProvider<Value>: Sendable {
  /// What the pod's record of this provider holds weakly to learn that the provider is gone.
  /// A token rather than the provider itself: a weak reference gives its target a side table,
  /// which would slow every retain and release of the provider on the resolve path.
  private let liveness = Liveness()
  let provider: Provider<Value>

  /// The name used in events and cycle reports.
  public var name: String { provider.name }
  /// The scope the pod caches this provider's instances in, unless an override names another.
  public var scope: any ProviderScope { provider.scope }

  /// Creates a main-actor provider.
  ///
  /// - Parameters:
  ///   - scope: How long instances are cached. ``SingletonScope`` by default.
  ///   - name: A name for events and cycle reports.
  ///   - onDiscard: Called on the main actor, once for each instance the pod built, cached
  ///     and discarded.
  ///   - fileID: Where the provider is declared; filled in by the compiler.
  ///   - line: Where the provider is declared; filled in by the compiler.
  ///   - column: Where the provider is declared; filled in by the compiler.
  ///   - build: Builds the value on the main actor.
  public init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: (@MainActor @Sendable (Value) -> Void)? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @MainActor @Sendable (BuildContext) -> Value
  ) {
    provider = Provider(
      info: ProviderInfo(
        givenName: name, typeName: "\(Value.self)", fileID: fileID, line: line, column: column,
        valueType: Value.self, scope: scope),
      onDiscard: onDiscard.map(onMainActor), build: Self.isolated(build))
    provider.info.owner = liveness
  }

  /// An override for ``Pod/init(overrides:observer:)`` that builds the value another way.
  public func override(
    scope: (any ProviderScope)? = nil,
    with build: @escaping @MainActor @Sendable (BuildContext) -> Value
  ) -> ProviderOverride {
    ProviderOverride(TypedOverride(provider: provider, scope: scope, build: Self.isolated(build)))
  }

  /// An override for ``Pod/init(overrides:observer:)`` that always resolves to `value`.
  ///
  /// The value is handed over (`sending`): it will be used on the main actor, so the code
  /// that made it, on whatever thread, may not keep using it.
  public func override(withValue value: sending Value) -> ProviderOverride {
    ProviderOverride(TypedOverride(provider: provider, value: value))
  }
}

extension MainActorProvider: CustomStringConvertible {
  /// The provider's ``name``.
  public var description: String { name }
}

extension Pod {
  /// Returns the main-actor provider's instance: cached per its scope, built on the main
  /// actor otherwise.
  @MainActor
  public func resolve<Value>(_ provider: MainActorProvider<Value>) -> Value {
    operations.resolve(provider)
  }

  /// Builds the main-actor provider with `build` in this pod from now on.
  @MainActor
  public func overrideProvider<Value>(
    _ provider: MainActorProvider<Value>,
    scope: (any ProviderScope)? = nil,
    with build: @escaping @MainActor @Sendable (BuildContext) -> Value
  ) {
    operations.overrideProvider(provider, scope: scope, with: build)
  }

  /// Resolves the main-actor provider to `value` in this pod from now on.
  @MainActor
  public func overrideProvider<Value>(
    _ provider: MainActorProvider<Value>, withValue value: Value
  ) {
    operations.overrideProvider(provider, withValue: value)
  }

  /// Goes back to the main-actor provider's own builder.
  public func removeOverrideProvider<Value>(
    _ provider: MainActorProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: provider.provider.info.key, isolation: isolation)
  }

  /// Discards the main-actor provider's cached instance and everything built from it.
  public func clearCachedInstance<Value>(
    of provider: MainActorProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstance(of: provider.provider.info, isolation: isolation)
  }
}

extension BuildContext {
  /// Returns the main-actor provider's instance and records that this build depends on it,
  /// as ``Pod`` does.
  @MainActor
  public func resolve<Value>(_ provider: MainActorProvider<Value>) -> Value {
    operations.resolve(provider)
  }

  /// Overrides the main-actor provider in the pod, as ``Pod`` does.
  ///
  /// Only main-actor code can call it, such as the builder of another ``MainActorProvider``.
  @MainActor
  public func overrideProvider<Value>(
    _ provider: MainActorProvider<Value>,
    scope: (any ProviderScope)? = nil,
    with build: @escaping @MainActor @Sendable (BuildContext) -> Value
  ) {
    operations.overrideProvider(provider, scope: scope, with: build)
  }

  /// Resolves the main-actor provider to `value` in the pod from now on, as ``Pod`` does.
  @MainActor
  public func overrideProvider<Value>(
    _ provider: MainActorProvider<Value>, withValue value: Value
  ) {
    operations.overrideProvider(provider, withValue: value)
  }

  /// Removes the main-actor provider's override, as ``Pod`` does.
  public func removeOverrideProvider<Value>(
    _ provider: MainActorProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: provider.provider.info.key, isolation: isolation)
  }

  /// Discards the main-actor provider's instance, as ``Pod`` does.
  public func clearCachedInstance<Value>(
    of provider: MainActorProvider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstance(of: provider.provider.info, isolation: isolation)
  }
}

extension MainActorProvider: Hashable {
  /// Whether both are the same dependency.
  public static func == (lhs: MainActorProvider, rhs: MainActorProvider) -> Bool {
    lhs.provider == rhs.provider
  }

  /// Hashes the provider's identity.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(provider)
  }
}
