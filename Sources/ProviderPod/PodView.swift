import Dispatch

// A builder receives a view of the pod: a `Pod` that carries the frame of one build, so nested
// resolves know who is asking, even from another thread. That is what lets the pod record
// dependencies (S4), name whole cycles (S7), and see deadlocks across threads.
//
// Views are recycled: once a build is over and nothing else holds its view, the pod keeps the
// view for the next build instead of freeing it, so a build allocates nothing of its own.

/// A view's build. Guarded by the pod's lock.
struct Frame {
  var key = ProviderKey(address: 0)
  var provider: ProviderInfo?
  var scope: ScopeInfo?
  var caches = false
  var parent: Pod?
  var enclosingOwner: Pod?
  /// False once the builder returned: a view kept past that point acts like the pod itself.
  var isActive = false
  /// Set when something this build used (or its own scope or override) was discarded while
  /// it ran: its result must not be cached (S8).
  var isInvalidated = false
  var dependencies: [ProviderKey: ProviderInfo] = [:]
  /// Created by the first thread that waits for this build; left by the builder when done.
  var waiters: DispatchGroup?
  /// For an async build: its task and the callers waiting for it.
  var asyncBuild: AnyAsyncBuild?
}

extension Pod {
  var key: ProviderKey { frame.pointee.key }
  var provider: ProviderInfo { frame.pointee.provider.unsafelyUnwrapped }
  var scope: ScopeInfo { frame.pointee.scope.unsafelyUnwrapped }
  var caches: Bool { frame.pointee.caches }
  var parent: Pod? { frame.pointee.parent }
  var isActive: Bool {
    get { frame.pointee.isActive }
    set { frame.pointee.isActive = newValue }
  }
  var isInvalidated: Bool {
    get { frame.pointee.isInvalidated }
    set { frame.pointee.isInvalidated = newValue }
  }
  var dependencies: [ProviderKey: ProviderInfo] {
    get { frame.pointee.dependencies }
    _modify { yield &frame.pointee.dependencies }
  }
  var waiters: DispatchGroup? {
    get { frame.pointee.waiters }
    set { frame.pointee.waiters = newValue }
  }
  var asyncBuild: AnyAsyncBuild? {
    get { frame.pointee.asyncBuild }
    set { frame.pointee.asyncBuild = newValue }
  }

  /// Makes this view the frame of a new build. Under the pod's lock.
  func begin(
    key: ProviderKey, provider: ProviderInfo, scope: ScopeInfo, caches: Bool, parent: Pod?
  ) {
    // Field by field: assigning a whole `Frame` would copy and destroy every field.
    frame.pointee.key = key
    frame.pointee.provider = provider
    frame.pointee.scope = scope
    frame.pointee.caches = caches
    if let parent {
      frame.pointee.parent = parent
      if !caches { frame.pointee.enclosingOwner = parent.owner }
    }
    frame.pointee.isActive = true
  }

  /// Forgets the build, ready for reuse. Under the pod's lock, with no other reference left.
  func reset() {
    frame.pointee.provider = nil
    frame.pointee.scope = nil
    if frame.pointee.parent != nil { frame.pointee.parent = nil }
    if frame.pointee.enclosingOwner != nil { frame.pointee.enclosingOwner = nil }
    frame.pointee.isActive = false
    frame.pointee.isInvalidated = false
    if !frame.pointee.dependencies.isEmpty { frame.pointee.dependencies = [:] }
    if frame.pointee.waiters != nil { frame.pointee.waiters = nil }
    if frame.pointee.asyncBuild != nil { frame.pointee.asyncBuild = nil }
  }

  /// The entry to cache for `value`, built in this view: nil when the build does not cache,
  /// or when its scope is ``WeakScope`` and the value is not an object. The pod owns what it
  /// built, but not a value handed to it with `withValue:`, so only the former gets the hook.
  func entry<Value>(
    caching value: Value, for provider: ProviderInfo, override: OverrideRecord?,
    onDiscard: (@Sendable (Value) -> Void)?
  ) -> CacheEntry? {
    guard caches else { return nil }
    if scope.kind != .weak {
      let ownsValue = override?.ownsValue ?? true
      return StrongEntry(
        value: value, provider: provider, scope: scope, onDiscard: ownsValue ? onDiscard : nil)
    }
    return classInstance(value).map { WeakEntry(object: $0, provider: provider, scope: scope) }
  }

  /// The nearest caching build at or above this frame: the instance that depends on whatever
  /// this frame resolves.
  var owner: Pod? {
    if caches { return self }
    let enclosing = frame.pointee.enclosingOwner
    return enclosing?.isActive == true ? enclosing : nil
  }

  /// This frame and its still-running ancestors, innermost first.
  var activeChain: [Pod] {
    var chain: [Pod] = []
    var next: Pod? = self
    while let frame = next, frame.isActive {
      chain.append(frame)
      next = frame.parent
    }
    return chain
  }
}
