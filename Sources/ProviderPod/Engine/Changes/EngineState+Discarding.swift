/// Discarding: what a clear, an override or a pod going away takes out of the tables, and
/// the order its hooks run in. Runs under the lock; hooks and deinits run after it.
extension EngineState {
  /// Discards the instances of `slots` (if cached), invalidates their builds in progress (if
  /// any), and cascades to everything built from them, wherever it is cached, in whichever
  /// pod. Costs what it discards: each step follows the recorded "built from" links.
  mutating func discard(_ slots: [Slot], reason: DiscardReason, into after: inout Aftermath) {
    guard !slots.isEmpty else { return }
    // Slots are marked as this discard reaches them, rather than kept in a set: hashing each
    // one cost more than the rest of the walk.
    discards += 1
    var mark = discards
    // The causes are nearly always distinct (a scope's members, an override's slots): they
    // are walked as given, and copied only to leave a repeat out.
    var pending = slots
    for slot in slots {
      guard slot.discardMark != mark else {
        discards += 1
        mark = discards
        pending = []
        pending.reserveCapacity(slots.count)
        for slot in slots where slot.discardMark != mark {
          slot.discardMark = mark
          pending.append(slot)
        }
        break
      }
      slot.discardMark = mark
    }
    let causes = pending.count
    // Request pods may have read the root's instances without counting among their dependents
    // (see `EngineState+UnrecordedReads`): they are looked for once the walk has run out.
    let unrecordedReads = root.hasChildren
    var reachedRoot = false
    var removed: [(slot: Slot, entry: CacheEntry)] = []
    var index = 0
    // Breadth first, so events read from the cause outwards.
    while true {
      if index == pending.count {
        guard reachedRoot else { break }
        reachedRoot = false
        appendUnrecordedReaders(reachedBy: mark, to: &pending)
        if index == pending.count { break }
      }
      let slot = pending[index]
      index += 1
      // A slot of a pod that went away is reached only through a stale build still running
      // (it counts the slot among an ancestor's dependents until it ends): that pod disposed
      // of its instances when it went, and what is left in the slot goes with it.
      guard slot.pod.isAlive else { continue }
      if let build = slot.build { invalidate(build, released: &after.released) }
      if let entry = removeEntry(of: slot, released: &after.released) {
        // Kept only to order the hooks: an instance with one, or one built from others (through
        // which one instance with a hook may be built from another). Most are neither.
        if entry.hasDisposal || !entry.dependencies.isEmpty { removed.append((slot, entry)) }
        // Only an observed pod's events are reported: a clear of thousands makes none else.
        if slot.pod.hasObserver {
          after.events.append(
            ReportedEvent(
              pod: slot.pod,
              event: .discarded(
                provider: slot.info.name, scope: entry.scope(of: slot.info).name,
                reason: index <= causes ? reason : .dependencyDiscarded)))
        }
      }
      if unrecordedReads, slot.sharesUnrecorded, slot.pod === root { reachedRoot = true }
      // Most cleared instances are leaves: no iterator for an empty list.
      guard !slot.dependents.isEmpty else { continue }
      for dependent in slot.dependents where dependent.slot.discardMark != mark {
        dependent.slot.discardMark = mark
        pending.append(dependent.slot)
      }
    }
    for slot in pending where !slot.isKept { pruneIfUnused(slot, released: &after.released) }
    if removed.contains(where: \.entry.hasDisposal) {
      after.disposals.append(contentsOf: Self.dependentsFirst(removed).filter(\.hasDisposal))
      var pods = after.disposedIn ?? []
      Self.notePods(of: removed, into: &pods)
      after.disposedIn = pods
    }
  }

  /// Notes the pods whose instances with hooks `removed` holds, for a later shutdown to know
  /// whether to await those hooks (see `RunningCleanups`). Out of line: kept in `discard`, it
  /// cost its walk, which most clears run without hooks, a few instructions per instance.
  @inline(never)
  private static func notePods(
    of removed: [(slot: Slot, entry: CacheEntry)], into pods: inout [PodRecord]
  ) {
    // A clear's instances are nearly always of one pod: the last one is looked at first.
    for (slot, entry) in removed where entry.hasDisposal && pods.last !== slot.pod {
      if !pods.contains(where: { $0 === slot.pod }) { pods.append(slot.pod) }
    }
  }

  /// What a pod going away leaves to release once the lock is dropped: its tables whole, so
  /// that nothing it held is freed (and no deinit runs) under the lock.
  struct ReleasedPod {
    var slots = SlotTable()
    var overrides = [ProviderKey: OverrideRecord]()
    /// The pod's other tables, freed after the lock too: freeing a table costs more than
    /// everything else `release` does for a request's pod.
    var scopeMembers = ScopeMembers()
    var familySlots = [ProviderKey: Set<ProviderKey>]()
    var objects: [AnyObject] = []
    /// What the instances of a pod of many slots were built from, taken out of them, so that
    /// no slot is freed from inside another's deinit (see `unchainSlots`).
    var dependencyLists: [[Slot]] = []
    /// The instances with hooks, dependents first.
    var disposals: [CacheEntry] = []
  }

  /// Removes every instance a pod caches, for the pod going away. Every slot of the pod goes,
  /// so only what other pods keep of it is undone one by one: its links to its ancestors'
  /// instances and the "built from" counts it added there. Its children went before it (a
  /// child holds its parent), and their slots with them.
  mutating func release(_ pod: PodRecord) -> ReleasedPod {
    pod.isAlive = false
    pod.forgetOwnerAddressLocking()
    if pod === root { noteRootOverrides() }
    pod.removeFromParent()
    var result = ReleasedPod()
    var hasDisposals = false
    for slot in pod.slots {
      // Nothing may read the instances after this; the slots keep them until after the lock.
      if slot.isPublished { slot.unpublish(in: threadBuildGate.words) }
      // "Built from" both ways within the pod would keep its slots alive in a cycle, and every
      // slot goes: the counts within the pod are dropped whole, so dropping a build's counts
      // on a slot already visited finds nothing, and one not yet visited is emptied anyway.
      slot.dependents.removeAll()
      if let build = slot.build { invalidate(build, released: &result.objects) }
      guard slot.entry != nil else { continue }
      if let target = slot.linkTarget {
        // The ancestor's slot still holds the instance: dropping the copy frees nothing.
        slot.entry = nil
        slot.linkTarget = nil
        dropDependent(slot, on: target, released: &result.objects)
        continue
      }
      // A request pod's reads of the root recorded only on its side have nothing to undo.
      if !slot.readsUnrecorded, let dependencies = slot.entry?.dependencies,
        !dependencies.isEmpty
      {
        for dependency in dependencies where dependency.pod !== pod {
          dropDependent(slot, on: dependency, released: &result.objects)
        }
      }
      if slot.entry?.hasDisposal == true { hasDisposals = true }
    }
    Self.handOver(pod, hasDisposals: hasDisposals, to: &result)
    if pod.parent == nil {
      result.objects.append(contentsOf: spareFrames)
      spareFrames = []
    }
    return result
  }

  /// The last of a pod's release, once nothing else points into its slots: the instances with
  /// hooks to run, dependents first, and the pod's tables, handed over whole. The slots keep
  /// their instances until they are freed, after the lock; `discard` skips them.
  @inline(__always)
  static func handOver(_ pod: PodRecord, hasDisposals: Bool, to result: inout ReleasedPod) {
    if hasDisposals {
      let removed = pod.slots.compactMap { slot in slot.entry.map { (slot, $0) } }
      result.disposals = dependentsFirst(removed).filter(\.hasDisposal)
    }
    if pod.slots.count > maxSlotsFreedAsTheyAre { unchainSlots(of: pod, into: &result) }
    swap(&result.slots, &pod.slots)
    swap(&result.overrides, &pod.overrides)
    swap(&result.scopeMembers, &pod.scopeMembers)
    swap(&result.familySlots, &pod.familySlots)
  }

  /// The most slots a pod's table may hold for its slots to be freed with the instances still
  /// holding what they were built from. A slot's instance holds the slots it was built from,
  /// so instances of one pod built from one another form a chain, and a chain freed from the
  /// table frees each next slot from inside the deinit of the one before: a stack frame per
  /// link. A pod with no more slots than this holds no chain longer than this.
  static let maxSlotsFreedAsTheyAre = 256

  /// Takes what each of the pod's instances was built from out of its entry, to be freed
  /// apart from the pod's table: each slot then goes on its own, with no chain to follow. A
  /// thousands-long chain (a family's member built from the one before, each cached in turn)
  /// overflowed a 512 KB thread stack as its pod went away. The lists are moved whole: a chain
  /// 10,000 deep cost 4% more with each slot appended on its own to `objects`. A pod whose
  /// instances were built from nothing allocates nothing here. Nothing reads an entry's
  /// dependencies once its pod is released.
  @inline(never)
  static func unchainSlots(of pod: PodRecord, into result: inout ReleasedPod) {
    let count = pod.slots.count
    pod.slots.visitAll { slot in
      guard slot.entry?.dependencies.isEmpty == false else { return }
      if result.dependencyLists.isEmpty { result.dependencyLists.reserveCapacity(count) }
      result.dependencyLists.append(slot.entry!.takeDependencies())
    }
  }

  /// The removed instances ordered so that every instance comes before those it was built
  /// from: a post-order walk along "built from", reversed. An explicit stack, since chains can
  /// be deeper than the call stack allows. Each instance comes with the slot it was cached in,
  /// which is how "built from" names it.
  static func dependentsFirst(_ removed: [(slot: Slot, entry: CacheEntry)]) -> [CacheEntry] {
    var bySlot: [SlotID: CacheEntry] = [:]
    for (slot, entry) in removed { bySlot[slot.id] = entry }
    var order: [CacheEntry] = []
    var visited: Set<SlotID> = []
    for (root, _) in removed where !visited.contains(root.id) {
      var stack: [(slot: SlotID, expanded: Bool)] = [(root.id, false)]
      while let (slot, expanded) = stack.popLast() {
        guard let entry = bySlot[slot] else { continue }
        if expanded {
          order.append(entry)
          continue
        }
        guard visited.insert(slot).inserted else { continue }
        stack.append((slot, true))
        for dependency in entry.dependencies where !visited.contains(dependency.id) {
          stack.append((dependency.id, false))
        }
      }
    }
    return order.reversed()
  }
}

extension CacheEntry {
  /// The dependencies, leaving none: moved out, not copied.
  fileprivate mutating func takeDependencies() -> [Slot] {
    var taken: [Slot] = []
    swap(&taken, &dependencies)
    return taken
  }
}
