/// A lifetime for the instances a ``Pod`` caches.
///
/// A scope is identified by its type: `SignUpScope()` and another `SignUpScope()`
/// are the same scope. Declare your own scopes as empty structs and list the scopes
/// that live inside them as ``children``, so that clearing a parent clears them too:
///
/// ```swift
/// struct SignUpFlowScope: ProviderScope {
///   var children: [any ProviderScope] { [EmailStepScope(), ProfileStepScope()] }
/// }
/// struct EmailStepScope: ProviderScope {}
/// struct ProfileStepScope: ProviderScope {}
///
/// pod.clearCachedInstances(forScope: SignUpFlowScope())  // clears all three
/// ```
public protocol ProviderScope: Sendable {
  /// The scopes whose instances are discarded whenever this scope is cleared.
  ///
  /// The tree may contain cycles; clearing visits every scope once.
  /// ``SingletonScope`` and ``AlwaysCreateNewScope`` are never cleared, so listing
  /// them here has no effect.
  var children: [any ProviderScope] { get }
}

extension ProviderScope {
  /// No child scopes.
  public var children: [any ProviderScope] { [] }
}

/// A scope that never caches: every resolve runs the builder again.
///
/// ```swift
/// let requestIDProvider = Provider(scope: AlwaysCreateNewScope()) { _ in UUID() }
/// ```
public struct AlwaysCreateNewScope: ProviderScope {
  /// Creates the scope.
  public init() {}
}

/// The default scope: one instance per provider for the whole lifetime of the pod.
///
/// Clearing it does nothing; a singleton is discarded only when something it was built
/// from is discarded, or when its provider is overridden.
public struct SingletonScope: ProviderScope {
  /// Creates the scope.
  public init() {}
}

/// A scope that reuses a class instance for as long as something outside the pod holds it.
///
/// The pod keeps only a weak reference. Values that are not class instances are never
/// cached in this scope: every resolve builds a new one.
public struct WeakScope: ProviderScope {
  /// Creates the scope.
  public init() {}
}
