/// A pod's slots by provider: the first slot held inline, the others in a dictionary.
///
/// A request's pod usually caches one instance, its handler, and reads the rest from the app's
/// pod without a slot of its own. With the first slot inline, such a pod has no table at all:
/// a dictionary's storage was copied as the pod was made and freed as it went, and every
/// lookup hashed its key (about 900 instructions a request, nearly a tenth of it). A pod with
/// many slots pays one comparison more per lookup.
///
/// A key is filed in one place only: `insert` takes a provider the table has no slot for,
/// and a removed inline slot leaves its place empty for the next insert rather than moving
/// another in. Iterating visits the inline slot first, then the others in the dictionary's
/// order (which nothing relies on). Guarded as the pod that holds it (`PodRecord`).
///
/// The dictionary is nil until a second slot is filed: an empty dictionary is a reference to
/// the standard library's empty storage, which a pod's table and the copy of it that a pod
/// hands over as it goes each released (about 24 instructions apiece, where a release of nil
/// costs about 15).
struct SlotTable: Sequence {
  private var first: Slot?
  private var others: [ProviderKey: Slot]?

  var count: Int { (others?.count ?? 0) + (first == nil ? 0 : 1) }

  /// The slot for `key`, if the pod has one.
  subscript(key: ProviderKey) -> Slot? {
    @inline(__always) get {
      if let first, first.key == key { return first }
      // A pod of one slot has no dictionary to hash the key into.
      return others?[key]
    }
  }

  /// Files `slot`, for a provider that has no slot in the table.
  @inline(__always)
  mutating func insert(_ slot: Slot) {
    assert(self[slot.key] == nil, "a second slot filed for \(slot.info.name)")
    if first == nil {
      first = slot
      return
    }
    insertOther(slot)
  }

  @inline(__always)
  private mutating func insertOther(_ slot: Slot) {
    // A pod that needs a table holds a few slots: room for them at once, not by three
    // regrowths, copied from the thread's empty one (see `EmptyTables`).
    // Taken out, so that the table is uniquely held and grows in place.
    var table = others.take() ?? ThreadRecord.current.emptyTables.slots
    table[slot.key] = slot
    others = consume table
  }

  /// Removes `slot` if it is the one filed for its provider; returns whether it was.
  @discardableResult
  mutating func remove(_ slot: Slot) -> Bool {
    if first === slot {
      first = nil
      return true
    }
    guard let index = others?.index(forKey: slot.key), others![index].value === slot else {
      return false
    }
    others!.remove(at: index)
    return true
  }

  /// Whether the inline slot's provider is filed in the dictionary too, which `insert` rules
  /// out; for the bookkeeping check, which cannot see it in `filed` (both carry their key).
  var filesAProviderTwice: Bool {
    guard let first else { return false }
    return others?[first.key] != nil
  }

  /// Every slot with the key it is filed under, for the bookkeeping check.
  var filed: [(key: ProviderKey, slot: Slot)] {
    var filed = (others ?? [:]).map { (key: $0.key, slot: $0.value) }
    if let first { filed.append((first.key, first)) }
    return filed
  }

  /// Calls `body` with every slot, where `body` changes no slot table: `for in` hands out each
  /// slot retained, and releases it after (about 40 instructions a slot, where a pod of
  /// thousands of slots looks at each as it sweeps or goes away).
  @inline(__always)
  func visitAll(_ body: (Slot) throws -> Void) rethrows {
    if let first { try body(first) }
    guard let others else { return }
    for slot in others.values { try body(slot) }
  }

  @inline(__always)
  func makeIterator() -> Iterator {
    Iterator(first: first, others: others?.values.makeIterator())
  }

  struct Iterator: IteratorProtocol {
    fileprivate var first: Slot?
    fileprivate var others: Dictionary<ProviderKey, Slot>.Values.Iterator?

    @inline(__always)
    mutating func next() -> Slot? {
      if let slot = first.take() { return slot }
      return others?.next()
    }
  }
}
