internal import CProviderPod

/// What a pod is made of: its tables (its record in its tree's state, behind the tree's one
/// lock) and its observer. The public ``Pod`` and the ``BuildContext`` its builders receive
/// both drive the same engine; a context keeps the engine alive, never the pod.
///
/// **Unsafe code here, and the invariant it relies on.** `treeRoot`, the root's record, is
/// held unowned: the engine holds its own record (`pod`), which is the root's or holds its
/// parent's, and so on up to the root's, each through a field that only the record's own
/// `deinit` clears (`PodRecord.parent`); so the root's record outlives
/// every engine of the tree. `state` is the addresses of the tree's lock and state
/// (`LockHandle`), and `treeWords` the address of the tree's shared words, in the root's
/// `ThreadBuildGate`: the root's record owns the lock (`PodRecord.tree`) and holds the gate
/// for as long as it lives, so both stay valid for every use through the engine, and for a
/// copy of `state` that a call on the engine takes, for the length of that call (the only
/// one: the cancellation handler of `wait`, in `PodEngine+Async.swift`). `parentPod` is
/// exempt from dynamic exclusivity checks: it is written by the child `Pod`'s initializer,
/// before the pod is shared, and taken out only by that pod's `deinit` (or by the `deinit` of
/// a descendant holding the only reference to the pod), when nothing can read it;
/// `Pod.parent` reads it through a live pod only. Nothing else here is unsafe.
final class PodEngine {
  /// The state of the whole tree of pods, shared with the parent and the children, through
  /// its lock's addresses: the lock is owned by the root's record (`PodRecord.tree`), which
  /// `pod` keeps (see the header). A child's engine retained a reference to it as it was made
  /// and released it as it went, and each use of one read out of an unretained field was
  /// retained again: writes every request on every core made to one count.
  let state: LockHandle<EngineState>
  /// This pod's tables in it.
  let pod: PodRecord
  /// Whether this pod or one above it has an observer: a resolve here may build or reuse an
  /// ancestor's instance, which that ancestor reports. Kept apart from the observer, since
  /// testing the existential copies it on every resolve.
  let isObserved: Bool
  /// Whether always-new builds through this pod may run without the lock: it is the root,
  /// and nobody observes it (the gate tells the rest).
  let mayBuildOnThread: Bool
  /// Whether this pod's own work may run in shared sections of the tree's lock, beside its
  /// siblings': it is a child of the root (see `EngineState+SharedSections`; the tree tells
  /// the rest, section by section). An observer changes nothing: the events are collected in
  /// the section and reported after it, as the exclusive side does.
  let runsSharedSections: Bool
  /// The tree's root record: the app's, for a request pod. A request pod's shared sections
  /// take it as an argument: read from `pod.parent` in them, it was retained and released, a
  /// write to a reference count that every request on every core shares, where a constant of
  /// the engine is passed on without one. Unretained, since `pod` keeps it (see the header):
  /// a child's engine retained it as it was made and released it as it went, two more writes;
  /// and lent to each use (`withTreeRoot`), since a reference read out of it is retained.
  private let treeRoot: Unmanaged<PodRecord>
  /// The tree's (see `ThreadBuildGate`), through its root.
  var threadBuildGate: ThreadBuildGate { withTreeRoot { $0.rootGate! } }
  /// The tree's shared words, in its gate: what cached reads and shared sections use. An
  /// address rather than a reference, which a child's engine would write as it is made and
  /// let go of (see the header for why the address stays valid).
  let treeWords: UnsafeMutablePointer<pp_tree_words>
  /// The pod itself, for a builder that asks for it: its record's weak reference (one per
  /// pod, not two), which an unobserved child's record sets only when first asked, under the
  /// pod's own lock (see `PodRecord+Owner.swift`).
  var root: Pod? {
    guard pod.setsOwnerWhenAsked else { return pod.owner }
    return pod.ownerSettingItFirst()
  }
  /// A child pod's parent `Pod`, which the child keeps alive (`Pod.parent`); nil for a root.
  /// Kept here rather than in the `Pod`, so that the pod's `deinit` can move it out and let
  /// go of a chain of pods one after the other (see `Pod.deinit`). Only the child `Pod`
  /// writes it (see the header).
  @exclusivity(unchecked) var parentPod: Pod?
  /// The clock and test settings, inherited by children; nil for the standard ones, so that
  /// an app's pod and its children (one per request, on a server) hold no reference for them.
  let givenSettings: PodSettings?
  var settings: PodSettings { givenSettings ?? .standard }

  /// A root pod's engine.
  init(
    overrides: [OverrideRecord], observer: ObserverBox?,
    settings: PodSettings? = nil
  ) {
    givenSettings = settings
    pod = PodRecord(observer: observer)
    for record in overrides { pod.overrides[record.providerKey] = record }
    treeRoot = .passUnretained(pod)
    let tree = pod.makeTree()
    treeWords = pod.rootGate!.words
    state = tree.handle
    treeID = ObjectIdentifier(tree)
    isObserved = observer != nil
    mayBuildOnThread = observer == nil
    runsSharedSections = false
  }

  /// A child pod's engine, in its parent's tree. The parent is borrowed: what the engine
  /// keeps of it, it copies field by field. Inlined into its caller (`Pod.childEngine`), which
  /// saves a request's pod about 60 instructions.
  @inline(__always)
  init(
    parent: borrowing PodEngine, ownedScopes: OwnedScopes, overrides: [OverrideRecord],
    observer: ObserverBox?
  ) {
    givenSettings = parent.givenSettings
    pod = PodRecord(parent: parent.pod, ownedScopes: ownedScopes, observer: observer)
    for record in overrides { pod.overrides[record.providerKey] = record }
    state = parent.state
    treeID = parent.treeID
    isObserved = observer != nil || parent.isObserved
    mayBuildOnThread = false
    runsSharedSections = parent.pod.parent == nil
    treeRoot = parent.treeRoot
    treeWords = parent.treeWords
    // Not listed among the parent's children yet: it joins at its first use, under the lock
    // that use takes anyway (`EngineState.join`).
  }

  /// Whether the pod is still there (read under the lock): not once it or an ancestor was
  /// shut down, which a child reads as it joins.
  var isAlive: Bool {
    let pod = self.pod
    return state.withLock {
      $0.join(pod)
      return pod.isAlive
    }
  }

  /// Runs `body` with the tree's root record, lent without a retain (see the header).
  @inline(__always)
  func withTreeRoot<Result>(_ body: (PodRecord) -> Result) -> Result {
    treeRoot._withUnsafeGuaranteedRef(body)
  }

  /// Frames of every pod in the tree carry this, to be found on the thread that runs them:
  /// the identity of the tree's state, kept rather than computed, which retained the state.
  let treeID: ObjectIdentifier

  /// The running build on this thread or task that a resolve through the pod is nested in.
  func currentFrame() -> Frame? {
    CurrentFrame.innermost(in: treeID, for: pod)
  }

  // MARK: Resolving

  /// The hot path: the provider's cached instance, when nobody observes the pod and this
  /// thread is not inside one of its builds, read without the lock from the instances the
  /// tree has published (`SharedReads.swift`); nil sends the caller down the locked resolve.
  @inline(__always)
  func cachedValue(of info: ProviderInfo) -> PublishedRead? {
    guard !isObserved, !info.isAlwaysNew else { return nil }
    // Inside a build, the resolve must be recorded as one of its dependencies. A build runs
    // on this thread (its stack says so) or in this task (only while async builds run).
    if ThreadRecord.isBuilding || ThreadBuildGate.hasAsyncBuilds(in: treeWords),
      CurrentFrame.isInsideBuild(of: treeID, for: pod)
    {
      return nil
    }
    // On a miss the resolve takes the lock once, finds the instance if there is one, and
    // publishes it for the reads that follow.
    return publishedValue(of: info)
  }

  /// Resolves from `caller`'s build; with `callerUnknown`, from whichever build of this pod
  /// runs on the current thread or task, if any (a resolve through the pod itself).
  ///
  /// Split in three so that what stays on the stack while a builder runs is small: a chain
  /// of nested builds keeps one `resolve`, `run` and `callBuilder` per level, and chains can
  /// be thousands deep. Looking up and finishing, with their larger frames, are outlined.
  func resolve<Value>(
    _ provider: Provider<Value>, from caller: Frame?, callerUnknown: Bool = false
  ) -> Value {
    if provider.info.isAlwaysNew, mayBuildOnThread {
      let thread = ThreadRecord.current
      if let frame = beginThreadBuild(of: provider.info, from: caller, on: thread) {
        return runThreadBuild(provider, in: frame, on: thread)
      }
    }
    switch prepare(provider.info, from: caller, callerUnknown: callerUnknown) {
    case .cached(let held):
      return held.value(as: Value.self)
    case .borrowed(let found):
      return SectionRead(found).value(as: Value.self)
    case .cachedObject(let object):
      // A throwing provider's entry holds its success's instance; any other entry was made
      // from a `Value`, so the cast back cannot fail.
      if provider.info.valueIsOutcome { return weaklyCachedOutcome(object.value, as: Value.self) }
      return object.value as! Value
    case .build(let frame, let override, let caller):
      return run(provider, in: frame, override: override, caller: caller)
    }
  }

  /// What `prepare` found. Not generic over the value: an unspecialised generic enum would
  /// have its metadata looked up on every resolve.
  private enum Prepared {
    case cached(HeldValue)
    /// Read in a shared section that is still open: `SectionRead` copies it and ends it.
    case borrowed(UnretainedValue)
    case cachedObject(UncheckedSendable<AnyObject>)
    case build(Frame, override: OverrideRecord?, caller: Frame?)
  }

  /// The cached instance, or a frame to build it in, after waiting for other threads' builds.
  @inline(never)
  private func prepare(
    _ info: ProviderInfo, from caller: Frame?, callerUnknown: Bool
  ) -> Prepared {
    var caller = caller
    var callerUnknown = callerUnknown
    let reporting = isObserved
    if runsSharedSections,
      let step = sharedStep(
        info, from: caller, callerUnknown: callerUnknown, reporting: reporting)
    {
      return step
    }
    while true {
      var events: [ReportedEvent] = []
      var released: [AnyObject] = []
      let step = state.withLock {
        $0.step(
          for: info, in: pod, from: caller, callerUnknown: callerUnknown, treeID: treeID,
          reporting: reporting, events: &events, released: &released)
      }
      withExtendedLifetime(released) {}
      switch consume step {
      case .cached(let held):
        if reporting { report(events) }
        return .cached(held)
      case .cachedObject(let object):
        if reporting { report(events) }
        return .cachedObject(object)
      case .stop(let message), .shutDown(let message):
        fatalError(message)
      case .wait(let group, let waitID):
        group.wait()
        if let waitID { state.withLock { $0.endWait(waitID) } }
      case .build(let frame, let override):
        return .build(frame, override: override, caller: caller)
      case .joinAsync:
        preconditionFailure("ProviderPod: \(info.name) is being built asynchronously")
      case .borrowed:
        preconditionFailure("ProviderPod: an exclusive section returned a shared section's read")
      case .callerFinished:
        let current = currentFrame()
        caller = current === caller ? nil : current
        callerUnknown = false
      }
    }
  }

  /// `step` in a shared section of the tree's lock, where it can decide alone.
  private func sharedStep(
    _ info: ProviderInfo, from caller: Frame?, callerUnknown: Bool, reporting: Bool
  ) -> Prepared? {
    var released: [AnyObject] = []
    // Nil unless observed: an unobserved request pays nothing for an empty list.
    var events: [ReportedEvent]? = reporting ? [] : nil
    guard let access = state.openShared() else { return nil }
    let step = withTreeRoot { root in
      EngineState.sharedStep(
        for: info, in: pod, root: root, from: caller, callerUnknown: callerUnknown,
        treeID: treeID, tree: sharedTree(access), events: &events, released: &released)
    }
    // Left open for the caller's copy, having let go of nothing.
    if case .borrowed(let found) = step {
      assert(released.isEmpty, "a shared read let go of something inside its section")
      return .borrowed(found)
    }
    state.closeShared()
    withExtendedLifetime(released) {}
    switch step {
    case .cached(let held):
      if let events { report(events) }
      return .cached(held)
    case .build(let frame, let override): return .build(frame, override: override, caller: caller)
    default: return nil
    }
  }

  private func run<Value>(
    _ provider: Provider<Value>, in frame: consuming Frame, override: OverrideRecord?,
    caller: Frame?
  ) -> Value {
    var frame = frame
    CurrentFrame.push(frame)
    let value = callBuilder(provider, in: frame, override: override)
    CurrentFrame.pop(frame)
    complete(provider, value: value, in: &frame, override: override, caller: caller)
    return value
  }

  /// Caches what a build made (unless it went stale), and releases those waiting for it.
  @inline(never)
  private func complete<Value>(
    _ provider: Provider<Value>, value: Value, in frame: inout Frame,
    override: OverrideRecord?, caller: Frame?
  ) {
    let entry =
      frame.caches
      ? makeEntry(
        caching: value, of: provider.info, in: frame, override: override,
        onDiscard: provider.onDiscard)
      : nil
    if frame.startedShared {
      var events: [ReportedEvent]? = isObserved ? [] : nil
      guard
        let leftover = finishShared(&frame, entry: consume entry, caller: caller, events: &events)
      else {
        if let events { reportBuild(of: provider.info, events: events) }
        return
      }
      return finishExclusively(provider, in: &frame, entry: leftover, caller: caller)
    }
    finishExclusively(provider, in: &frame, entry: consume entry, caller: caller)
  }

  /// `complete`'s commit under the lock.
  @inline(__always)
  private func finishExclusively<Value>(
    _ provider: Provider<Value>, in frame: inout Frame, entry: consuming CacheEntry?,
    caller: Frame?
  ) {
    let reporting = isObserved
    var events: [ReportedEvent] = []
    var released: [AnyObject] = []
    // Handed on, not copied: a copy retained all the entry holds, and released it after.
    var entry = entry
    let waiters = state.withLock {
      let waiters = $0.finish(
        &frame, entry: entry.take(), caller: caller, reporting: reporting, events: &events,
        released: &released)
      $0.checkInvariantsInDebugBuilds()
      return waiters
    }
    waiters?.leave()
    withExtendedLifetime(released) {}
    if reporting { reportBuild(of: provider.info, events: events) }
  }

  /// What a shared section of this pod's tree knows of the tree's state.
  @inline(__always)
  func sharedTree(_ access: SharedAccess<EngineState>) -> SharedTree {
    SharedTree(
      runningBuilds: access.state.runningBuilds, isWatched: !access.state.watchers.isEmpty,
      words: treeWords)
  }

  /// `finish` in a shared section of the tree's lock, where it can decide alone: nil once
  /// done, else the entry back, for `finish`.
  @inline(never)
  private func finishShared(
    _ frame: inout Frame, entry: consuming CacheEntry?, caller: Frame?,
    events: inout [ReportedEvent]?
  ) -> CacheEntry?? {
    var entry = entry
    var released: [AnyObject] = []
    let finished =
      state.withShared { access in
        withTreeRoot { root in
          EngineState.sharedFinish(
            &frame, entry: &entry, caller: caller, root: root, tree: sharedTree(access),
            events: &events, released: &released)
        }
      } ?? false
    withExtendedLifetime(released) {}
    return finished ? nil : .some(entry)
  }

  /// Runs the builder with a context of its own; the context is gone when this returns, so
  /// the frame can be reused unless the builder kept it.
  private func callBuilder<Value>(
    _ provider: Provider<Value>, in frame: Frame, override: OverrideRecord?
  ) -> Value {
    frame.attach(to: self)
    let context = BuildContext(frame: frame)
    guard let override else { return provider.build(context) }
    // A member's own override, or its family's: the pod looked up the one that applies.
    if override.family != nil, let familyBuild = provider.familyBuild {
      return familyBuild(context, override)
    }
    return override.typed(TypedOverride<Value>.self).build(context)
  }

  /// The entry to cache for `value`: nil when its scope is ``WeakScope`` and the value is not
  /// an object (for a throwing provider, when it is not a success holding one). The pod owns what it built, but not a value handed to it with `withValue:`,
  /// so only the former gets the hook.
  func makeEntry<Value>(
    caching value: Value, of provider: ProviderInfo, in frame: Frame, override: OverrideRecord?,
    onDiscard: DisposalHook<Value>?
  ) -> CacheEntry? {
    // Written under the lock when the build began, by this thread.
    let ownsValue = override?.ownsValue ?? true
    // The build's scope, as `step` chose it (the override's, else the provider's), read from
    // what the caller holds rather than from the frame, whose unretained fields are retained
    // as they are read, and field by field, since a `??` of the two made a copy, retained and
    // released: each a write to a description that every request on every core shares. The
    // entry keeps the scope only when an override gives another than the provider's. Release
    // builds rely on `step` choosing it so; debug builds check.
    assert(
      (override?.scope ?? provider.scope) === frame.scope,
      "a build's scope is its override's or its provider's")
    let kind = override?.scope.kind ?? provider.scope.kind
    let overriddenScope = override.flatMap { $0.scope === provider.scope ? nil : $0.scope }
    if kind == .weak, provider.valueIsOutcome {
      return weakEntry(caching: value, in: frame, overriddenScope: overriddenScope)
    }
    return CacheEntry.make(
      caching: value, kind: kind, overriddenScope: overriddenScope, serial: frame.serial,
      hook: ownsValue ? onDiscard : nil)
  }

  // MARK: Events

  /// Tells each event's pod's observer, if it has one and is still there.
  func report(_ events: [ReportedEvent]) {
    for reported in events {
      // An observed pod's `owner` is set before the pod is shared (`noteOwner`).
      guard let observer = reported.pod.observer?.observer, let pod = reported.pod.owner else {
        continue
      }
      observer.pod(pod, didReport: reported.event)
    }
  }
}
