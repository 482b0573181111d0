/// The slots built from one slot ("built from" seen from the other side), each with how many
/// of its instances and builds were: an old stale build and a new one can overlap.
///
/// Most slots have no dependent or one (a leaf that one service was built from), or two (an
/// app singleton while a request's child pod links to it and builds from it), so up to two
/// are kept inline and a table is made only for a third: a dictionary would allocate its
/// storage for the first, and a pod with a hundred leaves made a hundred of them.
struct Dependents: Sequence {
  struct Dependent {
    let slot: Slot
    var count: Int
  }

  private enum Storage {
    case none
    case one(Dependent)
    case two(Dependent, Dependent)
    case many([SlotID: Dependent])
  }

  private var storage = Storage.none

  var isEmpty: Bool {
    if case .none = storage { return true }
    return false
  }

  /// Counts `slot` once more. The first dependent, which nearly every build records on what
  /// it read first, is stored inline in the caller; the rest go through `addToSome`.
  @inline(__always)
  mutating func add(_ slot: Slot) {
    guard case .none = storage else { return addToSome(slot) }
    storage = .one(Dependent(slot: slot, count: 1))
  }

  /// `add` where the slot has a dependent already.
  private mutating func addToSome(_ slot: Slot) {
    switch storage {
    case .none:
      storage = .one(Dependent(slot: slot, count: 1))
    case .one(var only):
      if only.slot === slot {
        only.count += 1
        storage = .one(only)
      } else {
        storage = .two(only, Dependent(slot: slot, count: 1))
      }
    case .two(var first, var second):
      if first.slot === slot {
        first.count += 1
        storage = .two(first, second)
      } else if second.slot === slot {
        second.count += 1
        storage = .two(first, second)
      } else {
        storage = .many([
          first.slot.id: first, second.slot.id: second, slot.id: Dependent(slot: slot, count: 1),
        ])
      }
    case .many(var table):
      // Taken out first, so the table is uniquely held and grows in place.
      storage = .none
      table[slot.id, default: Dependent(slot: slot, count: 0)].count += 1
      storage = .many(table)
    }
  }

  /// Counts `slot` once less. Returns false if it was not counted at all.
  mutating func removeOne(_ slot: Slot) -> Bool {
    switch storage {
    case .none:
      return false
    case .one(var only):
      guard only.slot === slot else { return false }
      only.count -= 1
      storage = only.count > 0 ? .one(only) : .none
      return true
    case .two(var first, var second):
      if first.slot === slot {
        first.count -= 1
        storage = first.count > 0 ? .two(first, second) : .one(second)
      } else if second.slot === slot {
        second.count -= 1
        storage = second.count > 0 ? .two(first, second) : .one(first)
      } else {
        return false
      }
      return true
    case .many(var table):
      guard let count = table[slot.id]?.count else { return false }
      storage = .none
      if count > 1 {
        table[slot.id]!.count = count - 1
      } else {
        table[slot.id] = nil
      }
      // The table stays until it is empty: a slot shared by every request's child pod gains
      // and loses dependents all the time, and going back to inline at one would make a new
      // table for every request.
      if !table.isEmpty { storage = .many(table) }
      return true
    }
  }

  mutating func removeAll() {
    storage = .none
  }

  /// Each dependent with its count, for the invariant check.
  var counts: [SlotID: Int] {
    var result: [SlotID: Int] = [:]
    for dependent in self { result[dependent.slot.id] = dependent.count }
    return result
  }

  struct Iterator: IteratorProtocol {
    fileprivate var first: Dependent?
    fileprivate var second: Dependent?
    fileprivate var table: Dictionary<SlotID, Dependent>.Values.Iterator?

    mutating func next() -> Dependent? {
      if let first {
        self.first = second
        second = nil
        return first
      }
      return table?.next()
    }
  }

  /// A snapshot: changing the slot's dependents while iterating leaves it as it was.
  func makeIterator() -> Iterator {
    switch storage {
    case .none: return Iterator()
    case .one(let only): return Iterator(first: only)
    case .two(let first, let second): return Iterator(first: first, second: second)
    case .many(let table): return Iterator(table: table.values.makeIterator())
    }
  }
}
