import Dispatch

/// One build: a provider's builder running, with what the pod needs to know about it.
///
/// A builder reaches its frame through the ``BuildContext`` it is given, or, when it resolves
/// through another reference to the pod, through the thread or task that runs it (see
/// `CurrentFrame`).
///
/// Frames are reused: once a build is over and nothing but the engine holds its frame (no
/// context kept by a builder, no child frame, no waiter), the frame goes back to the engine's
/// spare list, or, for a thread build, to its thread's, so a build allocates nothing of its
/// own.
///
/// **Unsafe code here, and the invariants it relies on.** The frame is on every build's path,
/// and checks and reference counts cost more there than the rest of an always-new build's
/// bookkeeping, so:
/// - Fields are exempt from dynamic exclusivity checks (`@exclusivity(unchecked)`). Access is
///   exclusive all the same: every field is read and written under the tree's lock, except by
///   a thread build (see `ThreadBuild.swift`), whose frame only its own thread can reach until
///   its context is handed on (`EngineState.noteUse` then makes it end under the lock), and
///   `threadPrevious` and `nextSpare`, which only the frame's thread touches (`ThreadRecord`).
///   A build of a request pod may also be read and written in the pod's shared sections, under
///   the pod's lock, which no exclusive section runs beside (`EngineState+SharedSections`).
/// - `info`, `scope`, `pod` and `parent` are `unowned(unsafe)`; each has a keeper for as long
///   as it is set. The resolve that started the build holds the provider and override (so
///   `info` and `scope`) until `forgetBuild` clears them when the build ends. `pod` and
///   `parent` are retained by their twins `retainedPod` and `retainedParent`, except in a
///   thread build while it runs: its pod's engine is held by the resolve, and its parent is
///   the thread build below it on the same thread, which cannot end first. A thread build that
///   ends while something else holds its frame retains them then (`keepWhatItReaches`).
/// - The engine is held as `Unmanaged`, retained by `retainedEngine` except in a running thread
///   build (held by its resolve, as above); a context reaches it through `withEngine` without
///   a retain, since the context holds the frame.
/// - `nextRunning` and `previousRunning`, a list of running builds, are `Unmanaged`: a frame is
///   in the list only while its build runs, and the resolve running it holds it.
/// Nothing outside this file and `ThreadBuild.swift` sets these fields.
final class Frame {
  /// Where the frame is in its life. A frame serves two kinds of build, with one life:
  /// idle, running (on the general path, or as a thread build), perhaps invalidated or failed,
  /// finished, idle again.
  enum Phase {
    /// On a spare list.
    case idle
    /// The builder is running on the general path: others can see the build, under the lock.
    case running
    /// An always-new builder is running as its thread's own build, without the lock (see
    /// `ThreadBuild.swift`): until its context is handed on, only its thread sees it.
    case runningOnThread
    /// The builder is running on the general path, but something it used (or its scope, or its override) was
    /// discarded meanwhile: its result must not be cached, and nobody joins it.
    case invalidated
    /// The builder of a throwing provider threw while its build was still valid: nothing is
    /// cached, but its caller got an error, not a value built from something stale, so the
    /// caller's own result stands (see `EngineState.finish`).
    case failed
    /// The builder returned; a context kept past this point resolves like the pod itself.
    case finished
  }

  /// The tree of pods the frame belongs to, for finding a thread's frame of a given pod. Set
  /// anew when a thread's spare frame is used for a build in another tree.
  @exclusivity(unchecked) var treeID: ObjectIdentifier
  @exclusivity(unchecked) var phase = Phase.idle
  // `info` and `scope` are not retained: while the build runs, the resolve that started it
  // holds the provider and the override (whose scope may apply), and `finish` clears them
  // when it ends, so a frame kept past its build holds nothing stale. Only the build's own
  // thread, or the engine under its lock, reads them. Retaining them cost a tenth of an
  // always-new build.
  @exclusivity(unchecked) unowned(unsafe) var info: ProviderInfo?
  @exclusivity(unchecked) unowned(unsafe) var scope: ScopeInfo?
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
  @exclusivity(unchecked) unowned(unsafe) var pod: PodRecord?
  @exclusivity(unchecked) var retainedPod: PodRecord?
  /// The frame whose builder asked for this one, in the same pod.
  ///
  /// `retainedParent` keeps it alive, except in a thread build while it runs: its parent is
  /// the thread build below it on the same thread, which cannot end first. A thread build
  /// that ends with its context held elsewhere retains its parent then (`keepWhatItReaches`).
  @exclusivity(unchecked) unowned(unsafe) var parent: Frame?
  @exclusivity(unchecked) var retainedParent: Frame?
  /// The engine that runs the build, which the build's context resolves through.
  ///
  /// `retainedEngine` keeps it alive, except in a thread build while it runs: the resolve
  /// that runs it holds the engine. A context kept past the build reaches the engine through
  /// the frame, so a thread build that ends with its context held elsewhere retains it then
  /// (`keepWhatItReaches`). A context holding only the frame costs each build one retain
  /// rather than two.
  var engine: PodEngine {
    PodEngine(viewing: engineReference.unsafelyUnwrapped.takeUnretainedValue())
  }

  /// Calls `body` with the engine without retaining it: the frame keeps it (see above), and
  /// a context calling this holds the frame.
  @inline(__always)
  func withEngine<Result>(_ body: (PodEngine) -> Result) -> Result {
    engineReference.unsafelyUnwrapped._withUnsafeGuaranteedRef { body(PodEngine(viewing: $0)) }
  }
  @exclusivity(unchecked) private var engineReference: Unmanaged<PodRecord>?

  /// Points the frame at `engine` without retaining it, for a thread build: the resolve that
  /// runs the build holds the engine until the build ends.
  @inline(__always)
  func refer(toUnretained engine: PodEngine) {
    engineReference = Unmanaged.passUnretained(engine.pod)
  }

  /// Forgets the engine a thread build pointed at, as it goes back to its thread's spares.
  @inline(__always)
  func forgetUnretainedEngine() {
    engineReference = nil
  }
  @exclusivity(unchecked) var retainedEngine: PodEngine?
  /// How many frames are above this one: cycle checks compare depths instead of walking.
  @exclusivity(unchecked) var depth = 0
  /// The override whose builder this build runs; nil for the provider's own builder.
  @exclusivity(unchecked) var override: ObjectIdentifier?
  /// The builder an always-new build nested in this one is compared with, to catch a chain
  /// that repeats itself (see `EngineState+Cycles.swift`): that of the frame at the last
  /// checkpoint depth at or above this one, nil above the first.
  @exclusivity(unchecked) var checkpoint: BuilderKey?
  /// For an always-new build: the nearest caching build above it, which depends on whatever
  /// this one resolves, since nothing in between is cached.
  @exclusivity(unchecked) var enclosingOwner: Frame?
  /// The scope's clear count when the build began, in the pod it was placed in: a clear
  /// while it runs makes it stale.
  @exclusivity(unchecked) private(set) var scopeEpoch = 0
  /// The same count in the pod the build goes through, when that is a child of the pod it
  /// was placed in: an instance that turns out to be the child's is stale after a clear there.
  @exclusivity(unchecked) private(set) var requesterScopeEpoch = 0
  /// The scope whose list of members the instance joins once cached in a request pod's shared
  /// section (nil for a singleton): kept as a key, since reading it from the unretained
  /// `scope` there retained the scope, a description every request on every core shares.
  @exclusivity(unchecked) private(set) var memberScope: ScopeKey?
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
  /// For a thread build, the record of the thread running it; nil for every other build.
  /// Only that thread writes it while the build runs, so the thread may read it without the
  /// lock to tell whether its innermost build is its own.
  @exclusivity(unchecked) var thread: ThreadRecord?
  /// The next of the thread's idle frames (retained), while this one is idle there too.
  @exclusivity(unchecked) var nextSpare: UnsafeMutableRawPointer?
  /// The running builds that a clear can make stale while another build is to take their
  /// value (a nested build in a clearable scope, or an async one, which builds may wait for)
  /// form a list, so that a clear finds them without looking at every slot
  /// (`EngineState.invalidateBuildsGoneStale`). A frame is listed from `EngineState.step`
  /// to `EngineState.finish`, under the lock, and its build's resolve holds it all that time:
  /// the links are unmanaged, so that keeping the list costs no reference counting.
  @exclusivity(unchecked) fileprivate var nextRunning: Unmanaged<Frame>?
  @exclusivity(unchecked) private var previousRunning: Unmanaged<Frame>?
  @exclusivity(unchecked) private(set) var isListedRunning = false

  init(treeID: ObjectIdentifier) {
    self.treeID = treeID
  }

  /// Whether the build began in a shared section of the tree's lock (see
  /// `EngineState+SharedSections`): its serial is its thread's, it is not counted among the
  /// tree's running builds, and its frame came from its thread's idle ones.
  @exclusivity(unchecked) var startedShared = false
  /// Whether the build's dependencies in the root pod lack its slot among their dependents
  /// (see `EngineState+UnrecordedReads`).
  @exclusivity(unchecked) var readsUnrecorded = false

  /// Whether the result is cached (`slot != nil`), kept as a flag so the hot path need not
  /// retain the slot to ask.
  @exclusivity(unchecked) private(set) var caches = false
  /// The scope's identity when a clear of it can make this build stale (a caching build in a
  /// scope other than `SingletonScope`), kept as a value so the check retains nothing.
  @exclusivity(unchecked) private(set) var clearableScope: ScopeKey?
  var isBuilding: Bool { phase != .idle && phase != .finished }
  /// Whether this is a thread's own build, running without the lock (see `ThreadBuild.swift`).
  var isThreadBuild: Bool { phase == .runningOnThread }

  func begin(
    info: ProviderInfo, override: ObjectIdentifier?, scope: ScopeInfo, slot: Slot?,
    pod: PodRecord, parent: Frame?, scopeEpoch: Int, requesterScopeEpoch: Int = 0, serial: Int
  ) {
    self.serial = serial
    self.info = info
    self.scope = scope
    self.slot = slot
    self.pod = pod
    retainedPod = pod
    self.scopeEpoch = scopeEpoch
    self.requesterScopeEpoch = requesterScopeEpoch
    memberScope = scope.kind == .singleton ? nil : scope.key
    caches = slot != nil
    clearableScope = caches && scope.kind != .singleton ? scope.key : nil
    if let parent {
      self.parent = parent
      retainedParent = parent
      descend(from: parent, as: info, override: override)
      if slot == nil { enclosingOwner = parent.owner }
    } else {
      self.override = override
      depth = 0
      checkpoint = nil
    }
    phase = .running
  }

  /// Sets the builder, depth and checkpoint of a build of `info` nested in `parent`.
  @inline(__always)
  func descend(from parent: Frame, as info: ProviderInfo, override: ObjectIdentifier?) {
    self.override = override
    depth = parent.depth + 1
    checkpoint =
      EngineState.isCheckpoint(depth: depth)
      ? BuilderKey(provider: info.key, override: override) : parent.checkpoint
  }

  /// The builder this build runs, for comparing builds in a chain.
  var builderKey: BuilderKey? {
    info.map { BuilderKey(provider: $0.key, override: override) }
  }

  /// Gives a general build its engine, before its builder gets a context.
  func attach(to engine: PodEngine) {
    engineReference = Unmanaged.passUnretained(engine.pod)
    retainedEngine = engine
  }

  func invalidate() {
    if phase == .running { phase = .invalidated }
  }

  /// Puts the frame first in the list of running builds that begins at `first`.
  fileprivate func enterRunning(first: inout Unmanaged<Frame>?) {
    let this = Unmanaged.passUnretained(self)
    nextRunning = first
    first?._withUnsafeGuaranteedRef { $0.previousRunning = this }
    first = this
    isListedRunning = true
  }

  /// Takes the frame out of the list of running builds that begins at `first`.
  fileprivate func leaveRunning(first: inout Unmanaged<Frame>?) {
    let next = nextRunning
    if let previousRunning {
      previousRunning._withUnsafeGuaranteedRef { $0.nextRunning = next }
    } else {
      first = next
    }
    let previous = previousRunning
    next?._withUnsafeGuaranteedRef { $0.previousRunning = previous }
    nextRunning = nil
    previousRunning = nil
    isListedRunning = false
  }

  /// Marks a build whose builder threw while it was still valid (see `Phase.failed`).
  func fail() {
    phase = .failed
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
    if startedShared { startedShared = false }
    if readsUnrecorded { readsUnrecorded = false }
    // A thread build whose frame was lent ends here, and is then a general frame.
    if thread != nil { thread = nil }
    forgetBuild()
    pod = nil
    if retainedPod != nil { retainedPod = nil }
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
    @inline(__always) get {
      if caches { return isBuilding ? self : nil }
      guard let enclosingOwner, enclosingOwner.isBuilding else { return nil }
      return enclosingOwner
    }
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

/// The list of running builds a clear looks at (see `Frame.nextRunning`), kept by the tree's
/// state under its lock. Its links retain nothing: a frame is in it only while its build runs.
struct RunningFrames: Sequence {
  private var first: Unmanaged<Frame>?

  var isEmpty: Bool { first == nil }

  mutating func add(_ frame: Frame) { frame.enterRunning(first: &first) }

  mutating func remove(_ frame: Frame) { frame.leaveRunning(first: &first) }

  /// Visits the frames from the last added; a frame visited may change, but not leave the list.
  struct Iterator: IteratorProtocol {
    fileprivate var upcoming: Unmanaged<Frame>?

    mutating func next() -> Frame? {
      guard let frame = upcoming?.takeUnretainedValue() else { return nil }
      upcoming = frame.nextRunning
      return frame
    }
  }

  func makeIterator() -> Iterator { Iterator(upcoming: first) }
}

extension Frame {
  /// Lists `slot` among the build's dependencies, taking the caller's reference.
  @inline(__always)
  func addDependency(_ slot: consuming Slot) {
    // Room for a few at once: the list is handed to the cached instance, so every build starts
    // with none, and growing one by one allocated twice for two dependencies.
    if dependencies.capacity == 0 { dependencies.reserveCapacity(4) }
    dependencies.append(slot)
  }
}
