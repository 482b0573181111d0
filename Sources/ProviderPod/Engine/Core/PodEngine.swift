internal import CProviderPod

/// What a pod is made of, seen from what runs its resolves: its record (its tables in its
/// tree's state, behind the tree's one lock, with what the engine keeps of the tree) and its
/// observer. The public ``Pod`` and the ``BuildContext`` its builders receive both drive the
/// same engine; a context keeps the engine alive, never the pod.
///
/// A view of the pod's record rather than an object of its own: a request's pod was three
/// objects (the pod users hold, this engine, the record the tree lists), and making the
/// engine, copying its fields in and taking it apart again cost every request about 250
/// instructions and an allocation. What it keeps of the tree is in the record, whose header
/// (`PodRecord.swift`) states the invariants its unsafe fields rely on. Unsafe here, and
/// relying on them: lending the tree's root record without a retain (`withTreeRoot`), and
/// reading the tree's handle and root out of their optionals unchecked (`state`,
/// `withTreeRoot`), which a root's record sets in `makeTree`, before anything can reach it
/// through an engine, and a child's in its initializer.
struct PodEngine {
  /// This pod's record, which the engine is a view of.
  let pod: PodRecord

  /// The engine of the pod whose record is `pod`.
  @inline(__always)
  init(viewing pod: PodRecord) {
    self.pod = pod
  }

  /// The state of the whole tree of pods, shared with the parent and the children, through
  /// its lock's addresses (see `PodRecord.treeState`).
  var state: LockHandle<EngineState> {
    @inline(__always) get { pod.treeState.unsafelyUnwrapped }
  }
  /// Whether this pod or one above it has an observer (see `PodRecord.isObserved`).
  var isObserved: Bool {
    @inline(__always) get { pod.isObserved }
  }
  /// Whether always-new builds through this pod may run without the lock (see
  /// `PodRecord.mayBuildOnThread`).
  var mayBuildOnThread: Bool {
    @inline(__always) get { pod.mayBuildOnThread }
  }
  /// Whether this pod's own work may run in shared sections of the tree's lock (see
  /// `PodRecord.runsSharedSections`).
  var runsSharedSections: Bool {
    @inline(__always) get { pod.runsSharedSections }
  }
  /// The tree's (see `ThreadBuildGate`), through its root.
  var threadBuildGate: ThreadBuildGate { withTreeRoot { $0.rootGate! } }
  /// The tree's shared words, in its gate: what cached reads and shared sections use (see
  /// `PodRecord.treeWords`).
  var treeWords: UnsafeMutablePointer<pp_tree_words> {
    @inline(__always) get { pod.treeWords }
  }
  /// The pod itself, for a builder that asks for it: its record's weak reference (one per
  /// pod, not two), which an unobserved child's record sets only when first asked, under the
  /// pod's own lock (see `PodRecord+Owner.swift`).
  var root: Pod? {
    guard pod.setsOwnerWhenAsked else { return pod.owner }
    return pod.ownerSettingItFirst()
  }
  /// The clock and test settings, inherited by children.
  var settings: PodSettings { pod.givenSettings ?? .standard }

  /// A root pod's engine.
  init(
    overrides: [OverrideRecord], observer: ObserverBox?,
    settings: PodSettings? = nil
  ) {
    pod = PodRecord(observer: observer, settings: settings)
    for record in overrides { pod.overrides[record.providerKey] = record }
    pod.makeTree()
  }

  /// A child pod's engine, in its parent's tree. The parent is borrowed: what the engine
  /// keeps of it, the new record copies field by field (`PodRecord.init(parent:)`). Inlined
  /// into its caller (`Pod.childEngine`), which saved a request's pod about 60 instructions.
  @inline(__always)
  init(
    parent: borrowing PodEngine, ownedScopes: OwnedScopes, overrides: [OverrideRecord],
    observer: ObserverBox?
  ) {
    pod = PodRecord(parent: parent.pod, ownedScopes: ownedScopes, observer: observer)
    for record in overrides { pod.overrides[record.providerKey] = record }
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

  /// Runs `body` with the tree's root record, lent without a retain (see
  /// `PodRecord.treeRoot`).
  @inline(__always)
  func withTreeRoot<Result>(_ body: (PodRecord) -> Result) -> Result {
    pod.treeRoot.unsafelyUnwrapped._withUnsafeGuaranteedRef(body)
  }

  /// Frames of every pod in the tree carry this, to be found on the thread that runs them
  /// (see `PodRecord.treeID`).
  var treeID: ObjectIdentifier {
    @inline(__always) get { pod.treeID }
  }

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
