/// A pod's slots with an instance cached in each scope that can be cleared, each slot knowing
/// its place in its scope's list (`Slot.memberIndex`). A list rather than a set of keys: a
/// clear takes the slots as they are, in the order they were cached, without looking each up,
/// and a single discard swaps the last member into the place it leaves.
///
/// The first scope's list is kept inline, its first member too, and the others in a table: a
/// server's request pod caches its handler in one scope, and a table of its own and an array
/// of one slot were two allocations made and freed by every request, about 1,100 instructions
/// of its 11,500. No scope keeps an empty list.
struct ScopeMembers {
  /// The scope of the inline list; nil while it is empty.
  private var firstScope: ScopeKey?
  private var firstMembers = InlineList()
  /// Every other scope's list; nil until a second scope has members, so that a pod of one
  /// scope holds no reference to the standard library's empty storage, which it and the copy
  /// it hands over as it goes would each release (see `SlotTable`).
  private var others: [ScopeKey: [Slot]]?

  init() {}

  /// Lists `slot`, which has just cached an instance in `scope`.
  mutating func add(_ slot: Slot, of scope: ScopeKey) {
    if firstScope == scope {
      slot.memberIndex = firstMembers.count
      firstMembers.append(slot)
      return
    }
    if let index = others?.index(forKey: scope) {
      slot.memberIndex = others!.values[index].count
      others!.values[index].append(slot)
      return
    }
    slot.memberIndex = 0
    if firstScope == nil {
      firstScope = scope
      firstMembers.append(slot)
      return
    }
    if others == nil { others = ThreadRecord.current.emptyTables.scopeMembers }
    others![scope] = [slot]
  }

  /// Takes `slot` out of `scope`'s list, moving the last member into its place.
  mutating func remove(_ slot: Slot, of scope: ScopeKey) {
    let position = slot.memberIndex
    slot.memberIndex = -1
    // One access to the list for the whole change: each access checks it is held once.
    func take(from members: inout [Slot]) -> Bool {
      let last = members.removeLast()
      if last !== slot {
        last.memberIndex = position
        members[position] = last
      }
      return members.isEmpty
    }
    if firstScope == scope {
      if firstMembers.remove(at: position, of: slot) { firstScope = nil }
      return
    }
    guard let index = others?.index(forKey: scope) else { return }
    if take(from: &others!.values[index]) { others!.remove(at: index) }
  }

  /// Takes out `scope`'s whole list, in the order its slots were cached; nil if it has none.
  /// The slots keep their places: the caller discards them all.
  mutating func removeAll(of scope: ScopeKey) -> [Slot]? {
    if firstScope == scope {
      firstScope = nil
      return firstMembers.takeAll()
    }
    return others?.removeValue(forKey: scope)
  }

  /// Every scope's list, for the bookkeeping check.
  var all: [(scope: ScopeKey, members: [Slot])] {
    var result = (others ?? [:]).map { (scope: $0.key, members: $0.value) }
    if let firstScope { result.append((firstScope, firstMembers.all)) }
    return result
  }

  /// Whether a list is kept empty, for the bookkeeping check.
  var keepsAnEmptyList: Bool {
    (firstScope != nil && firstMembers.isEmpty) || (firstScope == nil && !firstMembers.isEmpty)
      || (others?.values.contains { $0.isEmpty } ?? false) || firstMembers.isMalformed
  }

  /// A list whose first slot is kept inline: one member takes no allocation.
  private struct InlineList {
    /// The member at place 0; nil only when the list is empty.
    private var head: Slot?
    /// The members at places 1 and on.
    private var tail: [Slot] = []

    var count: Int { head == nil ? 0 : 1 + tail.count }
    var isEmpty: Bool { head == nil }
    /// Whether the list breaks its own rule (members after no first one).
    var isMalformed: Bool { head == nil && !tail.isEmpty }

    mutating func append(_ slot: Slot) {
      if head == nil { head = slot } else { tail.append(slot) }
    }

    /// Takes out `slot`, at `position`, moving the last member into its place; whether the
    /// list is empty after.
    mutating func remove(at position: Int, of slot: Slot) -> Bool {
      guard !tail.isEmpty else {
        head = nil
        return true
      }
      let last = tail.removeLast()
      if last !== slot {
        last.memberIndex = position
        if position == 0 { head = last } else { tail[position - 1] = last }
      }
      return false
    }

    /// Every member in order, the list left empty.
    mutating func takeAll() -> [Slot] {
      guard let first = head else { return [] }
      head = nil
      // A literal for one member: inserting into an empty array grows it through the standard
      // library's unspecialised code (a scope of one instance, cleared again and again).
      guard !tail.isEmpty else { return [first] }
      var members: [Slot] = []
      swap(&members, &tail)
      // Moved within the buffer, not copied: no member is retained again.
      members.insert(first, at: 0)
      return members
    }

    var all: [Slot] { head.map { [$0] + tail } ?? [] }
  }
}
