import Dispatch

/// What a resolve does next, decided under the pod's lock and carried out outside it.
enum ResolveStep: Sendable {
  case cached(CacheEntry)
  case cachedObject(UncheckedSendable<AnyObject>)
  /// Another thread is building this instance: wait for it, then look again.
  case wait(DispatchGroup, waitID: Int?)
  /// Run the builder with this view, the frame of the new build.
  case build(Pod, override: OverrideRecord?)
  case cycle(String)
}

extension PodState {
  /// How many idle views a pod keeps for reuse: enough for deep chains of nested builds.
  static let spareViewLimit = 64

  /// Looks `provider` up, and either returns the cached instance, joins the build in
  /// progress, or starts a build (single flight for caching scopes, S8).
  mutating func step(
    for provider: ProviderInfo, from caller: Pod?, core: PodCore, reporting: Bool,
    events: inout [PodEvent]
  ) -> ResolveStep {
    let key = provider.key
    let caller = caller?.isActive == true ? caller : nil
    if let caller, let report = cycleReport(resolving: key, provider: provider, from: caller) {
      return .cycle(report)
    }
    if let entry = entries[key] {
      if entry.isStrong {
        recordDependency(on: key, provider: provider, from: caller)
        if reporting { events.append(.reused(provider: provider.name, scope: entry.scope.name)) }
        return .cached(entry)
      }
      if let object = unsafeDowncast(entry, to: WeakEntry.self).object {
        recordDependency(on: key, provider: provider, from: caller)
        if reporting { events.append(.reused(provider: provider.name, scope: entry.scope.name)) }
        return .cachedObject(UncheckedSendable(value: object))
      }
      // The instance went away by itself: forget it, leaving what was built from it (S6).
      entries[key] = nil
      forget(entry, key: key)
    }
    let override = override(for: provider)
    let scope = override?.scope ?? provider.scope
    if scope.kind == .alwaysCreateNew {
      // Nothing is cached, so the caller's instance depends on this provider directly, and
      // on whatever this build resolves.
      recordDependency(on: key, provider: provider, from: caller)
      let view = makeView(core: core)
      view.begin(key: key, provider: provider, scope: scope, caches: false, parent: caller)
      return .build(view, override: override)
    }
    // A build that was invalidated while running is not joined: its result will not be
    // cached, and this resolve should see the change that invalidated it.
    if let running = building[key], !running.isInvalidated {
      var waitID: Int?
      if let caller {
        if let report = crossThreadCycleReport(waiter: caller, target: running) {
          return .cycle(report)
        }
        waitID = nextWaitID
        nextWaitID += 1
        waits[nextWaitID - 1] = Wait(waiter: caller, target: running)
      }
      if let group = running.waiters { return .wait(group, waitID: waitID) }
      let group = DispatchGroup()
      group.enter()
      running.waiters = group
      return .wait(group, waitID: waitID)
    }
    let view = makeView(core: core)
    view.begin(key: key, provider: provider, scope: scope, caches: true, parent: caller)
    building[key] = view
    return .build(view, override: override)
  }

  /// Whether nothing but `view` reaches the view: no other strong reference, and no weak or
  /// unowned one a builder might have kept (those would see it reused for another build).
  private static func isUnshared(_ view: inout Pod) -> Bool {
    // An object's unowned and weak counts are 1 while it has no such references.
    isKnownUniquelyReferenced(&view) && _getUnownedRetainCount(view) == 1
      && _getWeakRetainCount(view) <= 1
  }

  private mutating func makeView(core: PodCore) -> Pod {
    spareViews.popLast() ?? Pod(view: core)
  }

  /// Records a finished build: caches its entry unless something it used changed while it
  /// ran, and keeps the view for reuse if nothing else holds it. Returns the waiters to
  /// release once the lock is dropped.
  mutating func finish(
    _ frame: inout Pod, entry: CacheEntry?, caller: Pod?, reporting: Bool,
    events: inout [PodEvent]
  ) -> DispatchGroup? {
    frame.isActive = false
    let caller = caller?.isActive == true ? caller : nil
    if reporting { events.append(.built(provider: frame.provider.name, scope: frame.scope.name)) }
    var waiters: DispatchGroup?
    // An uncached build recorded its dependencies on its owner as it went.
    if frame.caches {
      if building[frame.key] === frame { building[frame.key] = nil }
      waiters = frame.waiters
      if frame.isInvalidated {
        // Stale: hand the value to this caller only, and make sure nothing caches it inside.
        caller?.owner?.isInvalidated = true
      } else if let entry {
        entry.dependencies = frame.dependencies
        entries[frame.key] = entry
        // Singletons are never cleared, so they need no membership.
        if entry.scope.kind != .singleton {
          scopeMembers[entry.scope.key, default: []].insert(frame.key)
        }
        if reporting { captiveDependencies(of: entry, events: &events) }
        recordDependency(on: frame.key, provider: frame.provider, from: caller)
      } else {
        // A weak-scope value that is not an object is not cached: what it was built from now
        // belongs to whoever asked for it.
        if let owner = caller?.owner {
          for (key, provider) in frame.dependencies { owner.dependencies[key] = provider }
        }
        recordDependency(on: frame.key, provider: frame.provider, from: caller)
      }
    }
    if isRootAlive, spareViews.count < Self.spareViewLimit, Self.isUnshared(&frame) {
      frame.reset()
      spareViews.append(frame)
    }
    return waiters
  }
}
