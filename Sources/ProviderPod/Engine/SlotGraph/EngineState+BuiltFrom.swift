/// "Built from" records between slots, both ways: what a build read (its frame's list, then
/// its entry's) and, on each slot read, the slots built from it (`Dependents`), which a discard
/// follows. A build's end records its caller's dependency here, so this is the slot graph's
/// half of every build's finish. They touch slots and frames only, under the tree's lock (a
/// request pod's shared sections write the root's slots here under the crossing lock, see
/// `EngineState+SharedSections`).
extension EngineState {
  /// Records that whatever `caller` is building depends on `slot`'s provider. A build that
  /// was invalidated records nothing more: its result will not be cached.
  @inline(__always)
  func recordDependency(on slot: Slot, from caller: Frame?) {
    Self.recordDependency(on: slot, from: caller)
  }

  static func recordDependency(on slot: Slot, from caller: Frame?) {
    guard let owner = recorder(of: slot, from: caller) else { return }
    addDependent(owner.slot!, on: slot)
    owner.addDependency(slot)
  }

  /// `recordDependency` where the caller's reference to `slot` becomes the one the build's
  /// list keeps: a copy of an app slot's reference, and the release of the caller's, are two
  /// writes that every request on every core shares.
  static func recordDependency(handingOver slot: consuming Slot, from caller: Frame?) {
    guard let owner = recorder(of: slot, from: caller) else { return }
    addDependent(owner.slot!, on: slot)
    owner.addDependency(slot)
  }

  /// The build that records a dependency on `slot` from `caller`, with `slot` marked as
  /// recorded by it; nil where none does (no build, one invalidated, or `slot` recorded by it
  /// already).
  @inline(__always)
  private static func recorder(of slot: Slot, from caller: Frame?) -> Frame? {
    guard let owner = caller?.owner, owner.phase == .running, owner.slot != nil,
      slot.recordedBy != owner.serial
    else { return nil }
    slot.recordedBy = owner.serial
    // Recorded here, a read of the root must not join reads of it recorded only on the
    // build's side: those are recorded first (see `EngineState+UnrecordedReads`). Only an
    // exclusive section records a slot of another pod for a marked build.
    if owner.readsUnrecorded, slot.pod !== owner.slot!.pod { recordUnrecordedReads(of: owner) }
    return owner
  }

  /// Records that whatever `caller` is building depends on `provider` in `pod`, where the
  /// provider may have no slot yet. The slot is made only when the dependency is recorded: a
  /// build that was invalidated records nothing, and an empty slot made for it would stay,
  /// since only the "built from" records it was meant to hold prune it. A pod that went away
  /// gets no slot either (the slot would keep its record alive, and the record the slot): a
  /// build depending on it there is not cached.
  mutating func recordDependency(
    on provider: ProviderInfo, in pod: PodRecord, from caller: Frame?,
    released: inout [AnyObject]
  ) {
    guard let owner = caller?.owner, owner.phase == .running else { return }
    guard pod.isAlive else {
      owner.invalidate()
      return
    }
    recordDependency(on: slot(for: provider, in: pod, released: &released), from: caller)
  }

  @inline(__always)
  func addDependent(_ dependent: Slot, on slot: Slot) { Self.addDependent(dependent, on: slot) }

  static func addDependent(_ dependent: Slot, on slot: Slot) {
    slot.dependents.add(dependent)
  }

  /// Forgets one "built from" link of `dependent` on `slot`.
  func dropDependent(_ dependent: Slot, on slot: Slot, released: inout [AnyObject]) {
    guard slot.dependents.removeOne(dependent) else { return }
    if slot.dependents.isEmpty { pruneIfUnused(slot, released: &released) }
  }

  /// Forgets that `dependent` was built from each of `dependencies`.
  func dropDependent(
    _ dependent: Slot, from dependencies: [Slot], released: inout [AnyObject]
  ) {
    for slot in dependencies { dropDependent(dependent, on: slot, released: &released) }
  }
}
