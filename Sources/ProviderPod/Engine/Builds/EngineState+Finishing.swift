import Dispatch

/// The end of a build, decided under the lock: where its instance lives in a tree of pods,
/// whether it is cached (not when a change made it stale meanwhile), what it was built from,
/// and which waiters to wake. The caller wakes them and releases what is returned after the
/// lock.
extension EngineState {
  /// The pod a build placed in `slot` caches its instance in: the deepest of the slot's pod
  /// and the pods that own what it was built from.
  @inline(__always)
  static func home(placedIn slot: Slot, builtFrom dependencies: [Slot]) -> PodRecord {
    var home = slot.pod
    for dependency in dependencies where dependency.pod.depth > home.depth {
      home = dependency.pod
    }
    return home
  }

  /// Records a finished build: caches its entry unless it went stale while it ran, and keeps
  /// the frame for reuse if nothing else holds it. Returns the waiters to release once the
  /// lock is dropped.
  ///
  /// The instance is cached in the shallowest pod where nothing it was built from is
  /// shadowed: the pod the build was placed in, or the deepest pod among those that own what
  /// it was built from. An instance first built through a child that turned out to need
  /// nothing of the child's is so shared with the child's parent and siblings.
  mutating func finish(
    _ frame: inout Frame, entry: consuming CacheEntry?, caller givenCaller: Frame?, reporting: Bool,
    events: inout [ReportedEvent], released: inout [AnyObject]
  ) -> DispatchGroup? {
    // A build begun in a shared section was never counted (see `EngineState+SharedSections`).
    if !frame.startedShared { runningBuilds -= 1 }
    // Finished here, its reads of the root are recorded there as any build's are.
    if frame.readsUnrecorded { Self.recordUnrecordedReads(of: frame) }
    if frame.isListedRunning { listedRunning.remove(frame) }
    // A caller whose build ended meanwhile records nothing. Tested, not copied into a local
    // of its own: the copy retained the caller and released it after.
    let callerBuilds = givenCaller?.isBuilding == true
    var stale = isStale(frame)
    let failed = frame.phase == .failed
    frame.end()
    var waiters: DispatchGroup?
    // An always-new build recorded its dependencies on its owner as it went.
    if frame.caches, let slot = frame.slot {
      if slot.build === frame { slot.build = nil }
      waiters = frame.waiters
      var dependencies: [Slot] = []
      swap(&dependencies, &frame.dependencies)
      let home = Self.home(placedIn: slot, builtFrom: dependencies)
      let homeSlot =
        home === slot.pod ? slot : self.slot(for: slot.info, in: home, released: &released)
      // Moved below the pod it was placed in: a clear of its scope in the pod it went
      // through, while it ran, makes it stale there too.
      if home !== slot.pod, let scope = frame.clearableScope, let requester = frame.pod,
        (requester.scopeEpochs[scope] ?? 0) != frame.requesterScopeEpoch
      {
        stale = true
      }
      // Moved below, it must hold there: a pod on the way that came to shadow something the
      // build read earlier from above (an override added while it ran) would cache an
      // instance built partly from what that pod no longer uses.
      if !stale, home !== slot.pod,
        dependencies.contains(where: {
          $0.pod !== home && shadowsSince($0, from: home, below: $0.pod)
        })
      {
        stale = true
      }
      if reporting {
        events.append(
          ReportedEvent(
            pod: home,
            event: .built(provider: slot.info.name, scope: frame.scope!.name)))
      }
      if stale || !home.isAlive || (homeSlot !== slot && homeSlot.entry != nil) {
        // Hand the value to this caller only, and make sure nothing caches it inside, nor
        // anything that will take the caller's value (see `invalidate`). A builder that
        // threw handed its caller an error instead, made from nothing stale.
        dropDependent(slot, from: dependencies, released: &released)
        if let entry { released.append(entry.holder) }
        if !failed, callerBuilds, let owner = givenCaller?.owner {
          invalidate(owner, released: &released)
        }
      } else {
        if homeSlot !== slot {
          // Count the home slot first: a slot with no instance of its own (an always-new
          // provider's) would otherwise be pruned as unused in between.
          for dependency in dependencies { addDependent(homeSlot, on: dependency) }
          dropDependent(slot, from: dependencies, released: &released)
        }
        // Taken out of the parameter and consumed into the slot, which completes it there: a
        // copy (a binding lives to the end of its scope, so storing it without `consume`
        // copied it) retained what the entry holds under the lock and released it after.
        if let entry = entry.take() {
          _ = removeEntry(of: homeSlot, released: &released)
          if homeSlot.isPublished { homeSlot.unpublish(in: threadBuildGate.words) }
          let scopeKind = entry.scopeKind(of: slot.info)
          let scopeKey = entry.scopeKey(of: slot.info)
          homeSlot.cache(consume entry, builtFrom: consume dependencies)
          if slot.info.family == nil { homeSlot.isKept = true }
          // Singletons are never cleared, so they need no membership.
          if scopeKind != .singleton { home.addMember(homeSlot, of: scopeKey) }
          if reporting {
            Self.captiveDependencies(of: homeSlot.entry!, cachedIn: homeSlot, events: &events)
          }
          if callerBuilds { recordDependency(on: homeSlot, from: givenCaller) }
          // A caller in a pod below may have come to shadow what the instance was built
          // from while it was built (an override added meanwhile): it gets the value, but
          // must not be cached from it.
          let requester = frame.pod!
          let requesterShadows =
            requester !== home && shadowsSince(homeSlot, from: requester, below: home)
          if callerBuilds, let callerPod = givenCaller?.pod, callerPod !== home,
            callerPod === requester
              ? requesterShadows : shadowsSince(homeSlot, from: callerPod, below: home),
            let owner = givenCaller?.owner
          {
            invalidate(owner, released: &released)
          }
          // The pod the build went through shares the instance from now on: link it there,
          // as a later resolve would, so that its watchers see the instance as cached.
          if requester !== home, !requesterShadows, requester.isAlive,
            home.isAncestor(ofOrSameAs: requester),
            requester.slots[slot.key].map({ $0.entry == nil && $0.build == nil }) ?? true
          {
            link(self.slot(for: slot.info, in: requester, released: &released), to: homeSlot)
          }
        } else {
          // A weak-scope value that is not an object is not cached: what it was built from
          // now belongs to whoever asked for it.
          if callerBuilds, let owner = givenCaller?.owner {
            for dependency in dependencies { recordDependency(on: dependency, from: owner) }
          }
          dropDependent(homeSlot, from: dependencies, released: &released)
          if callerBuilds { recordDependency(on: homeSlot, from: givenCaller) }
        }
      }
      pruneIfUnused(slot, released: &released)
      if homeSlot !== slot { pruneIfUnused(homeSlot, released: &released) }
    } else if reporting {
      events.append(
        ReportedEvent(
          pod: frame.pod!,
          event: .built(
            provider: frame.info!.name,
            scope: frame.scope!.name)))
    }
    recycle(&frame)
    return waiters
  }

  private mutating func recycle(_ frame: inout Frame) {
    frame.forgetBuild()
    if root.isAlive, spareFrames.count < Self.spareFrameLimit, isKnownUniquelyReferenced(&frame) {
      frame.reset()
      spareFrames.append(frame)
    }
  }
}
