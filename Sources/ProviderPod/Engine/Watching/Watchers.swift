/// Who waits for the pod to change: iterators of `Pod.instances(of:)`, and async builds backing
/// off before their next attempt. Kept in the engine's state, so a change and the check of
/// whether it concerns a watcher happen under one lock: a discard can never slip in between a
/// watcher's resolve and its note of what it got.
struct Watchers {
  var instances: [Int: InstanceWatch] = [:] {
    didSet { isEmpty = instances.isEmpty && backOffs.isEmpty }
  }
  var backOffs: [Int: BackOff] = [:] {
    didSet { isEmpty = instances.isEmpty && backOffs.isEmpty }
  }
  var nextID = 0
  /// Whether nobody watches: stored, so that a shared section of the tree's lock reads it in
  /// place (see `SharedTree`).
  private(set) var isEmpty = true

  /// A build waiting out its back-off; `wake` ends the wait early (it cancels the sleep).
  struct BackOff {
    let frame: Frame
    let wake: @Sendable () -> Void
  }

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
    /// Nothing yet, a change happened while it resolved, or the pod keeps no instance of a
    /// provider it caches (the instance it got went to an ancestor without the pod keeping a
    /// way to it, or was a build's that a change made stale): whatever it got may already be
    /// gone, so any change makes it resolve again, and it hands out whatever that returns.
    case unknown
    /// The provider is not cached in this pod (an always-new provider, a weak-scope value): a
    /// resolve that again finds nothing cached has nothing new to hand out.
    case uncached
    /// The caching of the instance it came from, by the serial of the build that made it:
    /// the watcher holds nothing the pod let go of.
    case cached(serial: Int)
  }

  let info: ProviderInfo
  /// The pod watched: the instance is the one it resolves (its own, or its parent's).
  let pod: PodRecord
  var seen = Seen.unknown
  /// Set by a change that discarded the instance, or happened while the watcher resolved.
  var isChanged = true
  var isResolving = false
  /// The iterator waiting for a change.
  var waiting: CheckedContinuation<Void, Never>?

  init(info: ProviderInfo, pod: PodRecord) {
    self.info = info
    self.pod = pod
  }

  var key: ProviderKey { info.key }

  /// Takes the waiting iterator, as a wake-up to run once the lock is released.
  func takeWakeUp() -> (() -> Void)? {
    guard let waiting else { return nil }
    self.waiting = nil
    return { waiting.resume() }
  }
}
