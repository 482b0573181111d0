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
  /// - Parameters:
  ///   - scope: How long each member's instance is cached. ``SingletonScope`` by default.
  ///   - name: The family's name. By default the value type and the declaration's location.
  ///   - onDiscard: Called once for each instance the pod cached and then discarded; see
  ///     ``Provider/init(scope:name:onDiscard:fileID:line:column:_:)``.
  ///   - fileID: Where the family is declared; filled in by the compiler.
  ///   - line: Where the family is declared; filled in by the compiler.
  ///   - column: Where the family is declared; filled in by the compiler.
  ///   - build: Builds a member's value from the pod and the member's argument.
  public init(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    onDiscard: (@Sendable (Value) -> Void)? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    info = FamilyInfo(
      name: name, typeName: "\(Value.self)",
      declaration: Declaration(fileID: fileID, line: line, column: column, valueType: Value.self),
      scope: ScopeInfo(scope))
    self.build = build
    self.onDiscard = disposalHook(onDiscard)
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

/// A family's members by argument, held weakly: pods keep the members they use alive.
///
/// An argument's `hash`, `==` and `description` are user code, so none of them runs under the
/// table's lock. Members are bucketed by a hash computed outside it. A new member is inserted
/// only if its bucket has not changed since it was read (each change stamps the bucket with a
/// new number), and looked for again otherwise; changes to other buckets, such as members an
/// argument's own `hash` creates, do not get in the way. Dead members are swept once the table
/// has doubled since the last sweep, and their arguments are let go after the lock.
final class FamilyMembers<Argument: Hashable & Sendable>: Sendable {
  private struct Member: Sendable {
    let argument: Argument
    weak var info: ProviderInfo?
  }

  private struct Bucket {
    var members: [Member]
    var stamp: Int
  }

  private struct Table {
    var buckets: [Int: Bucket] = [:]
    var lastStamp = 0
    var count = 0
    var sweepAt = 64
  }

  private let table = Locked(Table())

  /// The member for `argument`: the live one, or a new identity.
  func member(for argument: Argument, in family: FamilyInfo) -> ProviderInfo {
    let hash = argument.hashValue
    while true {
      let bucket = table.withLock { $0.buckets[hash] }
      for member in bucket?.members ?? [] where member.argument == argument {
        if let live = member.info { return live }
      }
      let member = family.makeMember(argument: "\(argument)")
      let (inserted, swept) = table.withLock { table -> (Bool, [Bucket]) in
        guard table.buckets[hash]?.stamp == bucket?.stamp else { return (false, []) }
        table.lastStamp += 1
        table.count += 1
        table.buckets[hash, default: Bucket(members: [], stamp: 0)].members.append(
          Member(argument: argument, info: member))
        table.buckets[hash]!.stamp = table.lastStamp
        guard table.count >= table.sweepAt else { return (true, []) }
        return (true, Self.sweep(&table))
      }
      withExtendedLifetime((bucket, swept)) {}
      if inserted { return member }
    }
  }

  /// Removes dead members; returns the old buckets, to be released after the lock.
  private static func sweep(_ table: inout Table) -> [Bucket] {
    var live: [Int: Bucket] = [:]
    var count = 0
    for (hash, bucket) in table.buckets {
      let kept = bucket.members.filter { $0.info != nil }
      count += kept.count
      guard !kept.isEmpty else { continue }
      if kept.count == bucket.members.count {
        live[hash] = bucket
      } else {
        table.lastStamp += 1
        live[hash] = Bucket(members: kept, stamp: table.lastStamp)
      }
    }
    table.count = count
    table.sweepAt = max(64, count * 2)
    swap(&live, &table.buckets)
    return Array(live.values)
  }

  var liveCount: Int {
    table.withLock {
      $0.buckets.values.map { $0.members.filter { $0.info != nil }.count }.reduce(0, +)
    }
  }
}

/// What the pod knows of a family, whatever its types.
final class FamilyInfo: Sendable {
  let name: String
  let scope: ScopeInfo
  /// Where the family was declared and what it builds; its members share it.
  let declaration: Declaration
  /// The family this identity belongs to, held weakly: once it is gone, no resolve can reach
  /// its members again. Set once, before the family is shared. Read it outside the pod's lock.
  nonisolated(unsafe) weak var owner: AnyObject?
  private let givenName: String?
  private let typeName: String
  private let location: String

  init(name: String?, typeName: String, declaration: Declaration, scope: ScopeInfo) {
    self.givenName = name
    self.typeName = typeName
    self.declaration = declaration
    self.location = declarationSite(fileID: declaration.fileID, line: declaration.line)
    self.name = name ?? "\(typeName) (\(location))"
    self.scope = scope
  }

  var key: ProviderKey { ProviderKey(address: UInt(bitPattern: ObjectIdentifier(self))) }

  func makeMember(argument: String) -> ProviderInfo {
    let name = givenName.map { "\($0)(\(argument))" } ?? "\(typeName)(\(argument)) (\(location))"
    let cycleLabel = givenName.map { "\($0)(\(argument)) (\(location))" } ?? name
    return ProviderInfo(name: name, cycleLabel: cycleLabel, scope: scope, family: self)
  }
}
