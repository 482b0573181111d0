import Dispatch

/// What a resolve does next, decided under the pod's lock and carried out outside it.
enum ResolveStep: Sendable {
  case cached(HeldValue)
  case cachedObject(UncheckedSendable<AnyObject>)
  /// The root's cached instance, found by a request pod's build in a shared section that stays
  /// open until the value is copied out (see `SectionRead`). Only `sharedStep` returns it.
  case borrowed(UnretainedValue)
  /// Another thread is building this instance: wait for it, then look again.
  case wait(DispatchGroup, waitID: Int?)
  /// Another task is building this async instance: wait for its result.
  case joinAsync(AnyAsyncBuild, waiterID: Int, waitID: Int?)
  /// Run the builder in this frame.
  case build(Frame, override: OverrideRecord?)
  /// A programmer error the type system cannot catch (a cycle, a scope no pod owns): stop
  /// the program with this message.
  case stop(String)
  /// A resolve through a pod that was shut down: a synchronous one stops the program with
  /// this message, an async one throws it.
  case shutDown(String)
  /// The caller's build is over (a context kept past its build), or the caller is not yet
  /// known: look for the build running on this thread or task, and resolve from there.
  case callerFinished
}

extension EngineState {
  /// How many idle frames a tree of pods keeps for reuse: enough for deep chains of nested
  /// builds.
  static let spareFrameLimit = 64

  /// Looks `provider` up in `pod`, and either returns the cached instance (the pod's own, or
  /// one it shares with an ancestor), joins the build in progress, or starts a build (one at a
  /// time per cached instance).
  ///
  /// `callerUnknown` is for a resolve through the pod itself: while no build runs anywhere it
  /// cannot be nested in one, so the thread and task are looked at only when one does.
  /// `asyncBuild` is given by an async resolve, to be started or to join another.
  mutating func step(
    for provider: ProviderInfo, in pod: PodRecord, from caller: Frame?,
    callerUnknown: Bool = false, asyncBuild: AnyAsyncBuild? = nil, treeID: ObjectIdentifier,
    reporting: Bool, events: inout [ReportedEvent], released: inout [AnyObject]
  ) -> ResolveStep {
    join(pod)
    let key = provider.key
    // Thread builds are not counted: the thread's own stack tells. Nor are builds begun in
    // shared sections; a warm-up binds such a build to a task of its own, which the gate
    // counts while it runs.
    if callerUnknown, runningBuilds > 0 || ThreadRecord.isBuilding || threadBuildGate.hasAsyncBuilds
    {
      return .callerFinished
    }
    // Not bound to a new name: a binding retained the caller and released it after.
    if caller != nil {
      noteUse(of: caller!)
      if !caller!.isBuilding { return .callerFinished }
    }
    // Most pods override nothing: a root pod without overrides skips the override lookup, and
    // for an always-new provider, which then has no cached instance, the slot lookup too.
    let overridesNothing = pod.parent == nil && pod.overrides.isEmpty
    let existing = overridesNothing && provider.isAlwaysNew ? nil : pod.slots[key]
    if let slot = existing, slot.entry != nil,
      let hit = reuse(
        slot, from: caller, reporting: reporting, events: &events, released: &released)
    {
      return hit
    }
    let applied = overridesNothing ? nil : pod.override(for: provider)
    let override = applied?.record
    let scope = override?.scope ?? provider.scope
    if scope.requiresOwningPod, !pod.ownsInChain(scope.key) {
      return .stop(Self.missingOwnerReport(resolving: provider, in: scope, through: pod))
    }
    // A pod that went away (reached through a context kept past it) caches nothing and
    // shares nothing: each resolve through it builds afresh, as an always-new provider does,
    // with the same check for a chain that repeats a provider.
    if scope.kind == .alwaysCreateNew || !pod.isAlive {
      // A build that was running when the pod shut down may still resolve, as in a pod that
      // went away; nothing else may.
      if caller == nil, pod.shutdown != nil {
        return .shutDown(Self.shutDownReport(resolving: provider))
      }
      if let caller {
        let builder = BuilderKey(provider: key, override: override.map(ObjectIdentifier.init))
        if let report = Self.repeatedBuilderReport(resolving: provider, builder, from: caller) {
          return .stop(report)
        }
        // Nothing is cached, so the caller's instance depends on this provider directly, and
        // on whatever this build resolves. It depends on the builder that applies: the
        // provider's own, which is the root's, or the nearest override's. Recording it in the
        // pod the resolve went through would keep an instance built through a child in that
        // child even when nothing it was built from is the child's own. Through a pod that
        // went away, an instance of a scope that pod owned is that pod's: the caller's
        // instance is then cached nowhere, rather than in the root, where it would keep what
        // the pod built for as long as the app runs.
        let builderPod =
          pod.isAlive
          ? applied?.pod ?? root : shadowingPod(scope.key, overriddenIn: applied?.pod, from: pod)
        recordDependency(on: provider, in: builderPod, from: caller, released: &released)
      }
      return .build(
        makeFrame(
          treeID: treeID, provider: provider, override: override, scope: scope, slot: nil,
          pod: pod, parent: caller),
        override: override)
    }
    // In a child pod, an instance the child does not shadow is its parent's.
    var home = pod
    if pod.parent != nil {
      switch placement(of: provider, scope: scope.key, overriddenIn: applied?.pod, from: pod) {
      case .shared(let target):
        // Read by a child here, a slot of the root may be read by the root's children in
        // shared sections from now on without counting them (see `EngineState+UnrecordedReads`).
        if target.pod === root, !target.sharesUnrecorded { target.sharesUnrecorded = true }
        // From inside a build, the ancestor's instance is read where it is, without a link
        // here: a request's pod resolves each shared instance once or twice while it builds,
        // and making, counting and freeing a link cost more than looking again (15% of a
        // request's pod; a long-lived child's builds pay about 6 instructions more per
        // resolve). A resolve through the pod itself links, for its cached reads and watchers.
        let linked: Slot?
        if existing == nil, caller != nil {
          linked = nil
        } else {
          let slot = existing ?? addSlot(for: provider, in: pod, released: &released)
          link(slot, to: target)
          linked = slot
        }
        if let hit = reuse(
          linked ?? target, from: caller, reporting: reporting, events: &events,
          released: &released)
        {
          return hit
        }
        // A weak instance that went away by itself: it is forgotten now, so look again.
        return step(
          for: provider, in: pod, from: caller, asyncBuild: asyncBuild, treeID: treeID,
          reporting: reporting, events: &events, released: &released)
      case .build(let pod):
        home = pod
      }
    }
    let slot =
      home === pod
      ? existing ?? addSlot(for: provider, in: pod, released: &released)
      : slot(for: provider, in: home, released: &released)
    if let running = slot.build {
      if let caller, running.isAncestor(ofOrSameAs: caller) {
        return .stop(cycleReport(resolving: provider, from: caller, through: running))
      }
      // A stale build is not joined: its result will not be cached, and this resolve should
      // see the change that made it stale.
      if !isStale(running) {
        if let caller, let report = crossThreadCycleReport(waiter: caller, target: running) {
          return .stop(report)
        }
        let waitID = registerWait(
          caller, on: running, takesValue: running.asyncBuild?.requester === pod)
        if let build = running.asyncBuild {
          guard asyncBuild != nil else {
            preconditionFailure("ProviderPod: \(provider.name) is being built asynchronously")
          }
          return .joinAsync(build, waiterID: build.takeWaiterID(), waitID: waitID)
        }
        if let group = running.waiters { return .wait(group, waitID: waitID) }
        let group = DispatchGroup()
        group.enter()
        running.waiters = group
        return .wait(group, waitID: waitID)
      }
    }
    let frame = makeFrame(
      treeID: treeID, provider: provider, override: override, scope: scope, slot: slot, pod: pod,
      parent: caller)
    slot.build = frame
    if let asyncBuild {
      frame.asyncBuild = asyncBuild
      asyncBuild.frame = frame
      asyncBuild.requester = pod
    }
    // A change that makes this build stale must reach at once the builds that will take its
    // value (see `invalidate`): the one it is nested in, or for an async build, those that
    // may wait for it. A clear can make it stale through its scope's count, and an override
    // in the pod it goes through, when it is placed in an ancestor; neither looks at its
    // slot, so they find it in this list. Its other callers see the change when they look.
    if caller != nil || asyncBuild != nil, frame.clearableScope != nil || slot.pod !== pod {
      listedRunning.add(frame)
    }
    return .build(frame, override: override)
  }

  /// The nearest pod, up from `pod`, whose instance of a provider in `scope` a build through
  /// `pod` would use: the first that overrides it (`overriddenIn`) or owns the scope; the
  /// root if none does.
  private func shadowingPod(
    _ scope: ScopeKey, overriddenIn overridePod: PodRecord?, from pod: PodRecord
  ) -> PodRecord {
    var next: PodRecord? = pod
    while let current = next {
      if current.shadows(scope: scope, overriddenIn: overridePod) { return current }
      next = current.parent
    }
    return root
  }

  /// The slot's cached instance for `caller`, recorded as a dependency of its build; nil if
  /// the instance (a weak one) has gone away by itself, which is then forgotten, leaving what
  /// was built from it alone (the pod never owned it).
  private mutating func reuse(
    _ slot: Slot, from caller: Frame?, reporting: Bool, events: inout [ReportedEvent],
    released: inout [AnyObject]
  ) -> ResolveStep? {
    // What is built from a shared instance depends on the pod that owns it.
    let owner = slot.linkTarget ?? slot
    // Read where it is: copying the entry out would retain everything it holds.
    if let held = slot.heldStrongValue {
      recordDependency(on: owner, from: caller)
      if reporting { events.append(Self.reused(slot, of: owner)) }
      // A resolve through the pod itself (no build asking) publishes the instance, so the
      // reads that follow take no lock. Found here rather than by a locked look before the
      // resolve: that look cost every first resolve of a provider a second trip through the
      // lock (a request's pod took it seven times, now six).
      if caller == nil, !reporting, slot.pod.isAlive, !slot.info.valueIsOutcome {
        slot.publish(in: threadBuildGate.words)
      }
      return .cached(held)
    }
    guard slot.entry != nil else { return nil }
    if let object = slot.entry?.weakObject {
      recordDependency(on: owner, from: caller)
      if reporting { events.append(Self.reused(slot, of: owner)) }
      return .cachedObject(UncheckedSendable(value: object))
    }
    if owner !== slot { _ = removeEntry(of: owner, released: &released) }
    _ = removeEntry(of: slot, released: &released)
    return nil
  }

  /// The event of a cached instance reused: reported by the pod that owns it.
  static func reused(_ slot: Slot, of owner: Slot) -> ReportedEvent {
    let scope = slot.entry?.scope(of: slot.info).name ?? ""
    return ReportedEvent(pod: owner.pod, event: .reused(provider: owner.info.name, scope: scope))
  }

  mutating func registerWait(_ caller: Frame?, on target: Frame, takesValue: Bool) -> Int? {
    guard let caller else { return nil }
    nextWaitID += 1
    waits[nextWaitID] = Wait(waiter: caller, target: target, takesValue: takesValue)
    return nextWaitID
  }

  private mutating func makeFrame(
    treeID: ObjectIdentifier, provider: ProviderInfo, override: OverrideRecord?,
    scope: ScopeInfo, slot: Slot?, pod: PodRecord, parent: Frame?
  ) -> Frame {
    let frame = spareFrames.popLast() ?? Frame(treeID: treeID)
    var epoch = 0
    var requesterEpoch = 0
    if scope.kind != .singleton, let slot {
      epoch = slot.pod.scopeEpochs[scope.key] ?? 0
      if slot.pod !== pod { requesterEpoch = pod.scopeEpochs[scope.key] ?? 0 }
    }
    builds += 1
    frame.begin(
      info: provider, override: override.map(ObjectIdentifier.init), scope: scope, slot: slot,
      pod: pod, parent: parent, scopeEpoch: epoch, requesterScopeEpoch: requesterEpoch,
      serial: builds)
    runningBuilds += 1
    return frame
  }
}
