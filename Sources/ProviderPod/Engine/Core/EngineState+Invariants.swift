internal import CProviderPod

extension EngineState {
  /// Stops on the first broken invariant after a change, a finished build or a pod going away,
  /// the way swift-collections' `_checkInvariants()` does: a bookkeeping bug shows where it
  /// happens rather than as a stale instance much later.
  ///
  /// - Built with `PROVIDERPOD_INTERNAL_CHECKS` (`-Xswiftc -DPROVIDERPOD_INTERNAL_CHECKS`, in
  ///   any configuration, as swift-collections' `COLLECTIONS_INTERNAL_CHECKS`): the whole tree
  ///   after every change, whatever its size. A tree of n pods then costs n per change; for
  ///   tests and CI.
  /// - Other debug builds: the whole tree once every so many changes, as many as the last
  ///   check visited pods and slots, divided by `debugCheckWorkPerChange`. The check then
  ///   costs a constant per change on average, whatever the tree's size: a unit test's small
  ///   tree is checked after every change, a server's thousands of request pods after every
  ///   few hundred. Checking the whole tree after every change made a debug server slow down
  ///   with the square of its pods. A test can ask for every change on its own tree
  ///   (`Pod.checkBookkeepingAfterEveryChange()`), as the model tests do, so that the plain
  ///   test build runs them with the checks the flag gives, and no build of its own is needed.
  /// - Release builds: nothing.
  @inline(__always)
  mutating func checkInvariantsInDebugBuilds() {
    #if PROVIDERPOD_INTERNAL_CHECKS
      checkInvariants()
    #elseif DEBUG
      invariantChecks.changesUntilNext -= 1
      guard invariantChecks.changesUntilNext <= 0 else { return }
      let visited = checkInvariants()
      invariantChecks.changesUntilNext =
        invariantChecks.everyChange ? 0 : visited / Self.debugCheckWorkPerChange
    #endif
  }

  /// The pods and slots the automatic check may visit per change, on average, in a debug
  /// build without `PROVIDERPOD_INTERNAL_CHECKS`: a tree this size or smaller is checked after
  /// every change.
  static let debugCheckWorkPerChange = 32

  #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
    /// Checks the whole tree, stopping on a broken invariant. Returns how many pods and slots
    /// it visited.
    @discardableResult
    private mutating func checkInvariants() -> Int {
      guard root.isAlive else { return 0 }
      let pods = root.subtree
      let visited = pods.reduce(pods.count) { $0 + $1.slots.count }
      invariantChecks.work += visited
      // Some things hold only at rest, when no thread is between two steps: a build running
      // in one pod may depend on what a child shadows until it is placed there, may hold a
      // slot it has yet to record anything in, and a thread woken from a wait removes its
      // wait after the build it waited for ended. The tests check those at chosen points.
      let problems = invariantViolations(atRest: false, in: pods)
      precondition(
        problems.isEmpty,
        "ProviderPod internal error: \(problems.joined(separator: "; "))")
      return visited
    }
  #endif

  /// The engine's bookkeeping problems, empty when it is sound: every "built from" link is
  /// counted exactly once on both sides, in whichever pods of the tree its ends are; every
  /// link to a shared instance points at an ancestor's live instance; every cached instance in
  /// a clearable scope is a member of it; families know their members; no slot is kept
  /// without a use. Tests check it after operations (`pod.invariantViolations`), in the
  /// manner of swift-collections' `_checkInvariants()`, reporting problems with `#expect`.
  func invariantViolations(atRest: Bool = true) -> [String] {
    invariantViolations(atRest: atRest, in: root.isAlive ? root.subtree : [])
  }

  /// `invariantViolations(atRest:)` of a tree whose pods are already listed.
  private func invariantViolations(atRest: Bool, in pods: [PodRecord]) -> [String] {
    var problems: [String] = []
    var expected: [SlotID: [SlotID: Int]] = [:]
    var running = 0
    var sharedRunning = 0
    // Reads of the root that a request pod's instance or build recorded only on its side are
    // not counted there (see `EngineState+UnrecordedReads`).
    func checkDependencies(
      of dependent: Slot, _ dependencies: [Slot], doing: String, unrecordedOutside: Bool
    ) {
      if unrecordedOutside, !dependent.pod.hasUnrecordedReads || dependent.pod.parent !== root {
        problems.append("\(dependent.info.name): unrecorded reads in a pod not marked for them")
      }
      for dependency in dependencies {
        let name = dependent.info.name
        if dependency.pod.slots[dependency.key] !== dependency {
          problems.append("\(name): \(doing) \(dependency.info.name), which has no slot")
        }
        if !dependency.pod.isAncestor(ofOrSameAs: dependent.pod) {
          problems.append("\(name): \(doing) \(dependency.info.name) of a pod not above it")
        }
        if unrecordedOutside, dependency.pod !== dependent.pod {
          if !dependency.sharesUnrecorded {
            problems.append("\(dependent.info.name): read \(dependency.info.name) unrecorded")
          }
          continue
        }
        expected[dependency.id, default: [:]][dependent.id, default: 0] += 1
      }
    }
    for pod in pods {
      if !pod.isAlive { problems.append("a released pod is still in the tree") }
      for child in pod.children where child.parent !== pod {
        problems.append("a child pod listed under another parent")
      }
      if pod.parent != nil, pod.stripedChildren != nil {
        problems.append("a child pod lists its children by stripe, as only a root does")
      }
      if pod.parent == nil, pod.firstChild != nil {
        problems.append("a root lists a child outside its lists by stripe")
      }
      for head in pod.childListHeads {
        if head.previousSibling != nil {
          problems.append("a pod's first child has a sibling before it")
        }
        var child: PodRecord? = head
        while let current = child {
          if let next = current.nextSibling, next.previousSibling !== current {
            problems.append("a child pod's next sibling does not lead back to it")
          }
          if pod.stripedChildren != nil, current.stripe != head.stripe {
            problems.append("a root's child listed under another stripe")
          }
          if !current.isJoined { problems.append("a child pod listed before it joined") }
          child = current.nextSibling
        }
      }
      if pod.slots.filesAProviderTwice { problems.append("a provider filed twice in one pod") }
      for (key, slot) in pod.slots.filed {
        let name = slot.info.name
        if slot.key != key { problems.append("\(name): slot filed under another key") }
        if slot.pod !== pod { problems.append("\(name): slot filed in another pod") }
        // Between two steps of a build or a weak instance's rebuild, a slot may be empty
        // until the next step fills or prunes it.
        if slot.isUnused, atRest, !slot.isKept {
          problems.append("\(name): slot kept with nothing in it")
        }
        if slot.isKept, slot.info.family != nil {
          problems.append("\(name): a family member's slot kept for good")
        }
        if let family = slot.info.family, pod.familySlots[family.key]?.contains(key) != true {
          problems.append("\(name): missing from its family's members")
        }
        if let target = slot.linkTarget {
          if slot.entry == nil || slot.entry?.isSame(as: target.entry) != true {
            problems.append("\(name): link to an instance its owner no longer has")
          }
          if target.pod === pod || !target.pod.isAncestor(ofOrSameAs: pod) {
            problems.append("\(name): link to a pod not above it")
          }
          expected[target.id, default: [:]][slot.id, default: 0] += 1
        } else if let entry = slot.entry {
          checkDependencies(
            of: slot, entry.dependencies, doing: "built from",
            unrecordedOutside: slot.readsUnrecorded)
          let scope = entry.scope(of: slot.info)
          if scope.kind != .singleton, slot.memberIndex < 0 {
            problems.append("\(name): cached in \(scope.name) but not a member of it")
          }
        } else if slot.memberIndex >= 0 {
          problems.append("\(name): a member of a scope with nothing cached")
        }
        if slot.readsUnrecorded, slot.entry == nil || slot.linkTarget != nil {
          problems.append("\(name): marked as reading the root unrecorded with nothing built")
        }
        if let build = slot.build, build.isBuilding {
          // A build begun in a shared section is not counted in `runningBuilds`.
          if build.startedShared { sharedRunning += 1 } else { running += 1 }
          let valueTaken = build.parent != nil || build.asyncBuild != nil
          let changeMayMiss = build.clearableScope != nil || build.pod !== slot.pod
          let listable = !build.startedShared && valueTaken && changeMayMiss
          if build.isListedRunning != listable {
            problems.append("\(name): its build is wrongly in or out of the list a clear looks at")
          }
          if atRest {
            checkDependencies(
              of: slot, build.dependencies, doing: "building from",
              unrecordedOutside: build.readsUnrecorded)
          }
        }
      }
      if pod.scopeMembers.keepsAnEmptyList {
        problems.append("empty membership kept for a scope")
      }
      for (scope, members) in pod.scopeMembers.all {
        for (index, slot) in members.enumerated()
        where pod.slots[slot.key] !== slot || slot.entry?.scopeKey(of: slot.info) != scope
          || slot.linkTarget != nil || slot.memberIndex != index
        {
          problems.append("\(slot.info.name): member of a scope it is not cached in")
        }
      }
      for (family, members) in pod.familySlots {
        if members.isEmpty { problems.append("empty member list kept for a family") }
        for key in members where pod.slots[key]?.info.family?.key != family {
          problems.append("\(key.address): listed as a family member without a slot")
        }
      }
    }
    for pod in pods {
      for slot in pod.slots {
        let wanted = expected[slot.id] ?? [:]
        let counts = slot.dependents.counts
        // A stale build that is no longer its slot's newest still holds counts until it ends,
        // so counts may exceed what is found here only while builds run.
        for (dependent, count) in wanted where (counts[dependent] ?? 0) < count {
          problems.append("\(slot.info.name): dependent count too low")
        }
        if runningBuilds + sharedRunning == 0 && counts != wanted {
          problems.append("\(slot.info.name): dependents \(counts) but found \(wanted)")
        }
      }
    }
    if runningBuilds < running { problems.append("running builds undercounted") }
    var listed = 0
    for frame in listedRunning {
      listed += 1
      if listed > runningBuilds { break }
      if !frame.isBuilding || frame.startedShared || !frame.isListedRunning
        || (frame.clearableScope == nil && frame.pod === frame.slot?.pod)
      {
        problems.append("a frame in the list of running builds is not one a clear looks at")
      }
    }
    if listed > runningBuilds { problems.append("more builds listed as running than run") }
    if atRest, runningBuilds + sharedRunning == 0, !waits.isEmpty {
      problems.append("waits left with no build running")
    }
    for frame in spareFrames where frame.phase != .idle {
      problems.append("a spare frame is not idle")
    }
    for frame in lentThreadBuilds.values where !frame.isBuilding {
      problems.append("a lent thread build is kept after it ended")
    }
    problems += publishedValueViolations(in: pods)
    return problems
  }
}

/// The automatic check's schedule and cost (see `checkInvariantsInDebugBuilds`).
struct InvariantChecks {
  /// Changes left before the next check of the whole tree, in a debug build without
  /// `PROVIDERPOD_INTERNAL_CHECKS`.
  var changesUntilNext = 0
  /// Pods and slots the automatic checks have visited, for tests that they stay cheap.
  var work = 0
  /// Whether every change checks the whole tree, whatever its size, as with
  /// `PROVIDERPOD_INTERNAL_CHECKS`: set by tests on their own tree.
  var everyChange = false
}

extension Pod {
  /// The engine's bookkeeping problems, for tests that report them with `#expect`. Covers the
  /// whole tree of pods this one belongs to.
  var invariantViolations: [String] {
    engine.state.withLock { $0.invariantViolations() }
  }

  /// How many providers this pod keeps a slot for, for tests of what a pod retains.
  var slotCount: Int {
    let pod = engine.pod
    return engine.state.withLock { _ in pod.slots.count }
  }

  /// Pods and slots the automatic checks of this pod's tree have visited so far (debug
  /// builds), for tests that the checks cost what a change touched, not the whole tree.
  var invariantCheckWork: Int {
    #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
      engine.state.withLock { $0.invariantChecks.work }
    #else
      0
    #endif
  }

  /// Makes every change to this pod's tree, a finished build and a pod going away check the
  /// whole tree's bookkeeping, as building with `PROVIDERPOD_INTERNAL_CHECKS` does, in a
  /// debug build (nothing in release): for tests whose trees stay small and that change them
  /// thousands of times, such as the model tests, so that a bookkeeping bug stops the test at
  /// the step that made it.
  func checkBookkeepingAfterEveryChange() {
    #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
      engine.state.withLock { state in
        state.invariantChecks.everyChange = true
        // The next change checks, rather than the one the last check scheduled.
        state.invariantChecks.changesUntilNext = 0
      }
    #endif
  }

  /// How many times the lock of this pod's tree was taken for a section that runs alone
  /// (debug builds; 0 in release), for tests that a request pod's own work runs beside its
  /// siblings'. Read without the lock, which would count itself: only while no other thread
  /// uses the tree.
  var exclusiveSectionsEntered: Int {
    #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
      engine.state.exclusiveSectionsEntered
    #else
      0
    #endif
  }

  /// Runs `body` holding the lock that a request's shared sections take to write the root's
  /// "built from" records (`pp_crossing_lock`), for tests that a request whose reads of the
  /// root go unrecorded never takes it: a request on another thread must finish meanwhile.
  func holdingCrossingLock<Result>(_ body: () -> Result) -> Result {
    pp_crossing_lock(engine.treeWords)
    defer { pp_crossing_unlock(engine.treeWords) }
    return body()
  }

  /// How many child pods this pod has alive and listed (those used at least once), for tests
  /// that children leave nothing behind.
  var childCount: Int {
    let pod = engine.pod
    return engine.state.withLock { _ in pod.children.count }
  }

  /// Whether the pod is among its parent's children yet: a child joins at its first use,
  /// and `childCount` counts only those that have (a child never used holds nothing).
  var hasJoinedTree: Bool {
    let pod = engine.pod
    return engine.state.withLock { _ in pod.isJoined }
  }
}

extension Pod {
  /// How many frames wait for reuse, for tests that builds allocate no frame of their own.
  var spareFrameCount: Int {
    engine.state.withLock { $0.spareFrames.count }
  }
}

/// The current thread's idle frames, for tests that always-new builds allocate no frame of
/// their own and that a thread lets go of its frames when it ends.
enum ThreadSpareFrames {
  static var count: Int { ThreadRecord.current.spareCount }

  static var first: AnyObject? { ThreadRecord.current.spares.first }
}
