/// A dependency built asynchronously: opening a database, loading configuration, signing in.
///
/// ```swift
/// let databaseProvider = AsyncProvider { pod in
///   try await Database.open(pod.resolve(configurationProvider).databaseURL)
/// }
///
/// let database = try await pod.resolve(databaseProvider)
/// ```
///
/// Concurrent resolves of a cached async provider share one build: the builder runs once and
/// every caller gets its result. A build that throws caches nothing; every caller waiting for
/// it gets the error, and the next resolve builds again. A caller that is cancelled stops
/// waiting without cancelling the build for the others; when every caller has gone, the build
/// is cancelled. Its builder can resolve plain and async providers through the pod it receives.
public final class AsyncProvider<Value: Sendable>: Sendable {
  /// What the pod's record of this provider holds weakly to learn that the provider is gone.
  /// A token rather than the provider itself: a weak reference gives its target a side table,
  /// which would slow every retain and release of the provider on the resolve path.
  private let liveness = Liveness()
  let info: ProviderInfo
  let build: @Sendable (BuildContext) async throws -> Value
  let onDiscard: DisposalHook<Value>?
  /// How a build that throws is retried; the provider's own, or its family's.
  let retry: RetryPolicy
  /// For a family member: builds it with the family's override.
  let familyBuild: (@Sendable (BuildContext, OverrideRecord) async throws -> Value)?

  /// The name used in events and cycle reports.
  public var name: String { info.name }
  /// The scope the pod caches this provider's instances in, unless an override names another.
  public var scope: any ProviderScope { info.scope.scope }

  /// Creates an async provider.
  ///
  /// - Parameters:
  ///   - scope: How long instances are cached. ``SingletonScope`` by default.
  ///   - name: A name for events and cycle reports.
  ///   - retry: How a build that throws is retried; ``RetryPolicy/never`` by default. Callers
  ///     waiting for the instance share the retries.
  ///   - onDiscard: Called once for each instance the pod built, cached and discarded; see
  ///     <doc:Lifetimes>.
  ///   - fileID: Where the provider is declared; filled in by the compiler.
  ///   - line: Where the provider is declared; filled in by the compiler.
  ///   - column: Where the provider is declared; filled in by the compiler.
  ///   - build: Builds the value; it may suspend and throw. A long build can ask its context
  ///     ``BuildContext/isStillWanted`` and stop early.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    retry: RetryPolicy = .never,
    onDiscard: (@Sendable (Value) -> Void)? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext) async throws -> Value
  ) {
    self.init(
      scope: scope, name: name, retry: retry, hook: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build)
  }

  /// Creates an async provider whose instances are cleaned up asynchronously: closing a
  /// connection pool, flushing a queue.
  ///
  /// ```swift
  /// let databaseProvider = AsyncProvider(onDiscard: { (db: Database) in await db.close() }) {
  ///   pod in try await Database.open(pod.resolve(configurationProvider).databaseURL)
  /// }
  /// ```
  ///
  /// ``Pod/shutdown(timeout:)`` awaits the hook, dependents first; see
  /// ``Provider/init(scope:name:onDiscard:fileID:line:column:_:)-(_,_,(Value)->Void,_,_,_,_)``.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    retry: RetryPolicy = .never,
    onDiscard: @escaping @Sendable (Value) async throws -> Void,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext) async throws -> Value
  ) {
    self.init(
      scope: scope, name: name, retry: retry, hook: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build)
  }

  private init(
    scope: any ProviderScope, name: String?, retry: RetryPolicy, hook: DisposalHook<Value>?,
    fileID: String, line: Int, column: Int,
    _ build: @escaping @Sendable (BuildContext) async throws -> Value
  ) {
    info = ProviderInfo(
      givenName: name, typeName: "\(Value.self)", fileID: fileID, line: line, column: column,
      valueType: Value.self, scope: scope)
    self.build = build
    self.onDiscard = hook
    self.retry = retry
    familyBuild = nil
    info.owner = liveness
  }

  init(
    member: ProviderInfo, onDiscard: DisposalHook<Value>?, retry: RetryPolicy,
    build: @escaping @Sendable (BuildContext) async throws -> Value,
    familyBuild: @escaping @Sendable (BuildContext, OverrideRecord) async throws -> Value
  ) {
    info = member
    self.build = build
    self.onDiscard = onDiscard
    self.retry = retry
    self.familyBuild = familyBuild
  }

  /// An override for ``Pod/init(overrides:observer:)`` that builds the value another way.
  public func override(
    scope: (any ProviderScope)? = nil,
    with build: @escaping @Sendable (BuildContext) async throws -> Value
  ) -> ProviderOverride {
    ProviderOverride(TypedAsyncOverride(provider: self, scope: scope, build: build))
  }

  /// An override for ``Pod/init(overrides:observer:)`` that always resolves to `value`.
  public func override(withValue value: Value) -> ProviderOverride {
    ProviderOverride(TypedAsyncOverride(provider: self, value: value))
  }
}

extension AsyncProvider: CustomStringConvertible {
  /// The provider's ``name``.
  public var description: String { name }
}

/// An async provider per argument; see ``ProviderFamily``.
///
/// ```swift
/// let avatarProvider = AsyncProviderFamily(scope: SessionScope()) { (pod, id: UserID) in
///   try await pod.resolve(imageLoaderProvider).avatar(for: id)
/// }
/// let avatar = try await pod.resolve(avatarProvider(42))
/// ```
public final class AsyncProviderFamily<Argument: Hashable & Sendable, Value: Sendable>: Sendable {
  /// What the pod's record of this provider holds weakly to learn that the provider is gone.
  /// A token rather than the provider itself: a weak reference gives its target a side table,
  /// which would slow every retain and release of the provider on the resolve path.
  private let liveness = Liveness()
  let info: FamilyInfo
  let build: @Sendable (BuildContext, Argument) async throws -> Value
  let onDiscard: DisposalHook<Value>?
  let retry: RetryPolicy
  private let members = FamilyMembers<Argument>()

  /// The family's name; members are named `name(argument)`.
  public var name: String { info.name }
  /// The scope every member is cached in, unless an override names another.
  public var scope: any ProviderScope { info.scope.scope }

  /// Creates a family of async providers; see ``ProviderFamily``.
  /// Each member retries its own build with `retry`; see ``RetryPolicy``.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    retry: RetryPolicy = .never,
    onDiscard: (@Sendable (Value) -> Void)? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) {
    self.init(
      scope: scope, name: name, retry: retry, hook: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build)
  }

  /// Creates a family of async providers whose instances are cleaned up asynchronously; see
  /// ``AsyncProvider/init(scope:name:retry:onDiscard:fileID:line:column:_:)-(_,_,_,(Value)->Void,_,_,_,_)``.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    retry: RetryPolicy = .never,
    onDiscard: @escaping @Sendable (Value) async throws -> Void,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) {
    self.init(
      scope: scope, name: name, retry: retry, hook: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build)
  }

  private init(
    scope: any ProviderScope, name: String?, retry: RetryPolicy, hook: DisposalHook<Value>?,
    fileID: String, line: Int, column: Int,
    _ build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) {
    info = FamilyInfo(
      name: name, typeName: "\(Value.self)",
      declaration: Declaration(fileID: fileID, line: line, column: column, valueType: Value.self),
      scope: ScopeInfo(scope))
    self.build = build
    self.onDiscard = hook
    info.owner = liveness
    self.retry = retry
  }

  /// The member for `argument`: the same dependency for equal arguments.
  public func callAsFunction(_ argument: Argument) -> AsyncProvider<Value> {
    let build = self.build
    return AsyncProvider(
      member: members.member(for: argument, in: info), onDiscard: onDiscard, retry: retry,
      build: { pod in try await build(pod, argument) },
      familyBuild: { pod, record in
        try await record.typed(TypedAsyncFamilyOverride<Argument, Value>.self).build(pod, argument)
      })
  }

  /// An override of every member for ``Pod/init(overrides:observer:)``.
  public func override(
    scope: (any ProviderScope)? = nil,
    with build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) -> ProviderOverride {
    ProviderOverride(TypedAsyncFamilyOverride(family: self, scope: scope, build: build))
  }
}

extension AsyncProviderFamily: CustomStringConvertible {
  /// The family's ``name``.
  public var description: String { name }
}

extension AsyncProvider: Hashable {
  /// Whether both are the same dependency.
  public static func == (lhs: AsyncProvider, rhs: AsyncProvider) -> Bool {
    lhs.info === rhs.info
  }

  /// Hashes the provider's identity.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(info))
  }
}
