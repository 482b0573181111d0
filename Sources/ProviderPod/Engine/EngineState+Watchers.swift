/// The state's decisions about who waits for the pod to change (see `Watchers`): iterators of
/// `Pod.instances(of:)`, and builds backing off before a retry. Each runs under the tree's
/// lock and calls no user code; what it leaves to do (wake-ups to run, a continuation to
/// resume, a sleep to cancel) the caller does once the lock is released.
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
          if let entry = seen.entry, watch.pod.slots[watch.key]?.entry === entry { continue }
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
