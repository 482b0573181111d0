/// Everything a tree of pods knows, guarded by one lock: each pod's tables (in its
/// ``PodRecord``) and what builds share across the tree. Every method here runs under that
/// lock and never calls user code: values and records it lets go of are handed back in
/// `released`, to be dropped once the lock is released (dropping one can run a deinit, which
/// may resolve).
struct EngineState {
  /// The tree's root pod.
  let root: PodRecord
  /// Builds whose builder is running, on any thread, in any pod of the tree, except thread
  /// builds (see `Frame.beginThreadBuild`). While there are none, a resolve through a pod can
  /// be nested only in a thread build, which the thread's own stack tells, and the cached
  /// fast path need not look at all: a thread build has nothing to record.
  var runningBuilds = 0
  /// Builds started in the tree so far: each build's serial.
  var builds = 0
  /// Threads blocked on another thread's build, from inside a build of their own.
  var waits: [Int: Wait] = [:]
  var nextWaitID = 0
  /// Frames no build uses any more, kept for reuse.
  var spareFrames: [Frame] = []
  /// Instance watchers and retry back-offs of every pod in the tree, told about every change.
  var watchers = Watchers()
  /// Thread builds whose frame another thread has read under the lock (through a context
  /// handed to it), kept here until the build ends, under the lock: ending it without the
  /// lock and reusing the frame would race with what the other thread read, ordered only by
  /// the frame's reference count.
  var lentThreadBuilds: [ObjectIdentifier: Frame] = [:]
  /// Whether always-new builds through the root may skip the lock; kept up to date here.
  let threadBuildGate = ThreadBuildGate.make()

  init(root: PodRecord) {
    self.root = root
    noteRootOverrides()
  }

  /// Tells the gate whether the root's builds need the general path, after any change to its
  /// overrides or its life.
  func noteRootOverrides() {
    threadBuildGate.rootNeedsLookups(!root.overrides.isEmpty || !root.isAlive)
  }

  struct Wait {
    let waiter: Frame
    let target: Frame
  }

  /// What a change leaves for the pod to do once the lock is released: events to report, then
  /// `onDiscard` hooks to run, dependents before what they were built from.
  struct Aftermath {
    var events: [ReportedEvent] = []
    var disposals: [CacheEntry] = []
    var released: [AnyObject] = []
    /// Watchers and back-offs to wake (see `noticeChange`).
    var wakeUps: [() -> Void] = []
  }

  // MARK: Slots

  mutating func slot(for info: ProviderInfo, in pod: PodRecord) -> Slot {
    if let slot = pod.slots[info.key] { return slot }
    return addSlot(for: info, in: pod)
  }

  /// A new slot for a provider the pod has none for.
  mutating func addSlot(for info: ProviderInfo, in pod: PodRecord) -> Slot {
    let slot = Slot(info, in: pod)
    // A request's child pod holds a few slots: room for them at once, not by three regrowths.
    if pod.slots.isEmpty { pod.slots.reserveCapacity(4) }
    pod.slots[info.key] = slot
    if let family = info.family { pod.familySlots[family.key, default: []].insert(info.key) }
    return slot
  }

  /// Drops the slot once nothing is cached, built or recorded in it.
  mutating func pruneIfUnused(_ slot: Slot, released: inout [AnyObject]) {
    let pod = slot.pod
    guard slot.isUnused, let index = pod.slots.index(forKey: slot.key),
      pod.slots.values[index] === slot
    else { return }
    pod.slots.remove(at: index)
    if let family = slot.info.family {
      pod.familySlots[family.key]?.remove(slot.key)
      if pod.familySlots[family.key]?.isEmpty == true { pod.familySlots[family.key] = nil }
    }
    released.append(slot)
  }

  /// Records that whatever `caller` is building depends on `slot`'s provider. A build that
  /// was invalidated records nothing more: its result will not be cached.
  mutating func recordDependency(on slot: Slot, from caller: Frame?) {
    guard let owner = caller?.owner, owner.phase == .running, let dependent = owner.slot
    else { return }
    guard slot.recordedBy != owner.serial else { return }
    slot.recordedBy = owner.serial
    owner.dependencies.append(slot)
    addDependent(dependent, on: slot)
  }

  func addDependent(_ dependent: Slot, on slot: Slot) {
    slot.dependents.add(dependent)
  }

  /// Forgets one "built from" link of `dependent` on `slot`.
  mutating func dropDependent(_ dependent: Slot, on slot: Slot, released: inout [AnyObject]) {
    guard slot.dependents.removeOne(dependent) else { return }
    if slot.dependents.isEmpty { pruneIfUnused(slot, released: &released) }
  }

  /// Forgets that `dependent` was built from each of `dependencies`.
  mutating func dropDependent(
    _ dependent: Slot, from dependencies: [Slot], released: inout [AnyObject]
  ) {
    for slot in dependencies { dropDependent(dependent, on: slot, released: &released) }
  }

  /// Takes the slot's cached instance out, with its bookkeeping, and drops the links other
  /// pods keep to it; the slot itself is left for the caller to prune. Returns the instance
  /// if the slot owned it (a link owns nothing).
  mutating func removeEntry(of slot: Slot, released: inout [AnyObject]) -> CacheEntry? {
    guard let entry = slot.entry else { return nil }
    slot.entry = nil
    if let target = slot.linkTarget {
      slot.linkTarget = nil
      dropDependent(slot, on: target, released: &released)
      return nil
    }
    let pod = slot.pod
    if entry.scope.kind != .singleton, let index = pod.scopeMembers.index(forKey: entry.scope.key) {
      pod.scopeMembers.values[index].remove(slot.key)
      if pod.scopeMembers.values[index].isEmpty { pod.scopeMembers.remove(at: index) }
    }
    dropDependent(slot, from: entry.dependencies, released: &released)
    for dependent in slot.dependents where dependent.slot.linkTarget === slot {
      _ = removeEntry(of: dependent.slot, released: &released)
      pruneIfUnused(dependent.slot, released: &released)
    }
    released.append(entry)
    return entry
  }

  /// Marks a running build stale and forgets what it was built from so far: its result will
  /// not be cached, and a later discard of something it used must not reach the slot it was
  /// placed in, which may hold a newer instance by then (in a tree of pods, the parent's own).
  mutating func invalidate(_ build: Frame, released: inout [AnyObject]) {
    guard build.phase == .running else { return }
    build.invalidate()
    guard let slot = build.slot, !build.dependencies.isEmpty else { return }
    dropDependent(slot, from: build.dependencies, released: &released)
    build.dependencies.removeAll()
  }

  /// Whether a running build's result may no longer be cached: it was invalidated, or its
  /// scope was cleared after it began.
  func isStale(_ frame: Frame) -> Bool {
    if frame.phase != .running { return frame.phase != .runningOnThread }
    guard let scope = frame.clearableScope, let pod = frame.slot?.pod else { return false }
    return (pod.scopeEpochs[scope] ?? 0) != frame.scopeEpoch
  }

  // MARK: Discarding

  /// Discards the instances of `slots` (if cached), invalidates their builds in progress (if
  /// any), and cascades to everything built from them, wherever it is cached, in whichever
  /// pod. Costs what it discards: each step follows the recorded "built from" links.
  mutating func discard(_ slots: [Slot], reason: DiscardReason, into after: inout Aftermath) {
    guard !slots.isEmpty else { return }
    var pending = slots.map { ($0, reason) }
    var seen = Set(slots.map(\.id))
    var removed: [(slot: Slot, entry: CacheEntry)] = []
    var index = 0
    // Breadth first, so events read from the cause outwards.
    while index < pending.count {
      let (slot, reason) = pending[index]
      index += 1
      // A slot of a pod that went away is reached only through a stale build still running
      // (it counts the slot among an ancestor's dependents until it ends): that pod disposed
      // of its instances when it went, and what is left in the slot goes with it.
      guard slot.pod.isAlive else { continue }
      if let build = slot.build { invalidate(build, released: &after.released) }
      if let entry = removeEntry(of: slot, released: &after.released) {
        removed.append((slot, entry))
        // Only an observed pod's events are reported: a clear of thousands makes none else.
        if slot.pod.hasObserver {
          after.events.append(
            ReportedEvent(
              pod: slot.pod,
              event: .discarded(
                provider: entry.provider.name, scope: entry.scope.name, reason: reason)))
        }
      }
      for dependent in slot.dependents where seen.insert(dependent.slot.id).inserted {
        pending.append((dependent.slot, .dependencyDiscarded))
      }
    }
    for (slot, _) in pending { pruneIfUnused(slot, released: &after.released) }
    if removed.contains(where: \.entry.hasDisposal) {
      after.disposals.append(contentsOf: Self.dependentsFirst(removed).filter(\.hasDisposal))
    }
  }

  /// What a pod going away leaves to release once the lock is dropped: its tables whole, so
  /// that nothing it held is freed (and no deinit runs) under the lock.
  struct ReleasedPod {
    var slots: [ProviderKey: Slot] = [:]
    var overrides: [ProviderKey: OverrideRecord] = [:]
    var objects: [AnyObject] = []
    /// The instances with hooks, dependents first.
    var disposals: [CacheEntry] = []
  }

  /// Removes every instance a pod caches, for the pod going away. Every slot of the pod goes,
  /// so only what other pods keep of it is undone one by one: its links to its ancestors'
  /// instances and the "built from" counts it added there. Its children went before it (a
  /// child holds its parent), and their slots with them.
  mutating func release(_ pod: PodRecord) -> ReleasedPod {
    pod.isAlive = false
    if pod === root { noteRootOverrides() }
    pod.parent?.children[pod.id] = nil
    var result = ReleasedPod()
    var hasDisposals = false
    for slot in pod.slots.values {
      // "Built from" both ways within the pod would keep its slots alive in a cycle, and every
      // slot goes: the counts within the pod are dropped whole, so dropping a build's counts
      // on a slot already visited finds nothing, and one not yet visited is emptied anyway.
      slot.dependents.removeAll()
      if let build = slot.build { invalidate(build, released: &result.objects) }
      guard let entry = slot.entry else { continue }
      if let target = slot.linkTarget {
        slot.entry = nil
        slot.linkTarget = nil
        dropDependent(slot, on: target, released: &result.objects)
        continue
      }
      for dependency in entry.dependencies where dependency.pod !== pod {
        dropDependent(slot, on: dependency, released: &result.objects)
      }
      if entry.hasDisposal { hasDisposals = true }
    }
    if hasDisposals {
      let removed = pod.slots.values.compactMap { slot in slot.entry.map { (slot, $0) } }
      result.disposals = Self.dependentsFirst(removed).filter(\.hasDisposal)
    }
    // The slots keep their instances until they are freed, after the lock; `discard` skips
    // them.
    swap(&result.slots, &pod.slots)
    swap(&result.overrides, &pod.overrides)
    pod.scopeMembers = [:]
    pod.familySlots = [:]
    if pod.parent == nil {
      result.objects.append(contentsOf: spareFrames)
      spareFrames = []
    }
    return result
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

  // MARK: Scopes, families and overrides

  /// Discards every instance cached in the given scopes by `pod` and by the pods below it
  /// that do not own the scope; builds running in them go stale.
  mutating func clear(scopes: [ScopeInfo.Visit], in pod: PodRecord, into after: inout Aftermath) {
    var members: [Slot] = []
    for scope in scopes {
      var pending = [pod]
      while let next = pending.popLast() {
        if next !== pod, next.ownedScopes.contains(scope.key) { continue }
        next.scopeEpochs[scope.key, default: 0] += 1
        // Every member goes, so the membership goes whole rather than member by member.
        for key in next.scopeMembers.removeValue(forKey: scope.key) ?? [] {
          if let slot = next.slots[key] { members.append(slot) }
        }
        pending.append(contentsOf: next.children.values.map(\.record))
      }
    }
    discard(members, reason: .scopeCleared, into: &after)
  }

  /// The slots of every member of `family` that `pod` knows: cached, being built, or built
  /// from.
  func members(of family: FamilyInfo, in pod: PodRecord) -> [Slot] {
    (pod.familySlots[family.key] ?? []).compactMap { pod.slots[$0] }
  }

  /// The slots an override of `record`'s provider (or of every member of its family) in
  /// `pod` affects: the provider's own in `pod` (every member's, for a family) and in the pods
  /// below that do not override it themselves, and what those pods share from above that was
  /// built from it, since they now build it differently.
  private func slots(overriddenBy record: OverrideRecord, in pod: PodRecord) -> [Slot] {
    func own(in pod: PodRecord) -> [Slot] {
      if let family = record.family { return members(of: family, in: pod) }
      return pod.slots[record.providerKey].map { [$0] } ?? []
    }
    var result: [Slot] = []
    // Below `pod`, a pod's own override is nearer than this one, for it and the pods below
    // it: its override of a member wins over this family's, its override of the family over
    // this member's. For a family, that holds member by member.
    var pending: [(pod: PodRecord, overriddenMembers: Set<ProviderKey>)] = [(pod, [])]
    while let (next, inherited) = pending.popLast() {
      var overriddenMembers = inherited
      if next !== pod {
        if next.overrides[record.providerKey] != nil { continue }
        if let family = record.provider?.family, next.overrides[family.key] != nil { continue }
        if let family = record.family {
          for other in next.overrides.values where other.provider?.family?.key == family.key {
            overriddenMembers.insert(other.providerKey)
          }
        }
      }
      let slots = own(in: next)
      result.append(
        contentsOf: overriddenMembers.isEmpty
          ? slots : slots.filter { !overriddenMembers.contains($0.key) })
      pending.append(contentsOf: next.children.values.map { ($0.record, overriddenMembers) })
    }
    guard pod.parent != nil else { return result }
    // Follow "built from" out of the ancestors' instances, keeping what lives in this pod or
    // below; other pods' instances are left alone.
    var frontier: [Slot] = []
    var ancestor = pod.parent
    while let next = ancestor {
      frontier.append(contentsOf: own(in: next))
      ancestor = next.parent
    }
    var seen = Set(frontier.map(\.id))
    while let slot = frontier.popLast() {
      for dependent in slot.dependents where seen.insert(dependent.slot.id).inserted {
        let owner = dependent.slot.pod
        if pod.isAncestor(ofOrSameAs: owner) {
          result.append(dependent.slot)
        } else if owner.isAncestor(ofOrSameAs: pod) {
          frontier.append(dependent.slot)
        }
      }
    }
    return result
  }

  mutating func install(
    _ record: OverrideRecord, in pod: PodRecord, into after: inout Aftermath
  ) {
    if let replaced = pod.overrides.updateValue(record, forKey: record.providerKey) {
      after.released.append(replaced)
    }
    if pod === root { noteRootOverrides() }
    after.events.append(ReportedEvent(pod: pod, event: .overridden(provider: record.name)))
    discard(slots(overriddenBy: record, in: pod), reason: .overrideChanged, into: &after)
  }

  mutating func removeOverride(
    _ key: ProviderKey, in pod: PodRecord, into after: inout Aftermath
  ) {
    guard let record = pod.overrides.removeValue(forKey: key) else { return }
    after.released.append(record)
    if pod === root { noteRootOverrides() }
    after.events.append(ReportedEvent(pod: pod, event: .overridden(provider: record.name)))
    discard(slots(overriddenBy: record, in: pod), reason: .overrideChanged, into: &after)
  }

  /// Reports dependencies that will be cleared more often than the instance built from them.
  func captiveDependencies(of entry: CacheEntry, in pod: PodRecord, events: inout [ReportedEvent]) {
    guard entry.scope.kind == .singleton || entry.scope.kind == .custom else { return }
    var seen: Set<SlotID> = []
    for slot in entry.dependencies where seen.insert(slot.id).inserted {
      guard let dependency = slot.entry, dependency.scope.kind == .custom,
        !dependency.scope.subtree.contains(entry.scope.key)
      else { continue }
      events.append(
        ReportedEvent(
          pod: pod,
          event: .captiveDependency(
            holder: entry.provider.name, holderScope: entry.scope.name,
            dependency: dependency.provider.name, dependencyScope: dependency.scope.name)))
    }
  }
}

/// An event and the pod that reports it: in a tree of pods, each reports what it caches.
struct ReportedEvent {
  let pod: PodRecord
  let event: PodEvent
}
