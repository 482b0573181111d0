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
  let info: FamilyInfo
  let build: @Sendable (Pod, Argument) -> Value
  let onDiscard: (@Sendable (Value) -> Void)?
  private let members = FamilyMembers<Argument>()

  /// The family's name; members are named `name(argument)`.
  public var name: String { info.name }
  /// The scope every member is cached in, unless an override names another.
  public var scope: any ProviderScope { info.scope.scope }

  /// Creates a family of providers.
  ///
  /// - Parameters:
  ///   - scope: How long each member's instance is cached. ``SingletonScope`` by default.
  ///   - name: The family's name. By default the value type and the declaration's location.
  ///   - onDiscard: Called once for each instance the pod cached and then discarded; see
  ///     ``Provider/init(scope:name:onDiscard:fileID:line:_:)``.
  ///   - fileID: Where the family is declared; filled in by the compiler.
  ///   - line: Where the family is declared; filled in by the compiler.
  ///   - build: Builds a member's value from the pod and the member's argument.
  public init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: (@Sendable (Value) -> Void)? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    _ build: @escaping @Sendable (Pod, Argument) -> Value
  ) {
    info = FamilyInfo(
      name: name, typeName: "\(Value.self)", location: declarationSite(fileID: fileID, line: line),
      scope: ScopeInfo(scope))
    self.build = build
    self.onDiscard = onDiscard
  }

  /// The member for `argument`: the same dependency for equal arguments.
  public func callAsFunction(_ argument: Argument) -> Provider<Value> {
    let build = self.build
    return Provider(
      member: members.member(for: argument, in: info), onDiscard: onDiscard,
      build: { pod in build(pod, argument) },
      familyBuild: { pod, record in
        unsafeDowncast(record, to: TypedFamilyOverride<Argument, Value>.self).build(pod, argument)
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
    with build: @escaping @Sendable (Pod, Argument) -> Value
  ) -> ProviderOverride {
    ProviderOverride(TypedFamilyOverride(family: self, scope: scope, build: build))
  }

  /// How many members are alive: cached or overridden in some pod, or held by a caller.
  var liveMemberCount: Int { members.liveCount }
}

extension ProviderFamily: CustomStringConvertible {
  /// The family's ``name``.
  public var description: String { name }
}

/// A family member's identity, held weakly: pods keep the members they use alive.
struct WeakMember: @unchecked Sendable {
  weak var info: ProviderInfo?
  init(_ info: ProviderInfo) { self.info = info }
}

/// A family's members by argument, held weakly and swept as the table grows.
final class FamilyMembers<Argument: Hashable & Sendable>: Sendable {
  private let table = Locked<[Argument: WeakMember]>([:])

  /// The member for `argument`: the live one, or a new identity.
  func member(for argument: Argument, in family: FamilyInfo) -> ProviderInfo {
    table.withLock { members in
      if let live = members[argument]?.info { return live }
      let member = family.makeMember(argument: "\(argument)")
      members[argument] = WeakMember(member)
      family.noteInsertion(liveCount: members.count) {
        members = members.filter { $0.value.info != nil }
        return members.count
      }
      return member
    }
  }

  var liveCount: Int { table.withLock { $0.values.filter { $0.info != nil }.count } }
}

/// What the pod knows of a family, whatever its types.
final class FamilyInfo: @unchecked Sendable {
  let name: String
  let scope: ScopeInfo
  private let givenName: String?
  private let typeName: String
  private let location: String
  /// Guarded by the family's member table lock.
  private var pruneAt = 64

  init(name: String?, typeName: String, location: String, scope: ScopeInfo) {
    self.givenName = name
    self.typeName = typeName
    self.location = location
    self.name = name ?? "\(typeName) (\(location))"
    self.scope = scope
  }

  var key: ProviderKey { ProviderKey(address: UInt(bitPattern: ObjectIdentifier(self))) }

  func makeMember(argument: String) -> ProviderInfo {
    let name = givenName.map { "\($0)(\(argument))" } ?? "\(typeName)(\(argument)) (\(location))"
    let cycleLabel = givenName.map { "\($0)(\(argument)) (\(location))" } ?? name
    return ProviderInfo(name: name, cycleLabel: cycleLabel, scope: scope, family: self)
  }

  /// Sweeps dead members once the table has doubled since the last sweep, so its size stays
  /// proportional to the live members at an amortised constant cost per insertion.
  func noteInsertion(liveCount: Int, prune: () -> Int) {
    guard liveCount >= pruneAt else { return }
    pruneAt = max(64, prune() * 2)
  }
}
