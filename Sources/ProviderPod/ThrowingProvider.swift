/// A dependency whose synchronous builder can fail: opening a file, parsing configuration.
///
/// ```swift
/// let configurationProvider = ThrowingProvider { _ in
///   try Configuration(contentsOf: "config.json")
/// }
///
/// let configuration = try pod.resolve(configurationProvider)
/// ```
///
/// Resolving it is `try`, from the pod and from builders alike. A build that throws caches
/// nothing: the error goes to the caller whose resolve ran the builder, threads waiting for
/// that build each try again, and the next resolve builds anew. A build that succeeds is cached
/// in its scope like any provider's (in ``WeakScope``, weakly when the value is a class
/// instance), and what it resolved is recorded as what it was built from. An observed pod
/// reports a failure as ``PodEvent/buildFailed(provider:attempt:error:retryingIn:)``.
///
/// A failure is not a change. A builder that catches it and falls back has made its value,
/// which is cached in its scope like any other:
///
/// ```swift
/// let clientProvider = Provider { pod in
///   Client(configuration: (try? pod.resolve(configurationProvider)) ?? .default)
/// }
/// ```
///
/// The failed dependency cached nothing, so the fallback was built from nothing of it: it
/// stays until its scope is cleared, it is cleared, or something it did resolve successfully
/// changes, and its `onDiscard` runs once, when it is discarded. To retry the dependency,
/// clear the fallback's scope or let the fallback not be cached (``AlwaysCreateNewScope``).
/// An ``AsyncProvider`` whose builder resolves a failing one with `try` fails one attempt,
/// retried as its ``RetryPolicy`` says.
///
/// Why not a `Provider<Result<Value, any Error>>`: that caches the failure until someone
/// clears it, and every caller has to unwrap it. Why not an ``AsyncProvider``: a synchronous
/// caller cannot await it. An ``AsyncProvider`` is the choice when the work is asynchronous,
/// and it can retry.
public final class ThrowingProvider<Value>: Sendable {
  /// The underlying provider: its value is the build's outcome, and a failure is never cached.
  let provider: Provider<Result<Value, any Error>>
  /// What the pod's record of this provider holds weakly to learn that the provider is gone.
  private let liveness = Liveness()

  /// The provider's name: the one given, or the value type and where it was declared.
  public var name: String { provider.name }
  /// The scope the pod caches this provider's instances in, unless an override names another.
  public var scope: any ProviderScope { provider.scope }

  /// Creates a provider whose builder may throw.
  ///
  /// The value must be `Sendable`, as a ``Provider``'s must; for one that is not, see
  /// ``init(scope:name:fileID:line:column:_:)``.
  ///
  /// - Parameters:
  ///   - scope: Where the pod caches a successfully built instance.
  ///   - name: A name for messages and events; the value type and where the provider is
  ///     declared if nil.
  ///   - onDiscard: Called once for each instance the pod built, cached and discarded.
  ///   - fileID: Where the provider is declared; filled in by the compiler.
  ///   - line: Where the provider is declared; filled in by the compiler.
  ///   - column: Where the provider is declared; filled in by the compiler.
  ///   - build: Builds the value, or throws.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: (@Sendable (Value) -> Void)? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext) throws -> Value
  ) where Value: Sendable {
    self.init(
      anyScope: scope, name: name, onDiscard: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build: build)
  }

  /// Creates a provider whose builder may throw and whose instances are cleaned up
  /// asynchronously; see
  /// ``Provider/init(scope:name:onDiscard:fileID:line:column:_:)-(_,_,(Value)->Void,_,_,_,_)``.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: @escaping @Sendable (Value) async throws -> Void,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext) throws -> Value
  ) where Value: Sendable {
    self.init(
      anyScope: scope, name: name, onDiscard: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build: build)
  }

  /// A provider declared by its user, in any scope: the public initializers decide which
  /// scopes a value type may have.
  init(
    anyScope scope: any ProviderScope,
    name: String?,
    onDiscard: DisposalHook<Value>?,
    fileID: String,
    line: Int,
    column: Int,
    build: @escaping @Sendable (BuildContext) throws -> Value
  ) {
    // Named and placed like a provider of `Value`, not of the `Result` it holds.
    provider = Provider(
      info: ProviderInfo(
        givenName: name, typeName: "\(Value.self)", fileID: fileID, line: line, column: column,
        valueType: Value.self, scope: scope, valueIsOutcome: true),
      onDiscard: onDiscard.map(Self.successHook),
      build: Self.uncachedOnFailure(build))
    provider.info.owner = liveness
  }

  /// The hook for the outcome: only a success is ever cached, so only a success is disposed.
  private static func successHook(
    _ hook: DisposalHook<Value>
  ) -> DisposalHook<Result<Value, any Error>> {
    if let async = hook.async {
      return .async { result in
        if case .success(let value) = result { try await async(value) }
      }
    }
    if let mainActor = hook.mainActor {
      return .mainActor { result in
        if case .success(let value) = result { mainActor(value) }
      }
    }
    let sync = hook.sync
    return .sync { result, onMainActor in
      if case .success(let value) = result { sync?(value, onMainActor) }
    }
  }

  /// Runs `build`; a failure is kept out of the cache and reported.
  static func uncachedOnFailure(
    _ build: @escaping @Sendable (BuildContext) throws -> Value
  ) -> @Sendable (BuildContext) -> Result<Value, any Error> {
    { context in
      do {
        return .success(try build(context))
      } catch {
        context.operations.engine.keepUncached(context.frame, failure: error)
        return .failure(error)
      }
    }
  }

  /// Builds the provider with `build` in the pod, for ``Pod/init(overrides:observer:)``.
  public func override(
    scope: (any ProviderScope)? = nil,
    with build: @escaping @Sendable (BuildContext) throws -> Value
  ) -> ProviderOverride where Value: Sendable {
    provider.override(scope: scope, with: ThrowingProvider.uncachedOnFailure(build))
  }

  /// Resolves the provider to `value` in the pod, for ``Pod/init(overrides:observer:)``.
  ///
  /// The pod did not make the value, so it never disposes of it: `onDiscard` does not run on
  /// it.
  public func override(withValue value: Value) -> ProviderOverride where Value: Sendable {
    ProviderOverride(TypedOverride(provider: provider, value: .success(value)))
  }
}

extension ThrowingProvider: CustomStringConvertible {
  /// The provider's ``name``.
  public var description: String { name }
}

extension ThrowingProvider: Hashable {
  /// Whether both are the same dependency.
  public static func == (lhs: ThrowingProvider, rhs: ThrowingProvider) -> Bool {
    lhs.provider == rhs.provider
  }

  /// Hashes the provider's identity.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(provider)
  }
}
