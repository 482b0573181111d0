import Testing

@testable import ProviderPod

/// Slots of singletons, in a pod of their own, for tests of the tables that list slots.
func slotsInAPodOfTheirOwn(_ count: Int) -> [Slot] {
  let pod = PodRecord(observer: nil, settings: nil)
  return (0..<count).map { index in
    let info = ProviderInfo(
      name: "slot\(index)", cycleLabel: "slot\(index)", scope: ScopeInfo(SingletonScope()))
    return Slot(info, in: pod)
  }
}

@Suite("A slot's table of what was built from it")
struct DependentsTests {
  @Test(
    "counts agree with a dictionary through every size, inline or not",
    arguments: [1, 2, 3, 5, 8])
  func agreesWithDictionary(distinct: Int) {
    let slots = slotsInAPodOfTheirOwn(distinct)
    var dependents = Dependents()
    var model: [SlotID: Int] = [:]
    var generator = SplitMix64(seed: UInt64(distinct))
    for _ in 0..<2_000 {
      let slot = slots[generator.next(below: distinct)]
      if generator.next(below: 3) == 0 {
        let counted = model[slot.id] != nil
        #expect(dependents.removeOne(slot) == counted)
        if let count = model[slot.id] { model[slot.id] = count > 1 ? count - 1 : nil }
      } else {
        dependents.add(slot)
        model[slot.id, default: 0] += 1
      }
      #expect(dependents.counts == model)
      #expect(dependents.isEmpty == model.isEmpty)
      #expect(dependents.counts[slot.id] == model[slot.id])
      #expect(Set(dependents.map(\.slot.id)) == Set(model.keys))
    }
  }

  @Test("iterating is a snapshot: changing the table meanwhile leaves it as it was")
  func iterationIsASnapshot() {
    let slots = slotsInAPodOfTheirOwn(4)
    var dependents = Dependents()
    for slot in slots.prefix(2) { dependents.add(slot) }
    var seen: [SlotID] = []
    for dependent in dependents {
      seen.append(dependent.slot.id)
      _ = dependents.removeOne(dependent.slot)
      dependents.add(slots[3])
    }
    #expect(Set(seen) == Set(slots.prefix(2).map(\.id)))
    #expect(dependents.counts == [slots[3].id: 2])
  }
}
