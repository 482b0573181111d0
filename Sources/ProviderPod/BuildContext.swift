/// What a builder receives: the pod it is building for, as seen from inside one build.
///
/// Everything a ``Pod`` does, a context does, so a builder reads like code outside:
///
/// ```swift
/// let apiProvider = Provider { pod in API(client: pod.resolve(httpClientProvider)) }
/// ```
///
/// The difference is what the pod learns: whatever a builder resolves through its context is
/// recorded as something its instance was built from (so discarding that discards the
/// instance too), and a provider that needs itself is reported as a cycle. The same holds for
/// a resolve through any other reference to the same pod (one kept in a global, say) made on
/// the thread or task running the build.
///
/// A context may be handed to another thread that resolves for the build while the builder
/// waits. Kept after its builder returned, it resolves like the pod itself.
public struct BuildContext: ProviderResolver, Sendable {
  /// The build; it keeps its engine (see `Frame.engine`), so the context holds one reference.
  let frame: Frame

  /// The pod this build belongs to, or nil if it has gone away.
  public var pod: Pod? { engine.root }

  /// Returns the provider's instance and records that this build depends on it, as ``Pod`` does.
  public func resolve<Value>(_ provider: Provider<Value>) -> Value {
    frame.withEngine { $0.resolve(provider, from: frame) }
  }

  /// Overrides the provider in the pod, as ``Pod`` does.
  public func overrideProvider<Value: Sendable>(
    _ provider: Provider<Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext) -> Value
  ) {
    operations.overrideProvider(provider, scope: scope, isolation: isolation, with: build)
  }

  /// Resolves the provider to `value` in the pod from now on, as ``Pod`` does.
  public func overrideProvider<Value: Sendable>(
    _ provider: Provider<Value>, withValue value: Value,
    isolation: isolated (any Actor)? = #isolation
  ) {
    operations.overrideProvider(provider, withValue: value, isolation: isolation)
  }

  /// Removes the provider's override from the pod, as ``Pod`` does.
  public func removeOverrideProvider<Value>(
    _ provider: Provider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: provider.info.key, isolation: isolation)
  }

  /// Overrides every member of the family, as ``Pod`` does.
  public func overrideProvider<Argument, Value: Sendable>(
    _ family: ProviderFamily<Argument, Value>,
    scope: (any ProviderScope)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    with build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    operations.overrideProvider(family, scope: scope, isolation: isolation, with: build)
  }

  /// Removes the family's override, as ``Pod`` does.
  public func removeOverrideProvider<Argument, Value>(
    _ family: ProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.removeOverride(of: family.info.key, isolation: isolation)
  }

  /// Clears a scope and its descendants, as ``Pod`` does.
  public func clearCachedInstances(
    forScope scope: any ProviderScope, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstances(forScope: scope, isolation: isolation)
  }

  /// Discards the provider's instance, as ``Pod`` does.
  public func clearCachedInstance<Value>(
    of provider: Provider<Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstance(of: provider.info, isolation: isolation)
  }

  /// Discards every member of the family, as ``Pod`` does.
  public func clearCachedInstances<Argument, Value>(
    of family: ProviderFamily<Argument, Value>, isolation: isolated (any Actor)? = #isolation
  ) {
    operations.clearCachedInstances(of: family.info, isolation: isolation)
  }

  /// The pod's cached instances, as ``Pod`` does.
  public func dependencyGraph() -> DependencyGraph {
    operations.dependencyGraph()
  }
}
