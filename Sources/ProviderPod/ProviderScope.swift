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

  /// Whether this scope's instances may live only in a pod given the scope: a child pod made
  /// with `Pod(parent:scopes:)` that lists it (or an ancestor of it in the scope tree).
  ///
  /// Resolving a provider in such a scope through a pod when no pod from there up owns the
  /// scope stops the program with a message that names the provider, the scope and the fix,
  /// and caches nothing. Without it, the instance would be cached in the root pod and shared
  /// by everything that resolves it later: a request's data handed to the next request.
  /// Choose it for scopes that stand for one of several things alive at once (a server's
  /// request, a window, a document); leave it off for scopes that the root pod holds and
  /// clears (a sign-up flow in a single-window app). A root pod owns no scope. `false` unless
  /// a scope says otherwise:
  ///
  /// ```swift
  /// struct RequestScope: ProviderScope {
  ///   static let requiresOwningPod = true
  /// }
  ///
  /// let request = Pod(parent: appPod, scopes: [RequestScope()])
  /// let handler = request.resolve(handlerProvider)  // this request's own
  /// ```
  static var requiresOwningPod: Bool { get }
}

extension ProviderScope {
  /// No child scopes.
  public var children: [any ProviderScope] { [] }

  /// Instances may be cached in any pod.
  public static var requiresOwningPod: Bool { false }
}

/// A scope that never caches: every resolve runs the builder again.
///
/// ```swift
/// let requestIDProvider = Provider(scope: AlwaysCreateNewScope()) { _ in UUID() }
/// ```
///
/// Each caller gets an instance of its own, so this is the scope for a value that is not
/// `Sendable`: every other scope hands one instance to every caller, and needs a `Sendable`
/// one.
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
