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
    /// The caching of the instance it came from, by the serial of the build that made it:
    /// the watcher holds nothing the pod let go of.
    case cached(serial: Int)
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
