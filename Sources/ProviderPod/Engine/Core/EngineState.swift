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
  /// Discards made in the tree so far: each marks the slots it reaches with its number.
  var discards = 0
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
  let threadBuildGate: ThreadBuildGate
  /// The async cleanups that discards and shutdowns of the tree started, until each ends: a
  /// shutdown awaits those started before it (see `EngineState+Shutdown.swift`).
  var runningCleanups = [Int: Completion]()
  var nextCleanupID = 0
  #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
    /// When the automatic check of the bookkeeping runs next, and what it has cost so far.
    var invariantChecks = InvariantChecks()
  #endif

  init(root: PodRecord) {
    self.root = root
    self.threadBuildGate = root.gate
    noteRootOverrides()
  }

  /// Tells the gate whether the root's builds need the general path, after any change to its
  /// overrides or its life.
  func noteRootOverrides() {
    threadBuildGate.rootNeedsLookups(!root.overrides.isEmpty || !root.isAlive)
  }

  /// Lists `pod` among its parent's children, where clears, overrides and shutdowns of the
  /// parent find it, if it is not there yet, with any ancestor that is not either. Called by
  /// every locked operation that may leave something in the pod (a resolve, a change, a
  /// watcher, a shutdown) before it looks at the pod: a child is made without the lock, and
  /// joins its tree here, at its first use. Until then a walk from its parent would find
  /// nothing in it, and a child let go of unused leaves without taking the lock at all.
  @inline(__always)
  mutating func join(_ pod: PodRecord) {
    if !pod.isJoined { joinWithAncestors(pod) }
  }

  @inline(never)
  private mutating func joinWithAncestors(_ pod: PodRecord) {
    // Mostly a request's pod, whose parent (the app's) has long joined: no list to make.
    if pod.parent?.isJoined ?? true { return adopt(pod) }
    // Ancestors first, so that a shutdown that reached one of them reaches its children too.
    var pending: [PodRecord] = []
    var next: PodRecord? = pod
    while let current = next, !current.isJoined {
      pending.append(current)
      next = current.parent
    }
    for child in pending.reversed() { adopt(child) }
  }

  /// Lists a child pod among its parent's children. Not owned: the child removes itself when
  /// it goes away.
  private mutating func adopt(_ child: PodRecord) {
    child.isJoined = true
    // A child of a pod that was shut down is shut down as it joins, whether it was made
    // before the shutdown or after: it would share nothing.
    if let parent = child.parent, parent.shutdown != nil {
      child.shutdown = parent.shutdown
      child.isAlive = false
      return
    }
    child.addToParent()
  }

  /// Forgets a wait once the thread that waited is awake.
  mutating func endWait(_ id: Int) {
    waits[id] = nil
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

  mutating func slot(
    for info: ProviderInfo, in pod: PodRecord, released: inout [AnyObject]
  ) -> Slot {
    if let slot = pod.slots[info.key] { return slot }
    return addSlot(for: info, in: pod, released: &released)
  }

  /// A new slot for a provider the pod has none for. The pod that gets the slot is the one
  /// swept, whichever pod the resolve went through: a child's resolves make slots in its
  /// ancestors, which may never be resolved through themselves.
  mutating func addSlot(
    for info: ProviderInfo, in pod: PodRecord, released: inout [AnyObject]
  ) -> Slot {
    if pod.slots.count >= pod.nextSlotSweep {
      sweepSlotsOfGoneProviders(in: pod, released: &released)
    }
    let slot = Slot(info, in: pod)
    // A request's child pod holds a few slots: room for them at once, not by three regrowths.
    if pod.slots.capacity == 0 { pod.slots = EmptyTables.slots.value }
    pod.slots[info.key] = slot
    if let family = info.family { pod.familySlots[family.key, default: []].insert(info.key) }
    return slot
  }

  /// Drops the kept, empty slots of providers that no longer exist: a provider made at run
  /// time (in a loop, per screen) that a long-lived pod cached and then discarded would
  /// otherwise leave its slot behind for the pod's life, since no resolve can reach it again.
  /// Runs when the table has grown to twice its size after the last sweep, so it costs
  /// amortised constant time per slot added; a pod whose providers are globals stops growing
  /// and never sweeps. The slots go to `released`, to be freed after the lock.
  mutating func sweepSlotsOfGoneProviders(in pod: PodRecord, released: inout [AnyObject]) {
    var gone: [ProviderKey] = []
    for (key, slot) in pod.slots where slot.isKept && slot.isUnused && slot.info.owner == nil {
      gone.append(key)
    }
    for key in gone {
      if let slot = pod.slots.removeValue(forKey: key) { released.append(slot) }
    }
    pod.nextSlotSweep = max(1_024, 2 * pod.slots.count)
  }

  /// Drops the slot once nothing is cached, built or recorded in it, unless the pod keeps it
  /// (see `Slot`).
  mutating func pruneIfUnused(_ slot: Slot, released: inout [AnyObject]) {
    let pod = slot.pod
    guard !slot.isKept, slot.isUnused, let index = pod.slots.index(forKey: slot.key),
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
    // Room for a few at once: the list is handed to the cached instance, so every build starts
    // with none, and growing one by one allocated twice for two dependencies.
    if owner.dependencies.capacity == 0 { owner.dependencies.reserveCapacity(4) }
    owner.dependencies.append(slot)
    addDependent(dependent, on: slot)
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

  func addDependent(_ dependent: Slot, on slot: Slot) {
    slot.dependents.add(dependent)
  }

  /// Makes `link`, a child's slot, share `target`'s instance (an ancestor's): it holds a copy
  /// of the entry for the child's cached reads and watchers, and counts among `target`'s
  /// dependents, so discarding the ancestor's instance empties the link too. The one place a
  /// link is made.
  func link(_ link: Slot, to target: Slot) {
    if link.isPublished { link.unpublish() }
    link.entry = target.entry
    link.linkTarget = target
    addDependent(link, on: target)
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
  @inline(__always)
  mutating func removeEntry(of slot: Slot, released: inout [AnyObject]) -> CacheEntry? {
    // Before the entry is read: with a call between the read and the write, the entry would be
    // copied (three retains and releases) rather than moved out.
    if slot.isPublished { slot.unpublish() }
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
    if slot.memberIndex >= 0 { slot.pod.removeMember(slot, of: entry.scope.key) }
    if !entry.dependencies.isEmpty {
      dropDependent(slot, from: entry.dependencies, released: &released)
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
}

/// An event and the pod that reports it: in a tree of pods, each reports what it caches.
struct ReportedEvent {
  let pod: PodRecord
  let event: PodEvent
}
