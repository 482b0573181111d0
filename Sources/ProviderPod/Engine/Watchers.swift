/// Who waits for the pod to change: iterators of `Pod.instances(of:)`, and async builds backing
/// off before their next attempt. Kept in the engine's state, so a change and the check of
/// whether it concerns a watcher happen under one lock: a discard can never slip in between a
/// watcher's resolve and its note of what it got.
struct Watchers {
  var instances: [Int: InstanceWatch] = [:]
  var backOffs: [Int: BackOff] = [:]
  var nextID = 0

  /// A build waiting out its back-off; `wake` ends the wait early (it cancels the sleep).
  struct BackOff {
    let frame: Frame
    let wake: @Sendable () -> Void
  }

  var isEmpty: Bool { instances.isEmpty && backOffs.isEmpty }

  mutating func takeID() -> Int {
    nextID += 1
    return nextID
  }
}

/// What one instance watcher last handed out, and whether the pod changed since. Every field
/// is guarded by the engine's lock.
final class InstanceWatch {
  /// What the watcher knows of the instance it handed out last.
  enum Seen {
    /// Nothing yet, or a change happened while it resolved: whatever it got may already be
    /// gone, so the next resolve is handed out whatever it returns.
    case unknown
    /// The instance was not cached (an always-new provider, a weak-scope value): a resolve
    /// that again finds nothing cached has nothing new to hand out.
    case uncached
    /// The cached entry it came from, held weakly so the watcher never keeps an instance the
    /// pod let go of.
    case cached(Weak)
  }

  struct Weak {
    weak var entry: CacheEntry?
  }

  let key: ProviderKey
  /// The pod watched: the instance is the one it resolves (its own, or its parent's).
  let pod: PodRecord
  var seen = Seen.unknown
  /// Set by a change that discarded the instance, or happened while the watcher resolved.
  var isChanged = true
  var isResolving = false
  /// The iterator waiting for a change.
  var waiting: CheckedContinuation<Void, Never>?

  init(key: ProviderKey, pod: PodRecord) {
    self.key = key
    self.pod = pod
  }

  /// Takes the waiting iterator, as a wake-up to run once the lock is released.
  func takeWakeUp() -> (() -> Void)? {
    guard let waiting else { return nil }
    self.waiting = nil
    return { waiting.resume() }
  }
}

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
