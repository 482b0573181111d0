import Dispatch

/// A provider per argument: the same builder and scope, a separate dependency for each value.
///
/// Declare a family as a global, like a provider, and call it with an argument to get the
/// member for that argument:
///
/// ```swift
/// let userProvider = ProviderFamily(scope: SessionScope()) { (pod, id: UserID) in
///   User(id, api: pod.resolve(apiProvider))
/// }
///
/// let ada = pod.resolve(userProvider(42))
/// pod.resolve(userProvider(42)) === ada  // equal arguments: the same dependency
/// ```
///
/// Equal arguments give the same dependency (the same cached instance, the same override);
/// different arguments give separate ones. Members are named after the family and the
/// argument, such as `userProvider(42)`.
///
/// A family keeps its members only while a pod caches or overrides them, so a family used with
/// many arguments does not grow without bound once their scope is cleared.
public final class ProviderFamily<Argument: Hashable & Sendable, Value>: Sendable {
  /// What the pod's record of this provider holds weakly to learn that the provider is gone.
  /// A token rather than the provider itself: a weak reference gives its target a side table,
  /// which would slow every retain and release of the provider on the resolve path.
  private let liveness = Liveness()
  let info: FamilyInfo
  let build: @Sendable (BuildContext, Argument) -> Value
  let onDiscard: DisposalHook<Value>?
  private let members = FamilyMembers<Argument>()

  /// The family's name; members are named `name(argument)`.
  public var name: String { info.name }
  /// The scope every member is cached in, unless an override names another.
  public var scope: any ProviderScope { info.scope.scope }

  /// Creates a family of providers.
  ///
  /// The value must be `Sendable`, as a ``Provider``'s must; for one that is not, see
  /// ``init(scope:name:fileID:line:column:_:)``.
  ///
  /// - Parameters:
  ///   - scope: How long each member's instance is cached. ``SingletonScope`` by default.
  ///   - name: The family's name. By default the value type and the declaration's location.
  ///   - onDiscard: Called once for each instance the pod cached and then discarded; see
  ///     <doc:Lifetimes>.
  ///   - fileID: Where the family is declared; filled in by the compiler.
  ///   - line: Where the family is declared; filled in by the compiler.
  ///   - column: Where the family is declared; filled in by the compiler.
  ///   - build: Builds a member's value from the pod and the member's argument.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: (@Sendable (Value) -> Void)? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) where Value: Sendable {
    self.init(
      anyScope: scope, name: name, onDiscard: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build: build)
  }

  /// Creates a family whose members' instances are cleaned up asynchronously; see
  /// ``Provider/init(scope:name:onDiscard:fileID:line:column:_:)-(_,_,(Value)->Void,_,_,_,_)``.
  public convenience init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: @escaping @Sendable (Value) async throws -> Void,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) where Value: Sendable {
    self.init(
      anyScope: scope, name: name, onDiscard: disposalHook(onDiscard), fileID: fileID,
      line: line, column: column, build: build)
  }

  /// A family declared by its user, in any scope: the public initializers decide which scopes
  /// a value type may have.
  init(
    anyScope scope: any ProviderScope,
    name: String?,
    onDiscard: DisposalHook<Value>?,
    fileID: String,
    line: Int,
    column: Int,
    build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    info = FamilyInfo(
      name: name, typeName: "\(Value.self)",
      declaration: Declaration(fileID: fileID, line: line, column: column, valueType: Value.self),
      scope: ScopeInfo(scope))
    self.build = build
    self.onDiscard = onDiscard
    info.owner = liveness
  }

  /// The member for `argument`: the same dependency for equal arguments.
  public func callAsFunction(_ argument: Argument) -> Provider<Value> {
    let build = self.build
    return Provider(
      member: members.member(for: argument, in: info), onDiscard: onDiscard,
      build: { pod in build(pod, argument) },
      familyBuild: { pod, record in
        record.typed(TypedFamilyOverride<Argument, Value>.self).build(pod, argument)
      })
  }

  /// An override of every member for ``Pod/init(overrides:observer:)``. An override of one
  /// member (`userProvider(7).override { ... }`) wins over it.
  ///
  /// ```swift
  /// let pod = Pod(overrides: [userProvider.override { _, id in User.fake(id) }])
  /// ```
  ///
  /// - Parameters:
  ///   - scope: The scope for the override's instances; the family's own scope if nil.
  ///   - build: The replacement builder.
  public func override(
    scope: (any ProviderScope)? = nil,
    with build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) -> ProviderOverride where Value: Sendable {
    ProviderOverride(TypedFamilyOverride(family: self, scope: scope, build: build))
  }

  /// How many members are alive: cached or overridden in some pod, or held by a caller.
  var liveMemberCount: Int { members.liveCount }
}

extension ProviderFamily: CustomStringConvertible {
  /// The family's ``name``.
  public var description: String { name }
}
