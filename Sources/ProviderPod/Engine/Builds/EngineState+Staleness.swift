/// When a running build's result may no longer be cached.
extension EngineState {
  /// Marks a running build stale and forgets what it was built from so far: its result will
  /// not be cached, and a later discard of something it used must not reach the slot it was
  /// placed in, which may hold a newer instance by then (in a tree of pods, the parent's own).
  ///
  /// The builds that will take its value go stale with it: the build it is nested in, and so
  /// on outward, and for an async build the builds waiting for it. Each would find out only
  /// when the value reached it, and until then a resolve that began after the change could
  /// join one of them (an async build hands its callers its value) and be handed something
  /// built from what the change discarded.
  mutating func invalidate(_ build: Frame, released: inout [AnyObject]) {
    // A loop, not recursion: a chain of async builds each waiting for the next may be
    // thousands long, and the thread making the change may have a small stack.
    var next: Frame? = build
    var waitersOf: [ObjectIdentifier: [Frame]]?
    var waiting: [Frame] = []
    while true {
      while let frame = next, frame.phase == .running {
        frame.invalidate()
        forgetDependencies(of: frame, released: &released)
        if frame.asyncBuild != nil, !waits.isEmpty {
          // Indexed once per change rather than searched per build: a chain of n builds
          // waiting for one another would cost n searches of n waits.
          if waitersOf == nil { waitersOf = waitersTakingValues() }
          if let waiters = waitersOf![ObjectIdentifier(frame)] {
            waiting.append(contentsOf: waiters)
          }
        }
        // A running build's parent is running too, or a build whose context outlived it,
        // which has no owner; a thread build has none either.
        next = frame.parent?.owner
      }
      guard let waiter = waiting.popLast() else { return }
      next = waiter.owner
    }
  }

  /// Drops a stale or failed build's "built from" records.
  @inline(__always)
  func forgetDependencies(of build: Frame, released: inout [AnyObject]) {
    guard let slot = build.slot, !build.dependencies.isEmpty else { return }
    dropDependent(
      slot, from: build.dependencies, unrecordedOutside: build.readsUnrecorded,
      released: &released)
    build.dependencies.removeAll()
    build.readsUnrecorded = false
  }

  /// The builds waiting for each async build that will be handed its value, by the build
  /// they wait for.
  @inline(never)
  private func waitersTakingValues() -> [ObjectIdentifier: [Frame]] {
    var waiters: [ObjectIdentifier: [Frame]] = [:]
    for wait in waits.values where wait.takesValue {
      waiters[ObjectIdentifier(wait.target), default: []].append(wait.waiter)
    }
    return waiters
  }

  /// A clear makes the builds running in its scopes stale, which their scope's count tells
  /// when they end; those whose value other builds take are invalidated now, with those.
  mutating func invalidateBuildsGoneStale(released: inout [AnyObject]) {
    for frame in listedRunning {
      if frame.phase == .running, frame.clearableScope != nil,
        isStale(frame) || Self.isClearedWhereItBelongs(frame)
      {
        invalidate(frame, released: &released)
      }
    }
  }

  /// An override added in a child pod makes stale the builds through it, or a pod below it,
  /// placed in an ancestor, of the provider it overrides or that have read an instance it now
  /// shadows: their value goes to a resolve through the child, which must see the override.
  /// `finish` finds it only when they end, and a resolve after the override could join an
  /// async build around one.
  mutating func invalidateBuildsNowShadowed(released: inout [AnyObject]) {
    for frame in listedRunning {
      guard frame.phase == .running, let slot = frame.slot, let requester = frame.pod,
        requester !== slot.pod, let scope = frame.scope,
        Self.shadowsBuild(in: slot, scope: scope.key, from: requester)
          || frame.dependencies.contains(where: {
            $0.pod !== requester && shadowsSince($0, from: requester, below: $0.pod)
          })
      else { continue }
      invalidate(frame, released: &released)
    }
  }

  /// Whether a pod from `pod` up to the one `slot` is in, that one left out, shadows the
  /// provider built in `slot`.
  private static func shadowsBuild(
    in slot: Slot, scope: ScopeKey, from pod: PodRecord
  ) -> Bool {
    var next: PodRecord? = pod
    while let current = next, current !== slot.pod {
      if current.shadows(slot.info, in: scope) { return true }
      next = current.parent
    }
    return false
  }

  /// Whether a build placed in an ancestor of the pod it goes through, which has already
  /// read an instance of a pod below that ancestor, was cleared in the pod it goes through:
  /// its instance is that pod's (`finish` caches it there), so a clear of its scope there
  /// makes it stale, as `finish` would find.
  private static func isClearedWhereItBelongs(_ frame: Frame) -> Bool {
    guard let slot = frame.slot, let requester = frame.pod, requester !== slot.pod,
      let scope = frame.clearableScope,
      (requester.scopeEpochs[scope] ?? 0) != frame.requesterScopeEpoch
    else { return false }
    return home(placedIn: slot, builtFrom: frame.dependencies) !== slot.pod
  }

  /// Whether a running build's result may no longer be cached: it was invalidated, or its
  /// scope was cleared after it began.
  @inline(__always)
  func isStale(_ frame: Frame) -> Bool { Self.isStale(frame) }

  @inline(__always)
  static func isStale(_ frame: Frame) -> Bool {
    if frame.phase != .running { return frame.phase != .runningOnThread }
    guard let scope = frame.clearableScope, let pod = frame.slot?.pod else { return false }
    return (pod.scopeEpochs[scope] ?? 0) != frame.scopeEpoch
  }
}
