/// One instance the pod has cached, with what it needs to discard it correctly later.
///
/// Immutable apart from `dependencies`, which is written once under the pod's lock.
///
/// **Unsafe code here, and the invariant it relies on.** A cached resolve reads the value
/// without a dynamic cast or a generic class's metadata: a class instance through an
/// unretained reference (`unsafeBitCast`), anything else through a raw pointer to storage the
/// entry owns. Both are sound because
/// - the entry's type matches the value's: the pod keys entries by provider, and only
///   `make(caching:...)` below makes them, from a `Provider<Value>`'s `Value`;
/// - the entry outlives every read: `value(as:)` copies the value out inside
///   `withExtendedLifetime(self)`, so the caller's reference keeps the entry, and so the
///   value, alive until the copy is retained, even when another thread drops the slot's
///   reference at that moment.
/// - A value taken out for a read after the lock (`HeldValue`) is held by a reference to
///   itself or to its entry, taken under the lock, for as long as the copy is being made.
/// Nothing outside this file reads the storage or casts an entry.
class CacheEntry {
  let provider: ProviderInfo
  let scope: ScopeInfo
  /// False for `WeakEntry`; lets the hot path avoid a dynamic cast.
  let isStrong: Bool
  /// The providers this instance was built from (directly or through uncached providers):
  /// discarding any of them discards this instance. Each slot counts this instance among its
  /// dependents once per time it is listed, for as long as it is cached.
  var dependencies: [Slot] = []

  /// A `StrongEntry`'s value; nil for the others.
  let valueStorage: UnsafeMutableRawPointer?
  /// An `ObjectEntry`'s value; nil for the others.
  let strongObject: AnyObject?
  /// The same reference, unretained, for reading the value without reference counting.
  private let objectReference: UnsafeMutableRawPointer?
  /// Whether `dispose()` runs a hook: the pod made this value and the provider has one.
  let hasDisposal: Bool

  init(
    provider: ProviderInfo, scope: ScopeInfo, isStrong: Bool,
    storage: UnsafeMutableRawPointer? = nil, object: AnyObject? = nil, hasDisposal: Bool = false
  ) {
    self.provider = provider
    self.scope = scope
    self.isStrong = isStrong
    self.valueStorage = storage
    self.strongObject = object
    self.objectReference = object.map { Unmanaged.passUnretained($0).toOpaque() }
    self.hasDisposal = hasDisposal
  }

  /// Runs the provider's `onDiscard` hook on the value. Outside the pod's lock, once.
  /// `onMainActor` tells main-actor hooks whether the discarding caller is on the main actor;
  /// it is passed along rather than kept in a task-local, which tasks a hook starts would
  /// inherit.
  func dispose(onMainActor: Bool) {}

  /// The strong entry's value. The pod keys entries by provider, and a `Provider<Value>`'s
  /// entries are always made from a `Value`, so the type always matches.
  ///
  /// The copy is made while `self` is certainly alive: the value is read through pointers
  /// the optimiser does not see as uses of the entry, so without the extended lifetime it
  /// may release the caller's reference to the entry first. When another thread has just
  /// dropped the slot's reference, that frees the value before the copy retains it.
  @inline(__always)
  func value<Value>(as type: Value.Type) -> Value {
    withExtendedLifetime(self) {
      if let objectReference {
        // An `ObjectEntry`'s, made only when `Value` is a class type: the reference is the
        // value, and the cast copies it out retained once. Casting `strongObject` would
        // retain it twice and release it once.
        return unsafeBitCast(objectReference, to: Value.self)
      }
      return valueStorage.unsafelyUnwrapped.assumingMemoryBound(to: Value.self).pointee
    }
  }
  /// The value, kept alive for a read after the lock is released: for a class instance
  /// without a hook, the instance itself (retaining it is what the caller's copy needs
  /// anyway), otherwise the entry. Made under the lock, where the slot holds the entry.
  @inline(__always)
  var heldValue: HeldValue {
    if let strongObject { return HeldValue(reference: strongObject, isValue: true) }
    return HeldValue(reference: self, isValue: false)
  }

  /// The instance a ``WeakScope`` entry still refers to; nil for the others, and once the
  /// instance has gone away.
  var weakObject: AnyObject? {
    isStrong ? nil : unsafeDowncast(self, to: WeakEntry.self).object
  }

  /// The entry that caches `value`: nil when its scope is ``WeakScope`` and the value is not
  /// a class instance. `hook` is the provider's `onDiscard`, for a value the pod made.
  static func make<Value>(
    caching value: Value, provider: ProviderInfo, scope: ScopeInfo, hook: DisposalHook<Value>?
  ) -> CacheEntry? {
    if scope.kind != .weak {
      if hook == nil, Value.self is AnyClass {
        return ObjectEntry(
          object: unsafeBitCast(value, to: AnyObject.self), provider: provider, scope: scope)
      }
      return StrongEntry(value: value, provider: provider, scope: scope, onDiscard: hook)
    }
    return classInstance(value).map { WeakEntry(object: $0, provider: provider, scope: scope) }
  }
}

/// A cached class instance with no hook to run, kept alive by the pod: the most common
/// entry by far. Not generic and without a box for the value, so caching one costs an
/// allocation and no run-time metadata lookup.
final class ObjectEntry: CacheEntry {
  init(object: AnyObject, provider: ProviderInfo, scope: ScopeInfo) {
    super.init(provider: provider, scope: scope, isStrong: true, object: object)
  }
}

/// A cached value kept alive by the pod: a value that is not a class instance, or one with a
/// hook to run.
///
/// The value lives behind a raw pointer held by the non-generic base class, so reading it
/// needs only `Value`'s metadata, which the caller of `resolve` already has. Reading a stored
/// `Value` field instead would make `StrongEntry<Value>`'s metadata be looked up at run time
/// on every cached resolve.
final class StrongEntry<Value>: CacheEntry {
  private let onDiscard: DisposalHook<Value>?

  init(
    value: Value, provider: ProviderInfo, scope: ScopeInfo,
    onDiscard: DisposalHook<Value>?
  ) {
    let storage = UnsafeMutablePointer<Value>.allocate(capacity: 1)
    storage.initialize(to: value)
    self.onDiscard = onDiscard
    super.init(
      provider: provider, scope: scope, isStrong: true, storage: UnsafeMutableRawPointer(storage),
      hasDisposal: onDiscard != nil)
  }

  override func dispose(onMainActor: Bool) {
    onDiscard?(value(as: Value.self), onMainActor)
  }

  deinit {
    let storage = valueStorage!.assumingMemoryBound(to: Value.self)
    storage.deinitialize(count: 1)
    storage.deallocate()
  }
}

/// A cached class instance the pod does not keep alive (``WeakScope``).
final class WeakEntry: CacheEntry {
  private(set) weak var object: AnyObject?

  init(object: AnyObject, provider: ProviderInfo, scope: ScopeInfo) {
    self.object = object
    super.init(provider: provider, scope: scope, isStrong: false)
  }
}

/// The value as a class instance, or nil when it is not one (structs, enums, optionals,
/// tuples, functions). Decided on the dynamic type, so an existential holding an object counts.
func classInstance<Value>(_ value: Value) -> AnyObject? {
  let any = value as Any
  guard type(of: any) is AnyClass else { return nil }
  return any as AnyObject
}

/// A provider's `onDiscard`, told whether the discarding caller is on the main actor.
typealias DisposalHook<Value> = @Sendable (Value, _ onMainActor: Bool) -> Void

/// A plain `onDiscard` hook, which runs wherever the discard happens.
func disposalHook<Value>(_ hook: (@Sendable (Value) -> Void)?) -> DisposalHook<Value>? {
  guard let hook else { return nil }
  return { value, _ in hook(value) }
}

/// A cached value taken out from under the lock with a reference that keeps it alive: the
/// instance itself, or its entry. Not generic, so nothing crossing the lock needs the value
/// type's metadata.
struct HeldValue {
  let reference: AnyObject
  /// Whether `reference` is the value (a class instance) rather than its entry.
  let isValue: Bool

  /// The value, as the `Value` its entry was made from. An entry is kept alive until the copy
  /// is made: the optimiser does not count a read through the entry's storage as a use of the
  /// entry, and would otherwise be free to release it first.
  @inline(__always)
  func value<Value>(as type: Value.Type) -> Value {
    // The instance is a `Value`: its entry was made only from one (see `CacheEntry.make`).
    // Copying the reference out is itself a use of it, so it stays alive for the copy.
    if isValue { return unsafeBitCast(reference, to: Value.self) }
    return withExtendedLifetime(reference) {
      unsafeDowncast(reference, to: CacheEntry.self).value(as: Value.self)
    }
  }
}
