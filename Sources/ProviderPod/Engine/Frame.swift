internal import CProviderPod
import Dispatch

/// One build: a provider's builder running, with what the pod needs to know about it.
///
/// A builder reaches its frame through the ``BuildContext`` it is given, or, when it resolves
/// through another reference to the pod, through the thread or task that runs it (see
/// `CurrentFrame`). Every field is guarded by the engine's lock, except `threadPrevious`, which
/// only the thread running the build touches.
///
/// Frames are reused: once a build is over and nothing but the engine holds its frame (no
/// context kept by a builder, no child frame, no waiter), the frame goes back to the engine's
/// spare list, or, for a thread build, to its thread's, so a build allocates nothing of its
/// own.
///
/// Fields are exempt from dynamic exclusivity checks, which cost more than the rest of an
/// always-new build's bookkeeping: the lock (or, for `threadPrevious`, the thread) is what
/// makes access exclusive.
final class Frame: @unchecked Sendable {
  enum Phase {
    /// On the spare list.
    case idle
    /// The builder is running and its result will be cached.
    case running
    /// The builder is running, but something it used (or its scope, or its override) was
    /// discarded meanwhile: its result must not be cached, and nobody joins it.
    case invalidated
    /// The builder returned; a context kept past this point resolves like the pod itself.
    case finished
  }

  /// The tree of pods the frame belongs to, for finding a thread's frame of a given pod. Set
  /// anew when a thread's spare frame is used for a build in another tree.
  @exclusivity(unchecked) private(set) var treeID: ObjectIdentifier
  @exclusivity(unchecked) private(set) var phase = Phase.idle
  // `info` and `scope` are not retained: while the build runs, the resolve that started it
  // holds the provider and the override (whose scope may apply), and `finish` clears them
  // when it ends, so a frame kept past its build holds nothing stale. Only the build's own
  // thread, or the engine under its lock, reads them. Retaining them cost a tenth of an
  // always-new build.
  @exclusivity(unchecked) private(set) unowned(unsafe) var info: ProviderInfo?
  @exclusivity(unchecked) private(set) unowned(unsafe) var scope: ScopeInfo?
  /// For a build whose result is cached, the slot it was placed in (where others join it);
  /// nil for an always-new build, and once the build has ended.
  @exclusivity(unchecked) private(set) var slot: Slot?
  /// The pod the build resolves through: its overrides and shared instances are what the
  /// builder sees.
  ///
  /// Kept until the frame is reused: a task a running async builder starts inherits the
  /// frame and reads its pod outside the lock, also while the build ends. `retainedPod`
  /// keeps it alive, except for a thread build, which no task inherits: there the engine
  /// does, held by the resolve while the build runs and by any context kept past it.
  @exclusivity(unchecked) private(set) unowned(unsafe) var pod: PodRecord?
  @exclusivity(unchecked) private var retainedPod: PodRecord?
  /// The frame whose builder asked for this one, in the same pod.
  ///
  /// `retainedParent` keeps it alive, except in a thread build while it runs: its parent is
  /// the thread build below it on the same thread, which cannot end first. A thread build
  /// that ends with its context held elsewhere retains its parent then (`keepWhatItReaches`).
  @exclusivity(unchecked) private(set) unowned(unsafe) var parent: Frame?
  @exclusivity(unchecked) private var retainedParent: Frame?
  /// The engine that runs the build, which the build's context resolves through.
  ///
  /// `retainedEngine` keeps it alive, except in a thread build while it runs: the resolve
  /// that runs it holds the engine. A context kept past the build reaches the engine through
  /// the frame, so a thread build that ends with its context held elsewhere retains it then
  /// (`keepWhatItReaches`). A context holding only the frame costs each build one retain
  /// rather than two.
  var engine: PodEngine { engineReference.unsafelyUnwrapped.takeUnretainedValue() }

  /// Calls `body` with the engine without retaining it: the frame keeps it (see above), and
  /// a context calling this holds the frame.
  @inline(__always)
  func withEngine<Result>(_ body: (PodEngine) -> Result) -> Result {
    engineReference.unsafelyUnwrapped._withUnsafeGuaranteedRef(body)
  }
  @exclusivity(unchecked) private var engineReference: Unmanaged<PodEngine>?
  @exclusivity(unchecked) private var retainedEngine: PodEngine?
  /// How many frames are above this one: cycle checks compare depths instead of walking.
  @exclusivity(unchecked) private(set) var depth = 0
  /// For an always-new build: the nearest caching build above it, which depends on whatever
  /// this one resolves, since nothing in between is cached.
  @exclusivity(unchecked) private var enclosingOwner: Frame?
  /// The scope's clear count when the build began, in the pod it was placed in: a clear
  /// while it runs makes it stale.
  @exclusivity(unchecked) private(set) var scopeEpoch = 0
  /// The same count in the pod the build goes through, when that is a child of the pod it
  /// was placed in: an instance that turns out to be the child's is stale after a clear there.
  @exclusivity(unchecked) private(set) var requesterScopeEpoch = 0
  /// The providers this build resolved, each counted in their slot's `dependents` once per
  /// time it is listed. An array rather than a set: a build with 100 dependencies hashed and
  /// regrew a table for each. Repeats are caught by the slot's `recordedBy`, except when
  /// another build (a nested caching one, or one on another thread) recorded the same slot
  /// in between: then it is listed twice, counted twice and dropped twice, which is
  /// consistent.
  @exclusivity(unchecked) var dependencies: [Slot] = []
  /// Which build this is: unique in its tree, so a slot can tell whether this build has
  /// already recorded it.
  @exclusivity(unchecked) private(set) var serial = 0
  /// Created by the first thread that waits for this build; left by the builder when done.
  @exclusivity(unchecked) var waiters: DispatchGroup?
  /// For an async build: its task and the callers waiting for it.
  @exclusivity(unchecked) var asyncBuild: AnyAsyncBuild?
  /// The frame this one was pushed over on its thread (see `CurrentFrame`).
  @exclusivity(unchecked) var threadPrevious: UnsafeMutableRawPointer?
  /// Whether this is a thread's own build (see `beginThreadBuild`), which runs without the
  /// lock. Set before the build is shared and cleared after, like every field it sets.
  @exclusivity(unchecked) private(set) var isThreadBuild = false
  /// For a thread build, the record of the thread running it (see `CurrentFrame.thread`).
  @exclusivity(unchecked) private(set) var thread: UnsafeMutablePointer<pp_thread_builds>?
  /// The next of the thread's idle frames (retained), while this one is idle there too.
  @exclusivity(unchecked) private var nextSpare: UnsafeMutableRawPointer?

  init(treeID: ObjectIdentifier) {
    self.treeID = treeID
  }

  /// Whether the result is cached (`slot != nil`), kept as a flag so the hot path need not
  /// retain the slot to ask.
  @exclusivity(unchecked) private(set) var caches = false
  /// The scope's identity when a clear of it can make this build stale (a caching build in a
  /// scope other than `SingletonScope`), kept as a value so the check retains nothing.
  @exclusivity(unchecked) private(set) var clearableScope: ScopeKey?
  var isBuilding: Bool { phase == .running || phase == .invalidated }

  func begin(
    info: ProviderInfo, scope: ScopeInfo, slot: Slot?, pod: PodRecord, parent: Frame?,
    scopeEpoch: Int, requesterScopeEpoch: Int = 0, serial: Int
  ) {
    self.serial = serial
    self.info = info
    self.scope = scope
    self.slot = slot
    self.pod = pod
    retainedPod = pod
    self.scopeEpoch = scopeEpoch
    self.requesterScopeEpoch = requesterScopeEpoch
    caches = slot != nil
    clearableScope = caches && scope.kind != .singleton ? scope.key : nil
    if let parent {
      self.parent = parent
      retainedParent = parent
      depth = parent.depth + 1
      if slot == nil { enclosingOwner = parent.owner }
    } else {
      depth = 0
    }
    phase = .running
  }

  /// Starts an always-new build that runs without the lock: one asked for through a root pod
  /// that overrides nothing, from outside any build or from another such build on the same
  /// thread. Nothing is looked up, joined or recorded for it, so no other thread needs to
  /// see it: until its context is handed to one, only this thread can reach the frame.
  func beginThreadBuild(
    info: ProviderInfo, engine: PodEngine, pod: PodRecord, parent: Frame?,
    treeID: ObjectIdentifier, on thread: UnsafeMutablePointer<pp_thread_builds>
  ) {
    self.treeID = treeID
    self.thread = thread
    engineReference = Unmanaged.passUnretained(engine)
    self.info = info
    self.scope = info.scope
    self.pod = pod
    if let parent {
      self.parent = parent
      depth = parent.depth + 1
    } else {
      depth = 0
    }
    isThreadBuild = true
    phase = .running
  }

  /// A frame for a thread build: one of the thread's idle frames, or a new one.
  @inline(__always)
  static func takeSpare(
    from thread: UnsafeMutablePointer<pp_thread_builds>, treeID: ObjectIdentifier
  ) -> Frame {
    guard let spare = thread.pointee.spare else { return Frame(treeID: treeID) }
    let frame = Unmanaged<Frame>.fromOpaque(spare).takeRetainedValue()
    thread.pointee.spare = frame.nextSpare
    thread.pointee.spare_count -= 1
    frame.nextSpare = nil
    return frame
  }

  /// Ends a thread build and keeps its frame among the thread's idle ones. False, leaving
  /// the frame as it is, when something else holds it (a context the builder kept, or handed
  /// to another thread): then the build must end under the lock, where others read it.
  @inline(__always)
  static func endThreadBuild(
    _ frame: inout Frame, on thread: UnsafeMutablePointer<pp_thread_builds>
  ) -> Bool {
    guard isKnownUniquelyReferenced(&frame) else { return false }
    frame.resetThreadBuild()
    if thread.pointee.spare_count < EngineState.spareFrameLimit {
      frame.nextSpare = thread.pointee.spare
      thread.pointee.spare = Unmanaged.passRetained(frame).toOpaque()
      thread.pointee.spare_count += 1
    }
    return true
  }

  /// `reset` for a thread build, which sets fewer fields: the always-new path is short
  /// enough for the other checks to show.
  @inline(__always)
  private func resetThreadBuild() {
    // A thread build sets nothing else: nothing depends on it, nobody waits for it.
    assert(slot == nil && waiters == nil && asyncBuild == nil && dependencies.isEmpty)
    assert(!caches && enclosingOwner == nil && retainedPod == nil && retainedParent == nil)
    assert(retainedEngine == nil)
    phase = .idle
    info = nil
    scope = nil
    pod = nil
    parent = nil
    engineReference = nil
    isThreadBuild = false
  }

  /// Lets go of a thread's idle frames, when the thread ends.
  static func releaseSpares(from first: UnsafeMutableRawPointer?) {
    var next = first
    while let spare = next {
      let frame = Unmanaged<Frame>.fromOpaque(spare).takeRetainedValue()
      next = frame.nextSpare
      frame.nextSpare = nil
    }
  }

  /// Gives a general build its engine, before its builder gets a context.
  func attach(to engine: PodEngine) {
    engineReference = Unmanaged.passUnretained(engine)
    retainedEngine = engine
  }

  /// For a thread build that ends while something else holds its frame: from now on the
  /// frame must keep its parent and its engine alive itself.
  func keepWhatItReaches() {
    retainedParent = parent
    retainedEngine = engine
  }

  func invalidate() {
    if phase == .running { phase = .invalidated }
  }

  func end() {
    phase = .finished
  }

  /// Drops, when the build ends, the references held unretained (the build's caller may let
  /// go of what they point at), the slot and the async build: a context kept in the instance
  /// it built would otherwise keep that instance, through its slot or through the async
  /// build's result, in a cycle. The rest stays until the frame is reused.
  func forgetBuild() {
    info = nil
    scope = nil
    if slot != nil { slot = nil }
    if asyncBuild != nil { asyncBuild = nil }
  }

  /// Forgets the build, ready for reuse; the dependency table keeps its storage.
  func reset() {
    phase = .idle
    forgetBuild()
    pod = nil
    if retainedPod != nil { retainedPod = nil }
    isThreadBuild = false
    if caches {
      caches = false
      clearableScope = nil
    }
    parent = nil
    if retainedParent != nil { retainedParent = nil }
    engineReference = nil
    if retainedEngine != nil { retainedEngine = nil }
    if enclosingOwner != nil { enclosingOwner = nil }
    if !dependencies.isEmpty { dependencies.removeAll(keepingCapacity: true) }
    if waiters != nil { waiters = nil }
  }

  /// The running build that depends on what this frame resolves: itself when it caches,
  /// otherwise the caching build around it.
  var owner: Frame? {
    if caches { return isBuilding ? self : nil }
    guard let enclosingOwner, enclosingOwner.isBuilding else { return nil }
    return enclosingOwner
  }

  /// Whether `self` is `frame` or one of the builds that `frame` was resolved from.
  func isAncestor(ofOrSameAs frame: Frame) -> Bool {
    var next: Frame? = frame
    while let current = next, current.depth >= depth {
      if current === self { return true }
      next = current.parent
    }
    return false
  }

  /// This frame and its still-running ancestors, innermost first.
  var activeChain: [Frame] {
    var chain: [Frame] = []
    var next: Frame? = self
    while let frame = next, frame.isBuilding {
      chain.append(frame)
      next = frame.parent
    }
    return chain
  }
}
