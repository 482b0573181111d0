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
