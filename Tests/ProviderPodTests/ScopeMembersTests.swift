import Testing

@testable import ProviderPod

private struct FirstListScope: ProviderScope {}
private struct SecondListScope: ProviderScope {}
private struct ThirdListScope: ProviderScope {}
private struct FourthListScope: ProviderScope {}

@Suite("A pod's lists of what each scope holds")
struct ScopeMembersTests {
  private static let scopes = [
    ScopeKey(FirstListScope()), ScopeKey(SecondListScope()), ScopeKey(ThirdListScope()),
    ScopeKey(FourthListScope()),
  ]

  /// Checks `members` against a table of plain arrays that swaps the last member into the
  /// place a removed one leaves, as the lists must.
  private static func check(
    _ members: ScopeMembers, against model: [ScopeKey: [Slot]],
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(!members.keepsAnEmptyList, sourceLocation: sourceLocation)
    let listed = members.all
    #expect(listed.count == model.count, sourceLocation: sourceLocation)
    for (scope, list) in listed {
      #expect(list.map(\.id) == model[scope]?.map(\.id), sourceLocation: sourceLocation)
      for (index, slot) in list.enumerated() {
        #expect(slot.memberIndex == index, sourceLocation: sourceLocation)
      }
    }
  }

  @Test(
    "adds, removals and whole clears agree with plain lists, through every scope in turn",
    arguments: [1, 2, 3, 4])
  func agreesWithPlainLists(scopeCount: Int) {
    let slots = slotsInAPodOfTheirOwn(12)
    var members = ScopeMembers()
    var model: [ScopeKey: [Slot]] = [:]
    var scopeOf: [SlotID: ScopeKey] = [:]
    var generator = SplitMix64(seed: UInt64(scopeCount))
    for _ in 0..<3_000 {
      let slot = slots[generator.next(below: slots.count)]
      let choice = generator.next(below: 10)
      if let scope = scopeOf[slot.id], choice < 4 {
        members.remove(slot, of: scope)
        var list = model[scope]!
        let place = list.firstIndex { $0 === slot }!
        let last = list.removeLast()
        if last !== slot { list[place] = last }
        model[scope] = list.isEmpty ? nil : list
        scopeOf[slot.id] = nil
        #expect(slot.memberIndex == -1)
      } else if choice == 4 {
        let scope = Self.scopes[generator.next(below: scopeCount)]
        let taken = members.removeAll(of: scope)
        #expect(taken?.map(\.id) == model[scope]?.map(\.id))
        for slot in model[scope] ?? [] { scopeOf[slot.id] = nil }
        for slot in taken ?? [] { slot.memberIndex = -1 }
        model[scope] = nil
      } else if scopeOf[slot.id] == nil {
        let scope = Self.scopes[generator.next(below: scopeCount)]
        members.add(slot, of: scope)
        model[scope, default: []].append(slot)
        scopeOf[slot.id] = scope
      }
      Self.check(members, against: model)
    }
  }

  @Test("a scope listed in the table stays there when the inline list empties")
  func tableScopeKeepsItsList() {
    let slots = slotsInAPodOfTheirOwn(3)
    let (first, second) = (Self.scopes[0], Self.scopes[1])
    var members = ScopeMembers()
    members.add(slots[0], of: first)
    members.add(slots[1], of: second)
    members.remove(slots[0], of: first)
    // The second scope is in the table: adding to it must not start a second list inline.
    members.add(slots[2], of: second)
    Self.check(members, against: [second: [slots[1], slots[2]]])
    #expect(members.removeAll(of: second)?.map(\.id) == [slots[1].id, slots[2].id])
    #expect(members.all.isEmpty)
  }
}
