import Dispatch

/// What a resolve does next, decided under the pod's lock and carried out outside it.
enum ResolveStep: Sendable {
  case cached(CacheEntry)
  case cachedObject(UncheckedSendable<AnyObject>)
  /// Another thread is building this instance: wait for it, then look again.
  case wait(DispatchGroup, waitID: Int?)
  /// Run the builder in this frame.
  case build(Frame, override: OverrideRecord?)
  case cycle(String)
  /// The caller's build is over (a context kept past its build), or the caller is not yet
  /// known: look for the build running on this thread or task, and resolve from there.
  case callerFinished
}

extension EngineState {
  /// How many idle frames a pod keeps for reuse: enough for deep chains of nested builds.
  static let spareFrameLimit = 64

  /// Looks `provider` up, and either returns the cached instance, joins the build in
  /// progress, or starts a build (one at a time per cached instance).
  ///
  /// `callerUnknown` is for a resolve through the pod itself: while no build runs anywhere it
  /// cannot be nested in one, so the thread and task are looked at only when one does.
  mutating func step(
    for provider: ProviderInfo, from caller: Frame?, callerUnknown: Bool = false,
    engineID: ObjectIdentifier, reporting: Bool, events: inout [PodEvent],
    released: inout [AnyObject]
  ) -> ResolveStep {
    let key = provider.key
    if callerUnknown, runningBuilds > 0 { return .callerFinished }
    if let caller, !caller.isBuilding { return .callerFinished }
    let existing = slots[key]
    if let slot = existing, let entry = slot.entry {
      if entry.isStrong {
        recordDependency(on: slot, from: caller)
        if reporting { events.append(.reused(provider: provider.name, scope: entry.scope.name)) }
        return .cached(entry)
      }
      if let object = unsafeDowncast(entry, to: WeakEntry.self).object {
        recordDependency(on: slot, from: caller)
        if reporting { events.append(.reused(provider: provider.name, scope: entry.scope.name)) }
        return .cachedObject(UncheckedSendable(value: object))
      }
      // The instance went away by itself: forget it, leaving what was built from it alone
      // (the pod never owned it).
      _ = removeEntry(of: slot, released: &released)
    }
    let override = override(for: provider)
    let scope = override?.scope ?? provider.scope
    if scope.kind == .alwaysCreateNew {
      if let caller {
        if let report = repeatedProviderReport(resolving: provider, from: caller) {
          return .cycle(report)
        }
        // Nothing is cached, so the caller's instance depends on this provider directly, and
        // on whatever this build resolves.
        if caller.owner != nil { recordDependency(on: slot(for: provider), from: caller) }
      }
      return .build(
        makeFrame(engineID: engineID, provider: provider, scope: scope, slot: nil, parent: caller),
        override: override)
    }
    if let running = existing?.build {
      if let caller, running.isAncestor(ofOrSameAs: caller) {
        return .cycle(cycleReport(resolving: provider, from: caller, through: running))
      }
      // A stale build is not joined: its result will not be cached, and this resolve should
      // see the change that made it stale.
      if !isStale(running) {
        var waitID: Int?
        if let caller {
          if let report = crossThreadCycleReport(waiter: caller, target: running) {
            return .cycle(report)
          }
          waitID = registerWait(caller, on: running)
        }
        if let group = running.waiters { return .wait(group, waitID: waitID) }
        let group = DispatchGroup()
        group.enter()
        running.waiters = group
        return .wait(group, waitID: waitID)
      }
    }
    let slot = existing ?? slot(for: provider)
    let frame = makeFrame(
      engineID: engineID, provider: provider, scope: scope, slot: slot, parent: caller)
    slot.build = frame
    return .build(frame, override: override)
  }

  mutating func registerWait(_ caller: Frame?, on target: Frame) -> Int? {
    guard let caller else { return nil }
    nextWaitID += 1
    waits[nextWaitID] = Wait(waiter: caller, target: target)
    return nextWaitID
  }

  private mutating func makeFrame(
    engineID: ObjectIdentifier, provider: ProviderInfo, scope: ScopeInfo, slot: Slot?,
    parent: Frame?
  ) -> Frame {
    let frame = spareFrames.popLast() ?? Frame(engineID: engineID)
    let epoch = scope.kind == .singleton || slot == nil ? 0 : scopeEpochs[scope.key] ?? 0
    frame.begin(info: provider, scope: scope, slot: slot, parent: parent, scopeEpoch: epoch)
    runningBuilds += 1
    return frame
  }

  /// Records a finished build: caches its entry unless it went stale while it ran, and keeps
  /// the frame for reuse if nothing else holds it. Returns the waiters to release once the
  /// lock is dropped.
  mutating func finish(
    _ frame: inout Frame, entry: CacheEntry?, caller: Frame?, reporting: Bool,
    events: inout [PodEvent], released: inout [AnyObject]
  ) -> DispatchGroup? {
    runningBuilds -= 1
    let caller = caller?.isBuilding == true ? caller : nil
    let stale = isStale(frame)
    frame.end()
    if reporting {
      events.append(.built(provider: frame.info.unsafelyUnwrapped.name, scope: frame.scope!.name))
    }
    var waiters: DispatchGroup?
    // An always-new build recorded its dependencies on its owner as it went.
    if frame.caches, let slot = frame.slot {
      if slot.build === frame { slot.build = nil }
      waiters = frame.waiters
      var dependencies: [ProviderKey: Slot] = [:]
      swap(&dependencies, &frame.dependencies)
      if stale || !isAlive {
        // Hand the value to this caller only, and make sure nothing caches it inside.
        dropDependent(slot.key, from: dependencies, released: &released)
        if let entry { released.append(entry) }
        if stale { caller?.owner?.invalidate() }
      } else if let entry {
        entry.dependencies = dependencies
        _ = removeEntry(of: slot, released: &released)
        slot.entry = entry
        // Singletons are never cleared, so they need no membership.
        if entry.scope.kind != .singleton {
          scopeMembers[entry.scope.key, default: []].insert(slot.key)
        }
        if reporting { captiveDependencies(of: entry, events: &events) }
        recordDependency(on: slot, from: caller)
      } else {
        // A weak-scope value that is not an object is not cached: what it was built from now
        // belongs to whoever asked for it.
        if let owner = caller?.owner {
          for dependency in dependencies.values { recordDependency(on: dependency, from: owner) }
        }
        dropDependent(slot.key, from: dependencies, released: &released)
        recordDependency(on: slot, from: caller)
      }
      pruneIfUnused(slot, released: &released)
    }
    if isAlive, spareFrames.count < Self.spareFrameLimit, isKnownUniquelyReferenced(&frame) {
      frame.reset()
      spareFrames.append(frame)
    }
    return waiters
  }
}
