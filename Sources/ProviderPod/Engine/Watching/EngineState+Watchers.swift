/// Where a build stands, for a builder asking whether to go on.
enum BuildStanding {
  /// Its result will be cached.
  case wanted
  /// A clear, an override or a discarded dependency made it stale; a new build would see the
  /// change.
  case invalidated
  /// Every caller left, or the pod went away.
  case abandoned
}

/// The state's decisions about who waits for the pod to change (see `Watchers`): iterators of
/// `Pod.instances(of:)`, and builds backing off before a retry. Each runs under the tree's
/// lock and calls no user code; what it leaves to do (wake-ups to run, a continuation to
/// resume, a sleep to cancel) the caller does once the lock is released.
extension EngineState {
  func standing(of frame: Frame) -> BuildStanding {
    guard (frame.slot?.pod ?? frame.pod)?.isAlive ?? root.isAlive else { return .abandoned }
    guard isStale(frame) else { return .wanted }
    if frame.isBuilding, let build = frame.asyncBuild, build.waiterCount == 0 { return .abandoned }
    return frame.isBuilding ? .invalidated : .abandoned
  }

  /// Called under the lock at the end of every change: marks the watchers whose instance the
  /// change discarded (or that were resolving while it happened), and wakes the back-offs of
  /// builds it made stale. Costs one look per watcher, and nothing while there are none.
  mutating func noticeChange(into after: inout Aftermath) {
    guard !watchers.isEmpty else { return }
    for watch in watchers.instances.values where !watch.isChanged {
      if !watch.isResolving {
        switch watch.seen {
        case .uncached: continue
        case .cached(let seen):
          if watch.pod.slots[watch.key]?.entry?.serial == seen { continue }
        case .unknown: break
        }
      }
      watch.isChanged = true
      if let wakeUp = watch.takeWakeUp() { after.wakeUps.append(wakeUp) }
    }
    for (id, backOff) in watchers.backOffs where standing(of: backOff.frame) != .wanted {
      watchers.backOffs[id] = nil
      after.wakeUps.append(backOff.wake)
    }
  }

  /// `pod` is going away: its watchers end and the back-offs of builds for it stop. Returns
  /// the wake-ups to run after the lock.
  mutating func endWatchers(of pod: PodRecord) -> [() -> Void] {
    if watchers.instances.isEmpty && watchers.backOffs.isEmpty { return [] }
    var wakeUps = watchers.instances.values.filter { $0.pod === pod }.compactMap {
      $0.takeWakeUp()
    }
    // A back-off belongs to the pod its build was placed in: a build started through a child
    // but shared with the child's siblings goes on when that child goes away.
    for (id, backOff) in watchers.backOffs {
      guard let owner = backOff.frame.slot?.pod ?? backOff.frame.pod,
        pod.isAncestor(ofOrSameAs: owner)
      else { continue }
      watchers.backOffs[id] = nil
      wakeUps.append(backOff.wake)
    }
    return wakeUps
  }
}

// MARK: Instance watchers

extension EngineState {
  /// What a watcher's resolve turned out to be, judged against what it handed out last.
  enum WatchedResolve {
    /// Hand the value out.
    case new
    /// The same instance as last time: wait for the next change.
    case unchanged
    /// The pod went away: the sequence ends.
    case podGone
  }

  /// Registers an iterator's watch, so that changes mark it. Returns the id the iterator
  /// passes back; nothing is left to do after the lock.
  mutating func addInstanceWatch(_ watch: InstanceWatch) -> Int {
    // The pod's shutdown, or its going away, ends the watch: it must be where they look.
    join(watch.pod)
    let id = watchers.takeID()
    watchers.instances[id] = watch
    return id
  }

  /// Unregisters a watch. Returns it, for the caller to let go of after the lock.
  mutating func removeInstanceWatch(_ id: Int) -> InstanceWatch? {
    watchers.instances.removeValue(forKey: id)
  }

  /// Parks a watcher's continuation until a change concerns its watch. Returns true when the
  /// caller must instead resume it at once, after the lock: the watch changed already, the pod
  /// went away, the watch stopped, or the task was cancelled.
  mutating func parkInstanceWatch(
    _ watch: InstanceWatch, id: Int, continuation: CheckedContinuation<Void, Never>
  ) -> Bool {
    // Cancellation is read under the lock: a cancellation handler that took the lock before
    // this found nothing parked to wake, so this must see the cancellation.
    guard !watch.isChanged, watch.pod.isAlive, !Task.isCancelled,
      watchers.instances[id] != nil
    else { return true }
    watch.waiting = continuation
    return false
  }

  /// A watcher's task was cancelled. Returns the wake-up of its parked continuation, if any,
  /// to run after the lock.
  mutating func wakeUpCancelled(_ watch: InstanceWatch) -> (() -> Void)? {
    watch.takeWakeUp()
  }

  /// After a watcher's wait: whether it goes on to resolve (the pod is there, the task is not
  /// cancelled, the watch is registered and a change concerns it), in which case the watch is
  /// marked as resolving, so that a change meanwhile marks it again. Nothing is left to do
  /// after the lock.
  mutating func beginResolving(_ watch: InstanceWatch, id: Int) -> Bool {
    guard watch.pod.isAlive, !Task.isCancelled, watch.isChanged,
      watchers.instances[id] != nil
    else { return false }
    watch.isChanged = false
    watch.isResolving = true
    return true
  }

  /// What a watch that found nothing cached in its pod has seen: for a provider this pod never
  /// caches (always-new or weak, in the scope that applies here), nothing to wait for; for
  /// any other, an instance the pod may have let go of already, which the next change must
  /// make it look at again.
  private func uncachedSeen(by watch: InstanceWatch) -> InstanceWatch.Seen {
    let scope = watch.pod.scope(of: watch.info)
    return scope.kind == .alwaysCreateNew || scope.kind == .weak ? .uncached : .unknown
  }

  /// A watcher resolved: notes the instance the pod now caches as the one it saw, and decides
  /// whether the value it got is new. Returns that decision, for the caller to act on after
  /// the lock.
  mutating func endResolving(_ watch: InstanceWatch) -> WatchedResolve {
    watch.isResolving = false
    guard watch.pod.isAlive else { return .podGone }
    let entry = watch.pod.slots[watch.key]?.entry
    let seen = watch.seen
    if watch.isChanged {
      // Something changed while resolving: what the value came from may be gone already, so
      // the next element is resolved at once and handed out whatever it is.
      watch.seen = .unknown
      return .new
    }
    watch.seen = entry.map { .cached(serial: $0.serial) } ?? uncachedSeen(by: watch)
    let isNew: Bool
    switch seen {
    case .unknown: isNew = true
    case .uncached: isNew = entry != nil
    case .cached(let last): isNew = entry?.serial != last
    }
    return isNew ? .new : .unchanged
  }
}

// MARK: Back-offs

extension EngineState {
  /// Registers the back-off of `frame`'s build, whose sleep `wake` cuts short, while the build
  /// is still wanted. Returns its id, or nil when the build is no longer wanted: the caller
  /// then cancels the sleep after the lock.
  mutating func beginBackOff(
    of frame: Frame, wake: @escaping @Sendable () -> Void
  ) -> Int? {
    guard standing(of: frame) == .wanted else { return nil }
    let id = watchers.takeID()
    watchers.backOffs[id] = Watchers.BackOff(frame: frame, wake: wake)
    return id
  }

  /// Unregisters a back-off once its sleep is over (a change may have done so already).
  /// Returns where the build stands, for the caller to go on, start over or give up.
  mutating func endBackOff(_ id: Int, of frame: Frame) -> BuildStanding {
    watchers.backOffs[id] = nil
    return standing(of: frame)
  }
}
