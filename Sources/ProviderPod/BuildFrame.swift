import Dispatch

/// One run of a builder: the link in a chain of nested resolves.
///
/// The builder receives a view of the pod that carries its frame, so nested resolves know
/// who is asking, even from another thread. That is what lets the pod record dependencies
/// (S4), name whole cycles (S7), and see deadlocks across threads.
///
/// Mutable fields are guarded by the pod's lock.
final class BuildFrame: @unchecked Sendable {
  let key: ProviderKey
  let provider: ProviderInfo
  let parent: BuildFrame?
  let scope: ScopeInfo
  /// True for a single-flight build whose result the pod may cache (strong or weak scopes).
  /// Such a frame owns the dependencies recorded below it.
  let caches: Bool
  private let enclosingOwner: BuildFrame?

  /// False once the builder returned: a view kept past that point acts like the pod itself.
  var isActive = true
  /// Set when something this build used (or its own scope or override) was discarded while
  /// it ran: its result must not be cached (S8).
  var isInvalidated = false
  var dependencies: [ProviderKey: ProviderInfo] = [:]
  /// Created by the first thread that waits for this build; left by the builder when done.
  var waiters: DispatchGroup?

  init(
    key: ProviderKey, provider: ProviderInfo, scope: ScopeInfo,
    caches: Bool, parent: BuildFrame?
  ) {
    self.key = key
    self.provider = provider
    self.scope = scope
    self.caches = caches
    self.parent = parent
    self.enclosingOwner = caches ? nil : parent?.owner
  }

  /// The nearest caching build at or above this frame: the instance that depends on
  /// whatever this frame resolves.
  var owner: BuildFrame? {
    if caches { return self }
    return enclosingOwner?.isActive == true ? enclosingOwner : nil
  }

  /// This frame and its still-running ancestors, innermost first.
  var activeChain: [BuildFrame] {
    var chain: [BuildFrame] = []
    var next: BuildFrame? = self
    while let frame = next, frame.isActive {
      chain.append(frame)
      next = frame.parent
    }
    return chain
  }
}
