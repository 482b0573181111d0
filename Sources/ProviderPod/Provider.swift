/// A dependency: how to build a value, and how long a ``Pod`` keeps it.
///
/// Declare providers as globals next to the type they build. The provider itself is the key,
/// so there is nothing to register and nothing that can be missing at run time:
///
/// ```swift
/// let httpClientProvider = Provider { _ in HTTPClient() }
/// let apiProvider = Provider { pod in API(client: pod.resolve(httpClientProvider)) }
///
/// let pod = Pod()
/// let api = pod.resolve(apiProvider)  // builds HTTPClient, then API; caches both
/// ```
///
/// Each provider is its own dependency: two providers with the same type and the same
/// builder have separate caches.
///
/// Declare providers with `let` (a global or a `static let`), never as computed properties:
///
/// ```swift
/// static var api: Provider<API> { Provider { ... } }  // wrong: a new provider per access
/// static let api = Provider { ... }                     // right
/// ```
///
/// A getter makes a new provider, so a new dependency, on every access: nothing is reused,
/// overrides never apply, and every instance stays cached, out of reach, until the pod goes
/// away. The compiler cannot tell the two apart; a pod with an observer reports the mistake as
/// ``PodEvent/providerRecreated(provider:declaration:)``.
public final class Provider<Value>: Sendable {
  /// What the pod's record of this provider holds weakly to learn that the provider is gone.
  /// A token rather than the provider itself: a weak reference gives its target a side table,
  /// which would slow every retain and release of the provider on the resolve path.
  private let liveness = Liveness()
  let info: ProviderInfo
  let build: @Sendable (BuildContext) -> Value
  let onDiscard: DisposalHook<Value>?
  /// For a family member: builds it with the family's override.
  let familyBuild: (@Sendable (BuildContext, OverrideRecord) -> Value)?

  /// The name used in events and cycle reports: the one given to the initializer, or the
  /// value type and where the provider was declared, such as `Session (SignUp.swift:12)`.
  public var name: String { info.name }
  /// The scope the pod caches this provider's instances in, unless an override names another.
  public var scope: any ProviderScope { info.scope.scope }

  /// Creates a provider.
  ///
  /// ```swift
  /// let sessionProvider = Provider(scope: SignUpFlowScope(), onDiscard: { $0.close() }) { _ in
  ///   SignUpSession()
  /// }
  /// ```
  ///
  /// The value must be `Sendable`: a pod is shared by every thread, and a scope that caches
  /// hands one instance to every caller. For a value that is not, see
  /// ``init(scope:name:fileID:line:column:_:)`` and <doc:Concurrency>.
  ///
  /// - Parameters:
  ///   - scope: How long instances are cached. ``SingletonScope`` by default.
  ///   - name: A name for events and cycle reports. By default the value type and the
  ///     declaration's file and line.
  ///   - onDiscard: Called exactly once for each instance the pod built, cached and then
  ///     discarded: by a scope clear, a discarded dependency, an override change, an explicit
  ///     clear, or the pod going away. Instances built from others are disposed first. It runs
  ///     outside the pod's lock, before the call that discarded returns, so it may use the pod.
  ///     Not called for `withValue:` overrides, ``WeakScope`` or ``AlwaysCreateNewScope``
  ///     instances: the pod does not own those.
  ///   - fileID: Where the provider is declared; filled in by the compiler.
  ///   - line: Where the provider is declared; filled in by the compiler.
  ///   - column: Where the provider is declared; filled in by the compiler.
  ///   - build: Builds the value. It receives a ``BuildContext``, which resolves like the pod
  ///     and records what the value was built from:
  ///     `{ pod in API(client: pod.resolve(httpClientProvider)) }`.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: (@Sendable (Value) -> Void)? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext) -> Value
  ) where Value: Sendable {
    self.init(
      anyScope: scope, name: name, onDiscard: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build: build)
  }

  /// Creates a provider whose instances are cleaned up asynchronously: closing a database
  /// pool, flushing a queue.
  ///
  /// ```swift
  /// let databaseProvider = Provider(onDiscard: { (db: Database) in await db.close() }) { _ in
  ///   Database()
  /// }
  /// ```
  ///
  /// ``Pod/shutdown(timeout:)`` awaits the hook, dependents first: an instance's cleanup
  /// starts once everything built from it has been cleaned up. A clear, an override or a pod
  /// released without a shutdown cannot wait: it starts the cleanups in a task of their own,
  /// in the same order, and returns (see <doc:Lifetimes>).
  ///
  /// - Parameters:
  ///   - scope: How long instances are cached. ``SingletonScope`` by default.
  ///   - name: A name for events and cycle reports.
  ///   - onDiscard: Called once for each instance the pod built, cached and then discarded.
  ///     What it throws is reported by the shutdown that awaited it, if one did.
  ///   - fileID: Where the provider is declared; filled in by the compiler.
  ///   - line: Where the provider is declared; filled in by the compiler.
  ///   - column: Where the provider is declared; filled in by the compiler.
  ///   - build: Builds the value.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: @escaping @Sendable (Value) async throws -> Void,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext) -> Value
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
    build: @escaping @Sendable (BuildContext) -> Value
  ) {
    self.info = ProviderInfo(
      givenName: name, typeName: "\(Value.self)", fileID: fileID, line: line, column: column,
      valueType: Value.self, scope: scope)
    self.build = build
    self.onDiscard = onDiscard
    self.familyBuild = nil
    info.owner = liveness
  }

  /// A provider whose hook needs to know where the discard happened (main-actor providers).
  init(
    info: ProviderInfo, onDiscard: DisposalHook<Value>?,
    build: @escaping @Sendable (BuildContext) -> Value
  ) {
    self.info = info
    self.build = build
    self.onDiscard = onDiscard
    self.familyBuild = nil
  }

  /// A family's member.
  init(
    member: ProviderInfo, onDiscard: DisposalHook<Value>?,
    build: @escaping @Sendable (BuildContext) -> Value,
    familyBuild: @escaping @Sendable (BuildContext, OverrideRecord) -> Value
  ) {
    self.info = member
    self.build = build
    self.onDiscard = onDiscard
    self.familyBuild = familyBuild
  }

  /// An override for ``Pod/init(overrides:observer:)`` that builds the value another way.
  ///
  /// ```swift
  /// let pod = Pod(overrides: [httpClientProvider.override { _ in FakeHTTPClient() }])
  /// ```
  ///
  /// - Parameters:
  ///   - scope: The scope for the override's instances; the provider's own scope if nil.
  ///   - build: The replacement builder.
  public func override(
    scope: (any ProviderScope)? = nil,
    with build: @escaping @Sendable (BuildContext) -> Value
  ) -> ProviderOverride where Value: Sendable {
    ProviderOverride(TypedOverride(provider: self, scope: scope, build: build))
  }

  /// An override for ``Pod/init(overrides:observer:)`` that always resolves to `value`.
  ///
  /// The value is cached in the provider's scope like a built one, so clearing that scope
  /// still discards what was built from it. Every caller gets this one value, so it must be
  /// `Sendable`, whatever the provider's scope.
  public func override(withValue value: Value) -> ProviderOverride where Value: Sendable {
    ProviderOverride(TypedOverride(provider: self, value: value))
  }
}

extension Provider: CustomStringConvertible {
  /// The provider's ``name``.
  public var description: String { name }
}

extension Provider: Hashable {
  /// Whether both are the same dependency: the same provider, or members of one family for
  /// equal arguments.
  public static func == (lhs: Provider, rhs: Provider) -> Bool {
    lhs.info === rhs.info
  }

  /// Hashes the provider's identity.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(info))
  }
}
