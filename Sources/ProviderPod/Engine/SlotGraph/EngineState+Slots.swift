/// The slot graph's own operations on slots: a pod's slots made, swept and pruned, the one
/// function that links a child's slot to its ancestor's, and taking an instance out of its slot
/// with everything recorded about it ("built from" records are `EngineState+BuiltFrom`). They
/// touch slots and pods only, under the tree's lock.
extension EngineState {
  func slot(
    for info: ProviderInfo, in pod: PodRecord, released: inout [AnyObject]
  ) -> Slot {
    if let slot = pod.slots[info.key] { return slot }
    return addSlot(for: info, in: pod, released: &released)
  }

  /// A new slot for a provider the pod has none for. The pod that gets the slot is the one
  /// swept, whichever pod the resolve went through: a child's resolves make slots in its
  /// ancestors, which may never be resolved through themselves.
  @inline(__always)
  func addSlot(
    for info: ProviderInfo, in pod: PodRecord, released: inout [AnyObject]
  ) -> Slot {
    Self.addSlot(for: info, in: pod, released: &released)
  }

  static func addSlot(
    for info: ProviderInfo, in pod: PodRecord, released: inout [AnyObject]
  ) -> Slot {
    if pod.slots.count >= pod.nextSlotSweep {
      sweepSlotsOfGoneProviders(in: pod, released: &released)
    }
    let slot = Slot(info, in: pod)
    pod.slots.insert(slot)
    if let family = info.family { pod.familySlots[family.key, default: []].insert(info.key) }
    return slot
  }

  /// Drops the kept, empty slots of providers that no longer exist: a provider made at run
  /// time (in a loop, per screen) that a long-lived pod cached and then discarded would
  /// otherwise leave its slot behind for the pod's life, since no resolve can reach it again.
  /// Runs when the table has grown to twice its size after the last sweep, so it costs
  /// amortised constant time per slot added; a pod whose providers are globals stops growing
  /// and never sweeps. The slots go to `released`, to be freed after the lock.
  @inline(__always)
  func sweepSlotsOfGoneProviders(in pod: PodRecord, released: inout [AnyObject]) {
    Self.sweepSlotsOfGoneProviders(in: pod, released: &released)
  }

  static func sweepSlotsOfGoneProviders(in pod: PodRecord, released: inout [AnyObject]) {
    var gone: [Slot] = []
    pod.slots.visitAll { slot in
      if slot.isKept, slot.isUnused, slot.info.owner == nil { gone.append(slot) }
    }
    for slot in gone {
      pod.slots.remove(slot)
      released.append(slot)
    }
    pod.nextSlotSweep = max(1_024, 2 * pod.slots.count)
  }

  /// Drops the slot once nothing is cached, built or recorded in it, unless the pod keeps it
  /// (see `Slot`). Most builds end with their slot kept or in use: that is decided where the
  /// build ends, without a call.
  @inline(__always)
  func pruneIfUnused(_ slot: Slot, released: inout [AnyObject]) {
    guard !slot.isKept, slot.isUnused else { return }
    Self.prune(slot, released: &released)
  }

  private static func prune(_ slot: Slot, released: inout [AnyObject]) {
    let pod = slot.pod
    guard pod.slots.remove(slot) else { return }
    if let family = slot.info.family {
      pod.familySlots[family.key]?.remove(slot.key)
      if pod.familySlots[family.key]?.isEmpty == true { pod.familySlots[family.key] = nil }
    }
    released.append(slot)
  }

  /// Makes `link`, a child's slot, share `target`'s instance (an ancestor's): it holds a copy
  /// of the entry for the child's cached reads and watchers, and counts among `target`'s
  /// dependents, so discarding the ancestor's instance empties the link too. The one place a
  /// link is made.
  func link(_ link: Slot, to target: Slot) {
    if link.isPublished { link.unpublish(in: threadBuildGate.words) }
    link.entry = target.entry
    link.linkTarget = target
    addDependent(link, on: target)
    // Read through the link, the root's slot may be read in shared sections without counting
    // the readers (see `EngineState+UnrecordedReads`).
    if target.pod === root { target.sharesUnrecorded = true }
  }

  /// Takes the slot's cached instance out, with its bookkeeping, and drops the links other
  /// pods keep to it; the slot itself is left for the caller to prune. Returns the instance
  /// if the slot owned it (a link owns nothing).
  @inline(__always)
  mutating func removeEntry(of slot: Slot, released: inout [AnyObject]) -> CacheEntry? {
    // Before the entry is read: with a call between the read and the write, the entry would be
    // copied (three retains and releases) rather than moved out.
    if slot.isPublished { slot.unpublish(in: threadBuildGate.words) }
    guard let entry = slot.entry else { return nil }
    slot.entry = nil
    // Most discarded instances are leaves of no scope list (a clear took the list whole),
    // built from nothing and linked to nothing.
    if slot.linkTarget == nil, slot.memberIndex < 0, entry.dependencies.isEmpty,
      slot.dependents.isEmpty
    {
      released.append(entry.holder)
      return entry
    }
    return removeLinkedEntry(entry, of: slot, released: &released)
  }

  /// The rest of `removeEntry`, for an instance with links, memberships or "built from"
  /// records to undo.
  private mutating func removeLinkedEntry(
    _ entry: CacheEntry, of slot: Slot, released: inout [AnyObject]
  ) -> CacheEntry? {
    if let target = slot.linkTarget {
      slot.linkTarget = nil
      dropDependent(slot, on: target, released: &released)
      return nil
    }
    if slot.memberIndex >= 0 { slot.pod.removeMember(slot, of: entry.scopeKey(of: slot.info)) }
    if !entry.dependencies.isEmpty {
      dropDependent(
        slot, from: entry.dependencies, unrecordedOutside: slot.readsUnrecorded,
        released: &released)
      slot.readsUnrecorded = false
    }
    // Most instances have no dependents: no iterator for an empty list.
    if !slot.dependents.isEmpty {
      for dependent in slot.dependents where dependent.slot.linkTarget === slot {
        _ = removeEntry(of: dependent.slot, released: &released)
        pruneIfUnused(dependent.slot, released: &released)
      }
    }
    released.append(entry.holder)
    return entry
  }
}
