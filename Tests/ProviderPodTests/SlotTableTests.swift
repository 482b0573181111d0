import Testing

@testable import ProviderPod

@Suite("A pod's table of slots by provider")
struct SlotTableTests {
  /// Checks `table` against a dictionary: the same count, the same slot (or none) for every
  /// key, every slot visited once, and each filed under its own key.
  private static func check(
    _ table: SlotTable, against model: [ProviderKey: Slot], keys: [ProviderKey],
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(table.count == model.count, sourceLocation: sourceLocation)
    for key in keys {
      #expect(table[key]?.id == model[key]?.id, sourceLocation: sourceLocation)
    }
    let visited = table.map(\.id)
    #expect(visited.count == model.count, sourceLocation: sourceLocation)
    #expect(Set(visited) == Set(model.values.map(\.id)), sourceLocation: sourceLocation)
    for (key, slot) in table.filed {
      #expect(slot.key == key, sourceLocation: sourceLocation)
    }
    // Every slot filed once, and `visitAll` visits what iterating does.
    let modelIDs = Set(model.values.map(\.id))
    #expect(table.filed.count == model.count, sourceLocation: sourceLocation)
    #expect(Set(table.filed.map(\.slot.id)) == modelIDs, sourceLocation: sourceLocation)
    var seen: [SlotID] = []
    table.visitAll { seen.append($0.id) }
    #expect(seen.count == model.count, sourceLocation: sourceLocation)
    #expect(Set(seen) == modelIDs, sourceLocation: sourceLocation)
    #expect(!table.filesAProviderTwice, sourceLocation: sourceLocation)
  }

  @Test(
    "inserts and removals agree with a dictionary, inline or not",
    arguments: [1, 2, 3, 5, 12])
  func agreesWithDictionary(distinct: Int) {
    let slots = slotsInAPodOfTheirOwn(distinct)
    let keys = slots.map(\.key)
    var table = SlotTable()
    var model: [ProviderKey: Slot] = [:]
    var generator = SplitMix64(seed: UInt64(distinct))
    for _ in 0..<3_000 {
      let slot = slots[generator.next(below: slots.count)]
      if model[slot.key] == nil {
        table.insert(slot)
        model[slot.key] = slot
      } else {
        let removed = table.remove(slot)
        #expect(removed)
        model[slot.key] = nil
        // Removing it again finds nothing to remove.
        let removedAgain = table.remove(slot)
        #expect(!removedAgain)
      }
      Self.check(table, against: model, keys: keys)
    }
  }

  @Test("a slot for a provider filed with another slot is not removed in its place")
  func removesOnlyTheFiledSlot() {
    let slots = slotsInAPodOfTheirOwn(2)
    for filedFirst in [true, false] {
      var table = SlotTable()
      // The inline place holds the first insert; the second goes to the dictionary.
      if !filedFirst { table.insert(slots[1]) }
      table.insert(slots[0])
      let lookalike = Slot(slots[0].info, in: slots[0].pod)
      let removed = table.remove(lookalike)
      #expect(!removed)
      #expect(table[slots[0].key] === slots[0])
      #expect(table.count == (filedFirst ? 1 : 2))
    }
  }

  @Test("the inline place, once emptied, takes the next insert beside the dictionary's slots")
  func inlinePlaceIsReused() {
    let slots = slotsInAPodOfTheirOwn(3)
    var table = SlotTable()
    table.insert(slots[0])
    table.insert(slots[1])
    let removed = table.remove(slots[0])
    #expect(removed)
    table.insert(slots[2])
    table.insert(slots[0])
    Self.check(
      table, against: Dictionary(uniqueKeysWithValues: slots.map { ($0.key, $0) }),
      keys: slots.map(\.key))
  }
}
