/// Everything a tree of pods knows, guarded by one lock: each pod's tables (in its
/// ``PodRecord``) and what builds share across the tree. This file holds the tree's own state;
/// its operations are extensions by flow (`EngineState+Slots` and `+BuiltFrom` for the slot
/// graph, `EngineState+Resolution` and `+Finishing` for a build, `+Joining` for a child pod, `+Changes`,
/// `+Shutdown`, `+Watchers`), each in its folder. Every method here runs under that
/// lock and never calls user code: values and records it lets go of are handed back in
/// `released`, to be dropped once the lock is released (dropping one can run a deinit, which
/// may resolve).
///
/// **Unsafe code here, and the invariant it relies on.** `root` is `unowned(unsafe)`: the
/// root's record owns the lock that holds this state (`PodRecord.tree`), and a strong
/// reference would make a cycle that kept the tree forever. The state is destroyed as the
/// root's record is (after its `deinit` has run, with its other fields), when no engine of
/// the tree is left to run a section: nothing reads `root` then. Nothing else here is unsafe.
struct EngineState {
  /// The tree's root pod. Not retained: the root's record owns the tree's lock and with it
  /// this state (`PodRecord.tree`), so it outlives the state.
  unowned(unsafe) let root: PodRecord
  /// Builds whose builder is running, on any thread, in any pod of the tree, except thread
  /// builds (see `Frame.beginThreadBuild`). While there are none, a resolve through a pod can
  /// be nested only in a thread build, which the thread's own stack tells, and the cached
  /// fast path need not look at all: a thread build has nothing to record.
  var runningBuilds = 0
  /// Builds started in the tree so far: each build's serial.
  var builds = 0
  /// Discards made in the tree so far: each marks the slots it reaches with its number.
  var discards = 0
  /// Threads blocked on another thread's build, from inside a build of their own.
  var waits: [Int: Wait] = [:]
  var nextWaitID = 0
  /// The running builds a clear must look at (see `Frame.nextRunning`).
  var listedRunning = RunningFrames()
  /// Frames no build uses any more, kept for reuse.
  var spareFrames: [Frame] = []
  /// Instance watchers and retry back-offs of every pod in the tree, told about every change.
  var watchers = Watchers()
  /// Thread builds whose frame another thread has read under the lock (through a context
  /// handed to it), kept here until the build ends, under the lock: ending it without the
  /// lock and reusing the frame would race with what the other thread read, ordered only by
  /// the frame's reference count.
  var lentThreadBuilds: [ObjectIdentifier: Frame] = [:]
  /// Whether always-new builds through the root may skip the lock; kept up to date here.
  let threadBuildGate: ThreadBuildGate
  /// The async cleanups that discards and shutdowns of the tree started, until each ends: a
  /// shutdown awaits those started before it. Behind a lock of its own (see its header).
  var runningCleanups: RunningCleanups { threadBuildGate.runningCleanups }
  #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
    /// When the automatic check of the bookkeeping runs next, and what it has cost so far.
    var invariantChecks = InvariantChecks()
  #endif

  init(root: PodRecord) {
    self.root = root
    self.threadBuildGate = root.rootGate!
    noteRootOverrides()
  }

  /// Tells the gate whether the root's builds need the general path, after any change to its
  /// overrides or its life.
  func noteRootOverrides() {
    threadBuildGate.rootNeedsLookups(!root.overrides.isEmpty || !root.isAlive)
  }

  /// Forgets a wait once the thread that waited is awake.
  mutating func endWait(_ id: Int) {
    waits[id] = nil
  }

  struct Wait {
    let waiter: Frame
    let target: Frame
    /// Whether the waiter is handed the target's value: it waits for an async build started
    /// through the pod it resolves through. A thread waiting for a synchronous build, or for
    /// an async one started through another pod, looks again once it ends.
    let takesValue: Bool
  }

  /// What a change leaves for the pod to do once the lock is released: events to report, then
  /// `onDiscard` hooks to run, dependents before what they were built from.
  struct Aftermath {
    var events: [ReportedEvent] = []
    var disposals: [CacheEntry] = []
    /// The pods whose instances `disposals` holds, for a shutdown to know whether to await
    /// their hooks (see `RunningCleanups`).
    /// Nil while `disposals` is empty: most changes have no hooks to run, and an empty list
    /// would still cost each of them its release.
    var disposedIn: [PodRecord]?
    var released: [AnyObject] = []
    /// Watchers and back-offs to wake (see `noticeChange`).
    var wakeUps: [() -> Void] = []
  }
}

/// An event and the pod that reports it: in a tree of pods, each reports what it caches.
struct ReportedEvent {
  let pod: PodRecord
  let event: PodEvent
}
