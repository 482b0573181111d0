internal import CProviderPod

/// A request pod's own work beside other requests': the shared side of the tree's lock.
///
/// A server's request pods are children of its app's pod, so they all share one tree and one
/// lock, and taking that lock several times per request was what kept request pods from
/// running faster on two cores than on one. The common work of a request pod (building an
/// instance in a scope it owns, reading the app's cached instances from that build, caching
/// the result, going away) touches almost nothing another request touches, so it runs in a
/// *shared section* (`Locked.withShared`), which request pods on other threads hold at the same
/// time. Every other operation, and this work whenever any condition below fails, runs in the
/// exclusive section it always did, whose code is unchanged: an exclusive section waits until
/// no shared section runs and keeps new ones out.
///
/// **What a shared section may read and write.** It may read anything only exclusive sections
/// write: the tree's counters and watchers, the root pod's slots, entries, overrides and life,
/// and the request pod's parent, owned scopes and children; and, under the pod's lock, the
/// request pod's own tables, overrides included (its release in a shared section takes them
/// away). It writes:
/// - the request pod's own record, slots and the frames of its builds, under the pod's lock
///   (`pp_pod_lock`, a stripe chosen by the pod's address), which every shared section of the
///   pod holds from its first read of the pod to its last write;
/// - the root's list of children of the pod's stripe, as the pod joins and leaves it, and the
///   links of its neighbours there, under the same lock: every pod in that list has the same
///   stripe (`PodRecord+Children`). So requests on other stripes write nothing of it;
/// - in the root pod, only the "built from" records of its slots (`dependents`, `recordedBy`)
///   for a build that an exclusive section recorded a read of the root for already, under the
///   tree's crossing lock (`pp_crossing_lock`), taken inside the pod's lock for a few
///   instructions; exclusive sections write them without it, since none runs beside a shared
///   section. Every other read of the root's instances is noted on the request's side only
///   (`EngineState+UnrecordedReads`), and a request with only such reads takes the crossing
///   lock neither as it begins nor as it goes;
/// - nothing of the tree's own state: a build begun here draws its serial from its thread
///   (`pp_shared_serial`), is not counted in `runningBuilds` (a resolve through the pod from
///   inside it is seen on the thread's own stack, which is what a synchronous build needs), and
///   takes its frame from its thread's idle frames and gives it back there.
///
/// Only a child of the root pod runs shared sections, and only when nothing watches instances
/// in the tree and no async build runs (an observer's events are collected as the exclusive
/// side collects them, and reported after the section): each section checks everything it
/// relies on before it writes anything, and returns nil, having changed nothing, for the
/// exclusive section to do the work instead.
extension EngineState {
  /// `step` for a resolve through `pod` or from one of its builds, in a shared section: the
  /// cached instance (the pod's own, or the root's for a build of the pod), or a frame for a
  /// build of an instance in a scope the pod owns. Nil where `step` must decide. `root` is the
  /// tree's root, given rather than read from `pod.parent` (see `PodRecord.treeRoot`).
  static func sharedStep(
    for provider: ProviderInfo, in pod: PodRecord, root: PodRecord, from caller: Frame?,
    callerUnknown: Bool, treeID: ObjectIdentifier, tree: SharedTree,
    events: inout [ReportedEvent]?, released: inout [AnyObject]
  ) -> ResolveStep? {
    guard pod.parent === root, tree.mayRun(in: pod, root: root) else { return nil }
    // A resolve through the pod itself may be nested in a build that only the exclusive side
    // looks for: one on this thread, or one of an exclusive section anywhere.
    if callerUnknown, tree.runningBuilds > 0 || ThreadRecord.isBuilding { return nil }
    guard provider.family == nil, !provider.valueIsOutcome else { return nil }
    pod.lockSharedSections()
    defer { pod.unlockSharedSections() }
    // Under the pod's lock: a shared section of the same pod going away (its `Pod` let go of
    // while a context kept past a build resolves through it) takes the pod's overrides away.
    // An override of the request pod's own (the request's data, given with `withValue:`) is
    // built and cached in the pod, as an instance of a scope it owns is; one of the root's
    // applies to the pods below it too, and is the exclusive side's.
    let applied = pod.override(for: provider, childOf: root)
    if let applied, applied.pod !== pod || applied.record.family != nil { return nil }
    let override = applied?.record
    // The scope goes on as an argument, read from where it is a constant: bound to a local, it
    // was retained and released, a write to a description every request on every core shares.
    if override == nil {
      return sharedStep(
        for: provider, scope: provider.scope, override: nil, in: pod, root: root, from: caller,
        treeID: treeID, tree: tree, events: &events, released: &released)
    }
    return sharedStep(
      for: provider, scope: override!.scope, override: override, in: pod,
      root: root, from: caller, treeID: treeID, tree: tree, events: &events, released: &released)
  }

  /// The rest of `sharedStep`, once the scope the provider is built in is known (its own, or
  /// its override's in `pod`). Under the pod's lock.
  private static func sharedStep(
    for provider: ProviderInfo, scope: ScopeInfo, override: OverrideRecord?, in pod: PodRecord,
    root: PodRecord, from caller: Frame?, treeID: ObjectIdentifier, tree: SharedTree,
    events: inout [ReportedEvent]?, released: inout [AnyObject]
  ) -> ResolveStep? {
    guard scope.kind == .singleton || scope.kind == .custom,
      !scope.requiresOwningPod || pod.ownsInChain(scope.key)
    else { return nil }
    var owner: Frame?
    if let caller {
      // The build that records what it resolves must be one of this pod's own, which this
      // pod's lock guards; a thread build or one placed in the root is the exclusive side's.
      guard caller.isBuilding, !caller.isThreadBuild, let recorder = caller.owner,
        recorder.phase == .running, recorder.slot?.pod === pod
      else { return nil }
      owner = recorder
    }
    guard pod.isAlive, pod.shutdown == nil else { return nil }
    let existing = pod.slots[provider.key]
    if let existing {
      guard existing.build == nil else { return nil }
      if existing.entry != nil {
        // A resolve through the pod itself publishes what it finds, unless the pod is
        // observed (each read is reported): the exclusive side's.
        guard owner != nil || events != nil, let held = existing.heldStrongValue else {
          return nil
        }
        let target = existing.linkTarget ?? existing
        events?.append(reused(existing, of: target))
        if let owner {
          guard recordShared(handingOver: target, by: owner, in: pod, root: root, tree: tree)
          else { return nil }
        }
        return .cached(held)
      }
    }
    if override != nil || pod.ownedScopes.contains(scope.key) {
      // A pod joins the root's list of its stripe, which only the exclusive side makes.
      guard pod.isJoined || root.stripedChildren != nil else { return nil }
      return beginShared(
        provider, override: override, scope: scope, in: pod, slot: existing, caller: caller,
        treeID: treeID, tree: tree, released: &released)
    }
    // Shared from the root: read from a build, with no link here (as `step` does).
    guard existing == nil, let owner, let target = root.slots[provider.key],
      target.build == nil, let found = target.unretainedValue,
      shallowestShadowing(target, from: pod, below: root) == nil
    else { return nil }
    // An observed pod's events are reported after the section: its value is taken out
    // retained, as the exclusive side does.
    let held = events == nil ? nil : target.heldStrongValue
    events?.append(reused(target, of: target))
    guard recordShared(handingOver: target, by: owner, in: pod, root: root, tree: tree) else {
      return nil
    }
    if let held { return .cached(held) }
    // The section stays open until the caller has copied the value (`SectionRead`): nothing on
    // this path may add to `released`, whose deinits would then run inside it.
    return .borrowed(found)
  }

  /// Records that `owner` (a running build of `pod`) depends on `slot`, in `pod` or the root,
  /// as `recordDependency` does, the caller's reference to `slot` becoming the build's. False,
  /// recording nothing, for a root slot whose record the exclusive side must make.
  private static func recordShared(
    handingOver slot: consuming Slot, by owner: Frame, in pod: PodRecord, root: PodRecord,
    tree: SharedTree
  ) -> Bool {
    if slot.pod === pod {
      recordDependency(handingOver: slot, from: owner)
      return true
    }
    // A slot of the root that no build of a child read through an exclusive section yet is
    // read there first, which lets the shared sections read it unrecorded from then on: a
    // discard of the root's instances looks for such reads only where they can be.
    guard slot.pod === root, slot.sharesUnrecorded else { return false }
    // Only a list short enough to be searched for a repeat takes unrecorded reads: past it, a
    // repeat would be listed again on every read (a builder reading an app singleton in a loop
    // grew its instance's list by one each time), while `recordedBy` keeps it out there.
    if owner.dependencies.count <= unrecordedReadsSearched, mayReadUnrecorded(by: owner, in: pod) {
      recordUnrecordedRead(of: slot, by: owner, in: pod)
      return true
    }
    pp_crossing_lock(tree.words)
    // Its marked reads are counted first, as an exclusive section's read would (see
    // `EngineState+UnrecordedReads`): written under the crossing lock, as any record here.
    if owner.readsUnrecorded { recordUnrecordedReads(of: owner) }
    recordDependency(handingOver: slot, from: owner)
    pp_crossing_unlock(tree.words)
    return true
  }

  /// Begins a build of `provider` in `pod`, which owns its scope: as `step` does, with a frame
  /// from the thread's idle ones and a serial of the thread's.
  private static func beginShared(
    _ provider: ProviderInfo, override: OverrideRecord?, scope: ScopeInfo, in pod: PodRecord,
    slot existing: Slot?, caller: Frame?, treeID: ObjectIdentifier, tree: SharedTree,
    released: inout [AnyObject]
  ) -> ResolveStep {
    if !pod.isJoined {
      // `join` for a child of the root, which has always joined and is not shut down: in
      // the root's list of the pod's stripe, whose pods take the lock held here.
      pod.isJoined = true
      pod.addToParent()
    }
    let slot = existing ?? addSlot(for: provider, in: pod, released: &released)
    let frame = ThreadRecord.current.takeSpare(treeID: treeID)
    frame.treeID = treeID
    let epoch = scope.kind == .singleton ? 0 : pod.scopeEpochs[scope.key] ?? 0
    frame.begin(
      info: provider, override: override.map(ObjectIdentifier.init), scope: scope, slot: slot,
      pod: pod, parent: caller, scopeEpoch: epoch, serial: pp_shared_serial())
    frame.startedShared = true
    slot.build = frame
    return .build(frame, override: override)
  }

  /// `finish` for a build begun in a shared section, in one: caches its entry in its slot, in
  /// its own pod, when nothing made the build stale, nobody waits for it and everything it was
  /// built from is the pod's or the root's. False, changing nothing, where `finish` must
  /// decide.
  static func sharedFinish(
    _ frame: inout Frame, entry: inout CacheEntry?, caller: Frame?, root: PodRecord,
    tree: SharedTree, events: inout [ReportedEvent]?, released: inout [AnyObject]
  ) -> Bool {
    guard let pod = frame.pod, pod.parent === root, tree.mayRun(in: pod, root: root) else {
      return false
    }
    pod.lockSharedSections()
    defer { pod.unlockSharedSections() }
    let caller = caller?.isBuilding == true ? caller : nil
    guard frame.phase == .running, frame.waiters == nil, frame.asyncBuild == nil,
      !isStale(frame), let slot = frame.slot, slot.pod === pod, slot.build === frame,
      slot.entry == nil, !slot.isPublished, pod.isAlive, pod.shutdown == nil,
      entry?.isStrong == true,
      frame.dependencies.allSatisfy({ $0.pod === pod || $0.pod === root })
    else { return false }
    // The caller records the instance as one of its own dependencies: it must be this pod's.
    if let caller {
      guard !caller.isThreadBuild, let owner = caller.owner, owner.slot?.pod === pod else {
        return false
      }
    }
    let memberScope = frame.memberScope
    let readsUnrecorded = frame.readsUnrecorded
    frame.end()
    slot.build = nil
    var dependencies: [Slot] = []
    swap(&dependencies, &frame.dependencies)
    // Moved into the slot, and read there: a copy would retain its scope, which every
    // request shares.
    slot.cache(entry.take()!, builtFrom: consume dependencies)
    if events != nil {
      let scope = slot.entry!.scope(of: slot.info).name
      events!.append(
        ReportedEvent(pod: pod, event: .built(provider: slot.info.name, scope: scope)))
      captiveDependencies(of: slot.entry!, cachedIn: slot, events: &events!)
    }
    slot.isKept = true
    if readsUnrecorded { slot.readsUnrecorded = true }
    if let memberScope { pod.addMember(slot, of: memberScope) }
    recordDependency(on: slot, from: caller)
    frame.forgetBuild()
    if isKnownUniquelyReferenced(&frame) {
      frame.reset()
      ThreadRecord.current.keepSpare(frame)
    }
    return true
  }

  /// `release` of a request pod going away, in a shared section: nil where `release` must do
  /// it (the pod has children, a build still running, a published instance, or "built from"
  /// records in a root slot that could then be pruned).
  static func sharedRelease(
    _ pod: PodRecord, root: PodRecord, tree: SharedTree
  ) -> ReleasedPod? {
    guard pod.parent === root, tree.mayRun(in: pod, root: root) else { return nil }
    pod.lockSharedSections()
    defer { pod.unlockSharedSections() }
    pod.forgetOwnerAddress()
    guard pod.firstChild == nil else { return nil }
    var result = ReleasedPod()
    if pod.shutdown != nil {
      // Shut down before: its instances went then, and what is left is its empty slots.
      guard pod.slots.allSatisfy({ $0.entry == nil && $0.build == nil }) else {
        return nil
      }
      for slot in pod.slots { slot.dependents.removeAll() }
      handOver(pod, hasDisposals: false, to: &result)
      return result
    }
    guard pod.isAlive, let hasDisposals = detachable(pod, root: root) else { return nil }
    pod.isAlive = false
    detach(pod, tree: tree)
    handOver(pod, hasDisposals: hasDisposals, to: &result)
    return result
  }

  /// `beginShutdown` of a request pod, in a shared section: its instances taken out, its
  /// cleanups planned and, when there are any, listed among the tree's running ones. Nil where
  /// `beginShutdown` must do it (as for `sharedRelease`, or the pod was shut down already, or
  /// a build of another pod runs from one of its instances).
  /// The pod's slots come back in `released`, to be freed after the section.
  static func sharedShutdown(
    of pod: PodRecord, root: PodRecord, progress: ShutdownProgress, tree: SharedTree,
    cleanups: RunningCleanups, events: inout [ReportedEvent], released: inout ReleasedPod
  ) -> ShutdownStart? {
    guard pod.parent === root, tree.mayRun(in: pod, root: root) else { return nil }
    pod.lockSharedSections()
    defer { pod.unlockSharedSections() }
    guard pod.isAlive, pod.shutdown == nil, pod.firstChild == nil,
      detachable(pod, root: root) != nil, !feedsBuildElsewhere(pod)
    else { return nil }
    var owned: [(slot: Slot, entry: CacheEntry)] = []
    for slot in pod.slots where slot.linkTarget == nil {
      guard let entry = slot.entry else { continue }
      owned.append((slot, entry))
      // As `discard` reports each instance it takes out.
      if pod.hasObserver {
        events.append(
          ReportedEvent(
            pod: pod,
            event: .discarded(
              provider: slot.info.name, scope: entry.scope(of: slot.info).name,
              reason: .podShutDown)))
      }
    }
    let plan = CleanupPlan(owned)
    owned = []
    // A pod shut down before its first use never joined: it must not join later.
    pod.isJoined = true
    pod.shutdown = progress
    pod.isAlive = false
    detach(pod, tree: tree)
    // Its overrides stay, as they do in a pod shut down by `beginShutdown`; the rest of its
    // tables go with their instances.
    swap(&released.slots, &pod.slots)
    swap(&released.scopeMembers, &pod.scopeMembers)
    swap(&released.familySlots, &pod.familySlots)
    return start(plan, of: pod, listedIn: cleanups)
  }

  /// Whether a build outside `pod` runs from one of its instances: an app singleton first
  /// resolved through the pod is built in the root, and may read the pod's own instances
  /// before it is placed there. The exclusive side's discard stops such a build (it reports it
  /// as the root's, and other threads start their own rather than wait for it); taking the
  /// instances out here would leave it running from them.
  private static func feedsBuildElsewhere(_ pod: PodRecord) -> Bool {
    for slot in pod.slots where !slot.dependents.isEmpty {
      for dependent in slot.dependents where dependent.slot.pod !== pod { return true }
    }
    return false
  }

  /// Whether the instances of `pod`, a child of `root` with no children, can be taken out in a
  /// shared section, and if so whether any has a hook: nil for a build still running, a
  /// published instance, or an instance linked to or built from a root slot that could then
  /// be pruned (the exclusive side's).
  @inline(__always)
  private static func detachable(_ pod: PodRecord, root: PodRecord) -> Bool? {
    var hasDisposals = false
    for slot in pod.slots {
      guard slot.build == nil, !slot.isPublished else { return nil }
      if let target = slot.linkTarget {
        guard target.pod === root, target.isKept else { return nil }
      } else if slot.entry != nil {
        // Read where it is: a copy of the entry would retain its scope, and a loop over the
        // list each app slot in it, which every request shares.
        let builtFromRoot = slot.entry!.dependencies.allLent { dependency in
          dependency.pod === pod || (dependency.pod === root && dependency.isKept)
        }
        guard builtFromRoot else { return nil }
        if slot.entry!.hasDisposal { hasDisposals = true }
      }
    }
    return hasDisposals
  }

  /// Takes `pod` out of the root's children (its stripe's list, under the pod's lock), and
  /// its slots out of the root's "built from" records, under the crossing lock, taken only
  /// if it has any there (a request whose reads of the root were unrecorded has none); then
  /// drops the records among its own slots, which would keep them alive in a cycle, and the
  /// copies its links hold. Out of line: inlined into `sharedRelease` and `sharedShutdown`, it
  /// cost a request's pod 56 instructions more.
  @inline(never)
  private static func detach(_ pod: PodRecord, tree: SharedTree) {
    pod.removeFromParent()
    if hasRecordsInRoot(pod) {
      pp_crossing_lock(tree.words)
      for slot in pod.slots {
        if let target = slot.linkTarget {
          _ = target.dependents.removeOne(slot)
        } else if slot.entry != nil, !slot.readsUnrecorded {
          // Lent by the list, as `detachable` reads it.
          _ = slot.entry!.dependencies.allLent { dependency in
            if dependency.pod !== pod { _ = dependency.dependents.removeOne(slot) }
            return true
          }
        }
      }
      pp_crossing_unlock(tree.words)
    }
    for slot in pod.slots {
      slot.dependents.removeAll()
      if slot.linkTarget != nil {
        slot.entry = nil
        slot.linkTarget = nil
      }
    }
  }
}

extension EngineState {
  /// Whether a slot of `pod`, a child of the root going away, is counted in a slot of the
  /// root: a link, or an instance whose reads of the root were recorded there.
  @inline(__always)
  fileprivate static func hasRecordsInRoot(_ pod: PodRecord) -> Bool {
    for slot in pod.slots {
      if slot.linkTarget != nil { return true }
      if slot.entry != nil, !slot.readsUnrecorded {
        let ownOnly = slot.entry!.dependencies.allLent { $0.pod === pod }
        if !ownOnly { return true }
      }
    }
    return false
  }
}

/// What a shared section knows of the tree's own state, read as it begins: only exclusive
/// sections change it. The section's functions are static, reading the state through this
/// rather than through `self`: a shared section cannot borrow the state in place, and a copy of
/// it would retain everything it holds.
struct SharedTree {
  /// Builds of exclusive sections running in the tree (`EngineState.runningBuilds`).
  let runningBuilds: Int
  /// Whether instance watchers or retry back-offs are registered in the tree.
  let isWatched: Bool
  /// The tree's words, with the crossing lock (the pod record's `treeWords`). A pointer, valid
  /// while the section runs: the section runs inside a call on the pod's engine, whose record
  /// keeps the root's, which holds the gate the words live in (see `PodRecord.swift`).
  let words: UnsafeMutablePointer<pp_tree_words>

  /// Whether `pod` may work in a shared section now: a child of the live root `root`, with
  /// no watcher and no async build in the tree (both are the exclusive side's to notice).
  @inline(__always)
  func mayRun(in pod: PodRecord, root: PodRecord) -> Bool {
    root.parent == nil && root.isAlive && root.shutdown == nil && !isWatched
      && !ThreadBuildGate.hasAsyncBuilds(in: words)
  }
}

extension PodRecord {
  /// Takes the lock of this pod's shared sections (see `EngineState+SharedSections`).
  @inline(__always)
  func lockSharedSections() {
    pp_pod_lock(UInt(bitPattern: ObjectIdentifier(self)))
  }

  @inline(__always)
  func unlockSharedSections() {
    pp_pod_unlock(UInt(bitPattern: ObjectIdentifier(self)))
  }
}
