/// An always-new build that runs on its thread alone, without the lock: one asked for through
/// a root pod that overrides nothing and that nobody observes, from outside any build or from
/// another such build on the same thread, while no async build runs in the tree
/// (`ThreadBuildGate` says so with one atomic load).
///
/// Nothing is looked up, joined or recorded for such a build, so no other thread needs to see
/// it: until its context is handed to another thread, only this thread can reach its frame,
/// which is why the frame's fields need no lock here. Its life:
/// 1. `PodEngine.beginThreadBuild` takes one of the thread's idle frames (`ThreadRecord`) and
///    starts it (`Frame.Phase.runningOnThread`); a repeated provider in the chain stops the
///    program with the cycle, as on the general path.
/// 2. `PodEngine.runThreadBuild` pushes it on the thread's stack, runs the builder and pops it.
/// 3. When nothing else holds the frame, it goes back to the thread's idle frames. Otherwise a
///    builder kept its context or handed it to another thread; another thread that used it
///    under the lock listed it in `EngineState.lentThreadBuilds` (see `noteUse`), so the build
///    ends under the lock, and the frame keeps its parent and engine alive itself from then on.

extension PodEngine {
  /// Runs a thread build that `beginThreadBuild` started.
  @inline(__always)
  func runThreadBuild<Value>(
    _ provider: Provider<Value>, in frame: consuming Frame, on thread: ThreadRecord
  ) -> Value {
    var frame = frame
    thread.push(frame)
    let value = provider.build(BuildContext(frame: frame))
    thread.pop(frame)
    if !Frame.endThreadBuild(&frame, on: thread) { endSharedThreadBuild(frame) }
    return value
  }

  /// A frame for an always-new build that runs without the lock (see
  /// `Frame.beginThreadBuild`), or nil for the general path: when the root pod overrides
  /// something or has gone away, when the build is nested in one that is not a thread build
  /// of this pod on this thread (the general path finds out what it depends on), or when an
  /// async build runs in the tree (its task may be the caller).
  @inline(__always)
  func beginThreadBuild(
    of provider: ProviderInfo, from caller: Frame?,
    on thread: ThreadRecord
  ) -> Frame? {
    // Unwrapped where used, not bound to a new name: the binding retained the caller and
    // released it after (an always-new chain of 10 cost 7% more).
    if caller != nil {
      // Whether the caller is this thread's own build is read from `thread`, which only its
      // own thread writes, not from `phase`: a general build's phase is written under the
      // lock by whichever thread invalidates it.
      guard thread.isInnermost(caller!), caller!.thread == thread,
        ThreadBuildGate.isOpenForNestedBuilds(in: treeWords)
      else { return nil }
      // A thread build runs the provider's own builder: the root overrides nothing.
      let builder = BuilderKey(provider: provider.key, override: nil)
      if let report = EngineState.repeatedBuilderReport(resolving: provider, builder, from: caller!)
      {
        fatalError(report)
      }
    } else {
      guard thread.isIdle, ThreadBuildGate.isOpen(in: treeWords) else { return nil }
    }
    let frame = thread.takeSpare(treeID: treeID)
    frame.beginThreadBuild(
      info: provider, engine: self, pod: pod, parent: caller, treeID: treeID, on: thread)
    return frame
  }

  /// Ends a thread build whose context is held elsewhere, or was used on another thread, under
  /// the lock, where the other thread read it.
  @inline(never)
  private func endSharedThreadBuild(_ frame: Frame) {
    state.withLock {
      $0.lentThreadBuilds[ObjectIdentifier(frame)] = nil
      frame.end()
      frame.forgetBuild()
      frame.keepWhatItReaches()
    }
  }
}

extension Frame {
  /// Starts a thread build (see the top of this file).
  func beginThreadBuild(
    info: ProviderInfo, engine: PodEngine, pod: PodRecord, parent: Frame?,
    treeID: ObjectIdentifier, on thread: ThreadRecord
  ) {
    self.treeID = treeID
    self.thread = thread
    refer(toUnretained: engine)
    self.info = info
    self.scope = info.scope
    self.pod = pod
    if let parent {
      self.parent = parent
      descend(from: parent, as: info, override: nil)
    } else {
      override = nil
      depth = 0
      checkpoint = nil
    }
    phase = .runningOnThread
  }

  /// Ends a thread build and keeps its frame among the thread's idle ones. False, leaving
  /// the frame as it is, when something else holds it (a context the builder kept, or handed
  /// to another thread): then the build must end under the lock, where others read it.
  @inline(__always)
  static func endThreadBuild(_ frame: inout Frame, on thread: ThreadRecord) -> Bool {
    guard isKnownUniquelyReferenced(&frame) else { return false }
    frame.resetThreadBuild()
    thread.keepSpare(frame)
    return true
  }

  /// `reset` for a thread build, which sets fewer fields: the always-new path is short
  /// enough for the other checks to show.
  @inline(__always)
  private func resetThreadBuild() {
    // A thread build sets nothing else: nothing depends on it, nobody waits for it.
    assert(slot == nil && waiters == nil && asyncBuild == nil && dependencies.isEmpty)
    assert(!caches && enclosingOwner == nil && retainedPod == nil && retainedParent == nil)
    assert(retainedEngine == nil && !startedShared)
    phase = .idle
    info = nil
    scope = nil
    pod = nil
    parent = nil
    self.thread = nil
    forgetUnretainedEngine()
  }

  /// For a thread build that ends while something else holds its frame: from now on the
  /// frame must keep its parent and its engine alive itself.
  func keepWhatItReaches() {
    retainedParent = parent
    retainedEngine = engine
  }
}

extension EngineState {
  /// Notes that this thread is about to read `frame` under the lock: if it is another
  /// thread's running thread build, the build must end under the lock (see
  /// `lentThreadBuilds`).
  @inline(__always)
  mutating func noteUse(of frame: Frame) {
    guard frame.isThreadBuild, frame.thread != ThreadRecord.existing else { return }
    noteLent(frame)
  }

  @inline(never)
  private mutating func noteLent(_ frame: Frame) {
    if frame.isBuilding { lentThreadBuilds[ObjectIdentifier(frame)] = frame }
  }
}
