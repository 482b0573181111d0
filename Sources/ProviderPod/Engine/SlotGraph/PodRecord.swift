internal import CProviderPod

/// A pod's tables: its record in its tree's state, which holds the slot of each provider it
/// knows (`Slot.swift`), and what the pod's engine (`PodEngine`, a view of the record) keeps
/// of its tree.
///
/// **Unsafe code here, and the invariant it relies on.** The mutable fields of `PodRecord` and
/// of `Slot` are exempt from dynamic exclusivity checks (`@exclusivity(unchecked)`): a cached
/// resolve reads `PodRecord.slots` and `Slot.entry`, and the checks cost it 84 of its 297
/// instructions (a new pod with 100 dependencies 11% more). Access is exclusive all the same,
/// because every field is read and written only while holding the tree's lock (one
/// `Locked<EngineState>` per tree), by `EngineState`'s methods and by closures passed to
/// `withLock`, but for the three named below; none of them calls user code or hands out an
/// `inout` access that outlives the call. A request pod's shared
/// sections (`EngineState+SharedSections`), which never run beside a `withLock` section, write
/// only their own pod's record and slots, under that pod's lock, and in the root pod only the
/// list of children of their pod's stripe, under the same lock (every pod in that list takes
/// it), and, for a build already recorded there, its slots' `dependents` and `recordedBy`,
/// under the tree's crossing lock; what else they read, only `withLock` sections write. A
/// root's `stripedChildren`, the heads of those lists, is a typed pointer: allocated under the
/// tree's lock before its first child joins and never moved, so shared sections read it
/// without a reference count, and freed by the root's `deinit`, once every child has removed
/// itself from the lists (each holds its parent, and its pod going away unlinks it first).
/// Three fields are read without the lock: `PodRecord.owner` of a root or an observed pod,
/// written once, by the pod's initializer, before anything else can reach the record (another
/// child's `owner` and `ownerAddress` are guarded by the pod's own lock instead, also outside
/// any section of the tree's lock: see `PodRecord+Owner.swift`); `PodRecord.isJoined`, read by
/// the pod's own deinit, after every thread that could have written it (under the lock) has
/// let go of the pod (see `PodEngine.shutDown`); and `PodRecord.parent`, written by the
/// initializer, before anything else can reach the record, and cleared only by a `deinit`
/// holding the only reference to the record it clears (its own, or an ancestor's whose last
/// reference it took over), when nothing else can read it. A root's `tree`, the tree's lock and
/// state, is written once by `makeTree`, before the record is shared, and let go of only as
/// the root's record goes: when no record of the tree is left to use it (each holds its
/// parent's, up to the root's).
///
/// **The engine's fields, and the invariant they rely on.** `treeRoot`, the root's record, is
/// held unowned: every record holds its parent's, up to the root's, through a field that only
/// the record's own `deinit` clears (`parent`), so the root's record outlives every record of
/// the tree, and every engine, each a view of one. `treeState` is the addresses of the tree's
/// lock and state (`LockHandle`), and `treeWords` the address of the tree's shared words, in
/// the root's `ThreadBuildGate`: the root's record owns the lock (`tree`) and holds the gate
/// for as long as it lives, so both stay valid for every use through an engine, and for a
/// copy of `treeState` that a call on the engine takes, for the length of that call (the only
/// one: the cancellation handler of `wait`, in `PodEngine+Async.swift`). A root's `treeState`
/// and `treeRoot` are written once, by `makeTree`, before the record is shared; a child's by
/// its initializer. `parentPod` is exempt from dynamic exclusivity checks: it is written by the
/// child `Pod`'s initializer, before the pod is shared, and taken out only by that pod's
/// `deinit`, when nothing can read it (see `ParentRelease`); `Pod.parent` reads it through a
/// live pod only.

/// One pod's tables inside its tree's engine state: the pod's cached instances, overrides and
/// scope bookkeeping, and where it sits among its parent and children.
///
/// Every pod of a tree shares one lock, and every field here is guarded by it (and, in a request
/// pod's shared sections, by the smaller locks the header above names). A tree with one
/// lock is what lets a discard in a parent reach what a child built from the parent's
/// instance in the same step, and lets a child share its parent's build in progress.
final class PodRecord {
  /// The parent pod's record; nil for a root. Written only by the initialiser and by a
  /// record's `deinit`, which takes its parent out, and its parent's parent while it holds the
  /// only reference, to let go of a chain of records in a loop (see `deinit`).
  @exclusivity(unchecked) private(set) var parent: PodRecord?
  /// 0 for a root pod; a child is one deeper than its parent.
  let depth: Int
  /// The scopes this pod owns (given when it was made, and their descendants): a provider in
  /// one of them is built and cached here rather than shared with the parent.
  let ownedScopes: OwnedScopes
  /// The pod's own observer, boxed (see `ObserverBox`); nil for most pods.
  let observer: ObserverBox?
  /// The tree's shared words, for a root: its table of published instances, which slots of
  /// the tree's pods publish to and take themselves out of (see `SharedReads.swift`). Nil for
  /// a child, whose tree reaches them through its root (`EngineState.threadBuildGate`,
  /// `treeWords`): a reference of its own would be written as each request's pod is
  /// made and let go of, by every request on every core.
  let rootGate: ThreadBuildGate?
  /// The tree's lock and state, for a root; nil for a child. Owned here, and by nothing else:
  /// every record of the tree holds its parent's, and so on up to the root's, so the state
  /// lives as long as any record (and any engine, a view of one), and a request pod's record
  /// keeps it unretained (`treeState`: a retain was a write, made and undone by every request
  /// on every core, to a count they all share). The state refers to the root's record without
  /// a retain (see `EngineState.root`), so the two make no cycle. Set by `makeTree`, before
  /// the record is shared, and never again.
  @exclusivity(unchecked) private(set) var tree: Locked<EngineState>?
  /// Whether the pod has an observer of its own (not one of an ancestor's).
  var hasObserver: Bool {
    @inline(__always) get { observer != nil }
  }
  /// The pod, for builders that ask for it (`BuildContext.pod`) and for warm-ups. The pod
  /// rather than its record: a weak reference gives its target a side table, which makes
  /// every retain and release of it slower, and records are retained on every build (as the
  /// pod's engine), pods are not. A root's is set by its initializer, before anything else can read it, and read
  /// without the lock; another child's only when first asked for, from `ownerAddress`, under
  /// the pod's own lock (`PodRecord+Owner.swift`).
  weak var owner: Pod?
  /// A child pod's address, until `owner` is set from it or the pod goes away: the side
  /// table of a weak reference is an allocation, and a request's pod made one whether or not
  /// a builder asked for the pod (about 500 instructions a request). Written by the pod's
  /// initializer and then only under the pod's own lock (see `PodRecord+Owner.swift`).
  @exclusivity(unchecked) var ownerAddress: UnsafeMutableRawPointer?

  // The empty tables are made with `()`, not a `[:]` literal, which runs the literal's
  // initializer (about 20 instructions a table, and a request's pod makes all of them).

  /// Per provider: its cached instance (or a link to an ancestor's), build in progress, and
  /// what was built from it. Read on every cached resolve, so exempt from the dynamic
  /// exclusivity check a class's stored property would otherwise cost; the lock is what
  /// guarantees exclusive access.
  @exclusivity(unchecked) var slots = SlotTable()
  /// Overrides by provider key, and family overrides by family key.
  @exclusivity(unchecked) var overrides = [ProviderKey: OverrideRecord]()
  /// For each scope that can be cleared, the slots with an instance cached in it.
  @exclusivity(unchecked) var scopeMembers = ScopeMembers()
  /// For each family, its members that have a slot.
  @exclusivity(unchecked) var familySlots = [ProviderKey: Set<ProviderKey>]()
  /// How often each scope has been cleared: a build that began before a clear of its scope
  /// is stale, without the clear having to find every running build.
  @exclusivity(unchecked) var scopeEpochs = [ScopeKey: Int]()
  /// The live child pods that have joined the tree, as a list through their siblings (see
  /// `PodRecord+Children.swift`): a request's pod joins and leaves by relinking its
  /// neighbours, with no table to hash into. Each child removes itself when it goes away or
  /// is shut down, and its `Pod` going away always does that first, so the list never keeps
  /// a child's tables past its pod.
  @exclusivity(unchecked) var firstChild: PodRecord?
  @exclusivity(unchecked) var nextSibling: PodRecord?
  @exclusivity(unchecked) var previousSibling: PodRecord?
  /// A root's children are listed apart, one list per lock of the pods' shared sections
  /// (`pp_pod_stripe`), rather than from `firstChild`: a request's pod joins and leaves its
  /// list under the lock its shared sections already hold, where one list would make every
  /// request on every core write its head, under a lock they all take. The heads, made (in an
  /// exclusive section) as the first child joins, and freed by the root's `deinit`; nil for
  /// every other pod.
  @exclusivity(unchecked) var stripedChildren: UnsafeMutablePointer<PodRecord?>?
  /// False once the pod is gone or shut down: builds still running then cache nothing in it.
  @exclusivity(unchecked) var isAlive = true
  /// Whether the pod is listed among its parent's children (always, for a root). A child
  /// joins at its first locked operation (`EngineState.join`), not when it is made: until
  /// then it holds nothing a walk from its parent could find, and a request's pod that is
  /// made and let go of unused never takes the lock. Written only under the lock and never
  /// reset; read without it only by the pod going away (see `PodEngine.shutDown`).
  @exclusivity(unchecked) var isJoined: Bool
  /// Whether a slot or running build of this pod may read the root's instances unrecorded
  /// there (see `EngineState+UnrecordedReads`): a walk that needs those records looks only
  /// at the pods that have some.
  @exclusivity(unchecked) var hasUnrecordedReads = false
  /// The shutdown that ended this pod's life, its own or an ancestor's; nil until one begins.
  @exclusivity(unchecked) var shutdown: ShutdownProgress?
  /// How many slots the table may hold before the next sweep for slots of providers that are
  /// gone (see `EngineState.sweepSlotsOfGoneProviders`).
  @exclusivity(unchecked) var nextSlotSweep = 1_024
  /// For an observed pod only: the provider cached last for each declaration and name, to
  /// notice a provider made again by the same expression (see `Lookalikes.swift`).
  @exclusivity(unchecked) var lookalikes = LookalikeIndex()

  // MARK: What the pod's engine keeps of its tree (see the header)

  /// The state of the whole tree of pods, shared with the parent and the children, through
  /// its lock's addresses: the lock is owned by the root's record (`tree`), which this record
  /// keeps. A child pod retained a reference to it as it was made and released it as it
  /// went, and each use of one read out of an unretained field was retained again: writes
  /// every request on every core made to one count. Nil only while a root is being made.
  @exclusivity(unchecked) private(set) var treeState: LockHandle<EngineState>?
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
  /// take it as an argument: read from `parent` in them, it was retained and released, a
  /// write to a reference count that every request on every core shares, where a constant of
  /// the record is passed on without one. Unretained, since `parent` keeps it (see the
  /// header), and lent to each use (`PodEngine.withTreeRoot`), since a reference read out of
  /// it is retained. Nil only while a root is being made.
  @exclusivity(unchecked) private(set) var treeRoot: Unmanaged<PodRecord>?
  /// The tree's shared words, in its gate: what cached reads and shared sections use. An
  /// address rather than a reference, which a child would write as it is made and let go of
  /// (see the header for why the address stays valid).
  let treeWords: UnsafeMutablePointer<pp_tree_words>
  /// Frames of every pod in the tree carry this, to be found on the thread that runs them:
  /// the identity of the tree's gate, which lives as long as the tree.
  let treeID: ObjectIdentifier
  /// A child pod's parent `Pod`, which the child keeps alive (`Pod.parent`); nil for a root.
  /// Kept here rather than in the `Pod`, so that the pod's `deinit` can move it out and let
  /// go of a chain of pods one after the other (see `Pod.deinit`). Only the child `Pod`
  /// writes it (see the header).
  @exclusivity(unchecked) var parentPod: Pod?
  /// The clock and test settings, inherited by children; nil for the standard ones, so that
  /// an app's pod and its children (one per request, on a server) hold no reference for them.
  let givenSettings: PodSettings?

  /// A root pod's record. Its tree is made by `makeTree`, once its overrides are in.
  init(observer: ObserverBox?, settings: PodSettings?) {
    parent = nil
    let gate = ThreadBuildGate.make()
    rootGate = gate
    treeWords = gate.words
    treeID = ObjectIdentifier(gate)
    depth = 0
    ownedScopes = OwnedScopes()
    self.observer = observer
    isJoined = true
    givenSettings = settings
    isObserved = observer != nil
    mayBuildOnThread = observer == nil
    runsSharedSections = false
  }

  /// A child pod's record, in its parent's tree: what it keeps of the tree, it copies from
  /// its parent's. `parent` is consumed into the record's own reference: a request's pod is
  /// made from the app's record, and every other retain of it is a write to the app record's
  /// reference count, which every request on every core writes.
  init(parent: consuming PodRecord, ownedScopes: OwnedScopes, observer: ObserverBox?) {
    rootGate = nil
    depth = parent.depth + 1
    givenSettings = parent.givenSettings
    treeState = parent.treeState
    treeID = parent.treeID
    isObserved = observer != nil || parent.isObserved
    mayBuildOnThread = false
    runsSharedSections = parent.parent == nil
    treeRoot = parent.treeRoot
    treeWords = parent.treeWords
    self.parent = consume parent
    self.ownedScopes = ownedScopes
    self.observer = observer
    isJoined = false
  }

  /// Makes the tree's lock and state, owned by this root record (see `tree`), before the
  /// record is shared.
  func makeTree() {
    treeRoot = .passUnretained(self)
    let tree = Locked(EngineState(root: self), sharedSections: treeWords)
    self.tree = tree
    treeState = tree.handle
  }

  /// Lets go of the parent's record, and of each ancestor's whose only reference it then
  /// holds, one after the other: released from one another's `deinit`, a chain of records
  /// thousands deep (pods made each from the one before) overflowed a small thread stack when
  /// something other than the chain's pods let go of the deepest record last, such as the
  /// slot a clear on another thread took out of it. A record so taken is released here with
  /// its parent already taken out, so its own `deinit` finds none. The app's record, which
  /// every request's record shares, is only read here (its uniqueness), never written, unless
  /// this releases the last reference to it.
  deinit {
    if let stripedChildren {
      // Every child removed itself as its pod went: the heads are all nil.
      stripedChildren.deinitialize(count: Self.stripeCount * Self.headStride)
      stripedChildren.deallocate()
    }
    var next = parent.take()
    while var record = next.take(), isKnownUniquelyReferenced(&record) {
      next = record.parent.take()
    }
  }

  /// Whether this pod is `other` or one of its ancestors.
  func isAncestor(ofOrSameAs other: PodRecord) -> Bool {
    var next: PodRecord? = other
    while let pod = next, pod.depth >= depth {
      if pod === self { return true }
      next = pod.parent
    }
    return false
  }

  /// This pod and every pod below it, parents before children.
  var subtree: [PodRecord] {
    var result: [PodRecord] = [self]
    var index = 0
    while index < result.count {
      result.append(contentsOf: result[index].children)
      index += 1
    }
    return result
  }

  /// The override of `provider` that applies in this pod: the nearest pod's, from this one
  /// up, and in each pod a member's own override before its family's.
  func override(for provider: ProviderInfo) -> (record: OverrideRecord, pod: PodRecord)? {
    if !overrides.isEmpty, let record = ownOverride(for: provider) { return (record, self) }
    // Recursion rather than a loop: each pod is borrowed from its child's `parent`, where a
    // loop variable retained and released every pod on the way up (3% of a request's child
    // pod). Pods nest a few deep; a chain deeper than 32 is walked by a loop from here, so
    // that no depth of nesting can exhaust a thread's stack.
    guard depth <= 32 else { return overrideWalkingUp(for: provider) }
    return parent?.override(for: provider)
  }

  /// `override(for:)` for a child of `root`, which the caller holds: the root is read from
  /// the argument, where a read of `parent` retained and released it, three writes per request
  /// to the app record's count that every request on every core makes.
  @inline(__always)
  func override(
    for provider: ProviderInfo, childOf root: PodRecord
  ) -> (record: OverrideRecord, pod: PodRecord)? {
    if !overrides.isEmpty, let record = ownOverride(for: provider) { return (record, self) }
    if !root.overrides.isEmpty, let record = root.ownOverride(for: provider) {
      return (record, root)
    }
    return nil
  }

  /// `override(for:)` for the ancestors of a deeply nested pod, one at a time.
  private func overrideWalkingUp(
    for provider: ProviderInfo
  ) -> (record: OverrideRecord, pod: PodRecord)? {
    var next = parent
    while let pod = next {
      if !pod.overrides.isEmpty, let record = pod.ownOverride(for: provider) {
        return (record, pod)
      }
      next = pod.parent
    }
    return nil
  }

  /// The scope `provider`'s instances have in this pod: the applying override's, if it gives
  /// one, otherwise the provider's own.
  func scope(of provider: ProviderInfo) -> ScopeInfo {
    override(for: provider)?.record.scope ?? provider.scope
  }

  /// This pod's own override of `provider`, or of its family.
  func ownOverride(for provider: ProviderInfo) -> OverrideRecord? {
    if let own = overrides[provider.key] { return own }
    if let family = provider.family { return overrides[family.key] }
    return nil
  }

  /// Whether this pod or one of its ancestors owns `scope`.
  func ownsInChain(_ scope: ScopeKey) -> Bool {
    var next: PodRecord? = self
    while let pod = next {
      if pod.ownedScopes.contains(scope) { return true }
      next = pod.parent
    }
    return false
  }

  /// Lists `slot`, which has just cached an instance in `scope`, among the scope's members.
  func addMember(_ slot: Slot, of scope: ScopeKey) {
    scopeMembers.add(slot, of: scope)
  }

  /// Takes `slot` out of `scope`'s members, moving the last member into its place.
  func removeMember(_ slot: Slot, of scope: ScopeKey) {
    scopeMembers.remove(slot, of: scope)
  }

  /// Whether this pod itself shadows `provider`, whose instance is in `scope`: it overrides
  /// the provider (or its family) or owns the scope.
  func shadows(_ provider: ProviderInfo, in scope: ScopeKey) -> Bool {
    ownOverride(for: provider) != nil || ownedScopes.contains(scope)
  }

  /// Whether a provider with an instance in `scope` and the given override is built here
  /// rather than shared from the parent: this pod overrides it or owns its scope.
  func shadows(scope: ScopeKey, overriddenIn overridePod: PodRecord?) -> Bool {
    overridePod === self || ownedScopes.contains(scope)
  }
}
