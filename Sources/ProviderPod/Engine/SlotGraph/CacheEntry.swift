/// One instance a pod has cached, with what it needs to discard it correctly later. Stored in
/// the slot itself: caching a class instance without an `onDiscard` hook (the common case by
/// far) allocates nothing but the instance, and discarding it frees nothing else. A child's
/// link to a parent's instance holds a copy of the parent's entry.
///
/// **Unsafe code here, and the invariant it relies on.** A cached resolve reads the value
/// without a dynamic cast or a generic class's metadata: a class instance through a bit cast
/// of the reference (`unsafeBitCast`), anything else through a raw pointer to storage its box
/// owns. Both are sound because
/// - the entry's type matches the value's: the pod keys entries by provider, and only
///   `make(caching:...)` below makes them, from a `Provider<Value>`'s `Value`;
/// - the value outlives every read: a read takes a `HeldValue` out under the lock
///   (`Slot.heldStrongValue`, reading the entry where it is), a strong reference to the
///   instance itself or to its box, and copies the value out while holding it
///   (`withExtendedLifetime`), even when another thread discards the entry at that moment.
/// An entry with a hook (`hasDisposal`) always holds a `ValueBox`: `make` gives hooks only to
/// boxes, which is what lets the hook's accessors below cast the holder.
/// Nothing outside this file reads a box's storage or casts a holder.
struct CacheEntry {
  /// What keeps the value alive and reads it: the instance itself (`.object`), a `ValueBox`
  /// (`.boxed`), or a `WeakBox` (`.weak`).
  let holder: AnyObject
  /// The scope the instance is cached in, where an override gives it another than its
  /// provider's; nil for the provider's own (see `scope(of:)`), which the slot's description
  /// holds already. Retained here too, it was written by every request pod's build: a
  /// description that every request on every core shares.
  let overriddenScope: ScopeInfo?
  /// The providers this instance was built from (directly or through uncached providers):
  /// discarding any of them discards this instance. Each slot counts this instance among its
  /// dependents once per time it is listed, for as long as it is cached. Set once, before
  /// the entry is cached; a link's copy is made after.
  var dependencies: [Slot] = []
  /// The build that made it, unique in its tree: tells one caching of an instance from the
  /// next (a watcher hands out only new ones) without holding either.
  let serial: Int
  let kind: Kind
  /// Whether `dispose()` runs a hook: the pod made this value and the provider has one.
  let hasDisposal: Bool

  enum Kind: UInt8 {
    /// A class instance with no hook, kept alive by the pod: `holder` is the instance.
    case object
    /// Any other value kept alive by the pod: `holder` is a `ValueBox`.
    case boxed
    /// A class instance the pod does not keep alive (``WeakScope``): `holder` is a `WeakBox`.
    case weak
  }

  /// The scope the instance is cached in; `provider` is the description of its slot (or of
  /// the build that made it).
  @inline(__always)
  func scope(of provider: ProviderInfo) -> ScopeInfo {
    // Not `??`: its copy of the optional went through value witnesses, which a discard of
    // 1,000 instances paid for each (about 70 instructions an instance).
    if let overriddenScope { return overriddenScope }
    return provider.scope
  }

  /// The identity of the scope the instance is cached in, copied out without retaining the
  /// scope (see `scope(of:)`).
  @inline(__always)
  func scopeKey(of provider: ProviderInfo) -> ScopeKey {
    if let overriddenScope { return overriddenScope.key }
    return provider.scope.key
  }

  /// The kind of the scope the instance is cached in (see `scopeKey(of:)`).
  @inline(__always)
  func scopeKind(of provider: ProviderInfo) -> ScopeInfo.Kind {
    if let overriddenScope { return overriddenScope.kind }
    return provider.scope.kind
  }

  /// False for a weak entry; lets the hot path avoid a dynamic cast.
  var isStrong: Bool { kind != .weak }

  /// Whether `other` is this caching of the instance (a link's copy is), not a later one.
  func isSame(as other: CacheEntry?) -> Bool {
    guard let other else { return false }
    return serial == other.serial && holder === other.holder
  }

  /// The instance a ``WeakScope`` entry still refers to; nil for the others, and once the
  /// instance has gone away.
  var weakObject: AnyObject? {
    kind == .weak ? unsafeDowncast(holder, to: WeakBox.self).object : nil
  }

  /// Runs the provider's `onDiscard` hook on the value. Outside the pod's lock, once.
  /// `onMainActor` tells main-actor hooks whether the discarding caller is on the main actor;
  /// it is passed along rather than kept in a task-local, which tasks a hook starts would
  /// inherit.
  func dispose(onMainActor: Bool) {
    guard hasDisposal else { return }
    unsafeDowncast(holder, to: ValueBox.self).dispose(onMainActor: onMainActor)
  }

  /// The entry that caches `value`: nil when its scope is ``WeakScope`` and the value is not
  /// a class instance. `hook` is the provider's `onDiscard`, for a value the pod made.
  /// `kind` is the build's scope's; `overriddenScope` that scope, where an override gives
  /// another than the provider's.
  static func make<Value>(
    caching value: Value, kind scopeKind: ScopeInfo.Kind, overriddenScope: consuming ScopeInfo?,
    serial: Int, hook: DisposalHook<Value>?
  ) -> CacheEntry? {
    if scopeKind != .weak {
      if hook == nil, Value.self is AnyClass {
        return CacheEntry(
          holder: unsafeBitCast(value, to: AnyObject.self), overriddenScope: overriddenScope,
          serial: serial, kind: .object, hasDisposal: false)
      }
      return CacheEntry(
        holder: TypedValueBox(value: value, onDiscard: hook), overriddenScope: overriddenScope,
        serial: serial, kind: .boxed, hasDisposal: hook != nil)
    }
    guard let object = classInstance(value) else { return nil }
    return CacheEntry(
      holder: WeakBox(object: object), overriddenScope: overriddenScope, serial: serial,
      kind: .weak, hasDisposal: false)
  }
}

/// A cached value that is not a class instance, or one with a hook to run, kept alive by the
/// pod.
///
/// The value lives behind a raw pointer held by this non-generic class, so reading it needs
/// only `Value`'s metadata, which the caller of `resolve` already has. Reading a stored
/// `Value` field instead would make `TypedValueBox<Value>`'s metadata be looked up at run time
/// on every cached resolve.
class ValueBox {
  let storage: UnsafeMutableRawPointer

  init(storage: UnsafeMutableRawPointer) {
    self.storage = storage
  }

  func dispose(onMainActor: Bool) {}

  /// Whether the hook is asynchronous: `dispose` leaves it for `cleanUp`.
  var hasAsyncHook: Bool { false }

  /// Whether awaiting the hook means more than calling it: an asynchronous or main-actor one.
  var mustBeAwaited: Bool { false }

  /// Runs the hook, synchronous or not, from a task: how a shutdown awaits it.
  func cleanUp() async throws {}

  /// The value, as the `Value` the box was made from. The caller holds the box until the
  /// copy is made (see `HeldValue`).
  @inline(__always)
  func value<Value>(as type: Value.Type) -> Value {
    storage.assumingMemoryBound(to: Value.self).pointee
  }
}

final class TypedValueBox<Value>: ValueBox {
  private let onDiscard: DisposalHook<Value>?

  init(value: Value, onDiscard: DisposalHook<Value>?) {
    let storage = UnsafeMutablePointer<Value>.allocate(capacity: 1)
    storage.initialize(to: value)
    self.onDiscard = onDiscard
    super.init(storage: UnsafeMutableRawPointer(storage))
  }

  override func dispose(onMainActor: Bool) {
    guard let onDiscard else { return }
    withExtendedLifetime(self) { onDiscard.runNow(value(as: Value.self), onMainActor: onMainActor) }
  }

  override var hasAsyncHook: Bool {
    onDiscard?.async != nil
  }

  override var mustBeAwaited: Bool {
    onDiscard != nil && onDiscard?.sync == nil
  }

  override func cleanUp() async throws {
    guard let onDiscard else { return }
    let instance: Value = withExtendedLifetime(self) { self.value(as: Value.self) }
    try await onDiscard.run(instance)
  }

  deinit {
    let storage = self.storage.assumingMemoryBound(to: Value.self)
    storage.deinitialize(count: 1)
    storage.deallocate()
  }
}

/// A cached class instance the pod does not keep alive (``WeakScope``).
final class WeakBox {
  private(set) weak var object: AnyObject?

  init(object: AnyObject) {
    self.object = object
  }
}

/// The value as a class instance, or nil when it is not one (structs, enums, optionals,
/// tuples, functions). Decided on the dynamic type, so an existential holding an object counts.
func classInstance<Value>(_ value: Value) -> AnyObject? {
  let any = value as Any
  guard type(of: any) is AnyClass else { return nil }
  return any as AnyObject
}

/// A provider's `onDiscard`: a synchronous hook, told whether the discarding caller is on the
/// main actor; a main-actor provider's hook; or an asynchronous one, which only a shutdown
/// awaits. Exactly one is set.
///
/// A class rather than an enum: a build copies its provider's hook into the entry it caches,
/// in code not specialised for the value type, where copying a generic enum looked its
/// metadata up on every build (a new pod with 100 dependencies cost 1% more); a reference is
/// copied by a retain.
final class DisposalHook<Value>: Sendable {
  let sync: (@Sendable (Value, _ onMainActor: Bool) -> Void)?
  let mainActor: (@MainActor @Sendable (Value) -> Void)?
  let async: (@Sendable (Value) async throws -> Void)?

  private init(
    sync: (@Sendable (Value, _ onMainActor: Bool) -> Void)?,
    mainActor: (@MainActor @Sendable (Value) -> Void)?,
    async: (@Sendable (Value) async throws -> Void)?
  ) {
    self.sync = sync
    self.mainActor = mainActor
    self.async = async
  }

  static func sync(_ hook: @escaping @Sendable (Value, _ onMainActor: Bool) -> Void) -> Self {
    Self(sync: hook, mainActor: nil, async: nil)
  }

  static func mainActor(_ hook: @escaping @MainActor @Sendable (Value) -> Void) -> Self {
    Self(sync: nil, mainActor: hook, async: nil)
  }

  static func async(_ hook: @escaping @Sendable (Value) async throws -> Void) -> Self {
    Self(sync: nil, mainActor: nil, async: hook)
  }
}

/// A plain `onDiscard` hook, which runs wherever the discard happens.
func disposalHook<Value>(_ hook: (@Sendable (Value) -> Void)?) -> DisposalHook<Value>? {
  guard let hook else { return nil }
  return .sync { value, _ in hook(value) }
}

/// An asynchronous `onDiscard` hook.
func disposalHook<Value>(
  _ hook: (@Sendable (Value) async throws -> Void)?
) -> DisposalHook<Value>? {
  hook.map { .async($0) }
}

extension CacheEntry {
  /// Whether the instance's hook is asynchronous: `dispose` does not run it.
  var hasAsyncDisposal: Bool {
    hasDisposal && unsafeDowncast(holder, to: ValueBox.self).hasAsyncHook
  }

  /// The instance's hook, as a job any task may run once the lock is released. The box it
  /// holds is immutable (a value and a hook), and the value was handed to the pod's callers on
  /// any thread already. Nil for an instance with no hook, whose holder is no box.
  var cleanup: Cleanup? {
    guard hasDisposal else { return nil }
    return Cleanup(box: UncheckedSendable(value: unsafeDowncast(holder, to: ValueBox.self)))
  }
}

/// One instance's `onDiscard`, to be awaited by a shutdown or started by a discard that
/// cannot wait.
struct Cleanup: Sendable {
  let box: UncheckedSendable<ValueBox>

  func run() async throws {
    try await box.value.cleanUp()
  }

  /// Whether `run` suspends: the hook is asynchronous or belongs to the main actor.
  var mustBeAwaited: Bool { box.value.mustBeAwaited }

  /// Runs a synchronous hook on the calling thread.
  func runNow() {
    box.value.dispose(onMainActor: false)
  }
}

/// A cached value taken out from under the lock with a reference that keeps it alive: the
/// instance itself, or its box. Not generic, so nothing crossing the lock needs the value
/// type's metadata.
struct HeldValue {
  let reference: AnyObject
  /// Whether `reference` is the value (a class instance) rather than its box.
  let isValue: Bool

  /// The value, as the `Value` its entry was made from. A box is kept alive until the copy
  /// is made: the optimiser does not count a read through the box's storage as a use of the
  /// box, and would otherwise be free to release it first.
  @inline(__always)
  func value<Value>(as type: Value.Type) -> Value {
    // The instance is a `Value`: its entry was made only from one (see `CacheEntry.make`).
    // Copying the reference out is itself a use of it, so it stays alive for the copy.
    if isValue { return unsafeBitCast(reference, to: Value.self) }
    return withExtendedLifetime(reference) {
      unsafeDowncast(reference, to: ValueBox.self).value(as: Value.self)
    }
  }
}
