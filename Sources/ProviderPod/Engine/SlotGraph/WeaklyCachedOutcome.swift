/// A throwing provider's ``WeakScope`` entries.
///
/// The pod caches a throwing provider's outcome, a `Result`, which is never a class instance:
/// held as is, a success would never be cached in ``WeakScope``. Its entry holds the success's
/// instance instead, and a read wraps it again. The provider's record says which providers do
/// this (`ProviderInfo.valueIsOutcome`), so the weak entries of every other provider are made
/// and read as before, at no cost.
protocol WeaklyCachedOutcome {
  /// The class instance that stands for the outcome, or nil when there is none (a failure, or
  /// a success that is not a class instance): then nothing is cached.
  var weaklyHeldObject: AnyObject? { get }
  /// The outcome the instance stands for.
  init(weaklyHeld object: AnyObject)
}

extension Result: WeaklyCachedOutcome {
  var weaklyHeldObject: AnyObject? {
    guard case .success(let value) = self else { return nil }
    return classInstance(value)
  }

  init(weaklyHeld object: AnyObject) {
    // The instance came from a success of this type (see `weaklyHeldObject`).
    self = .success(object as! Success)
  }
}

extension PodEngine {
  /// The ``WeakScope`` entry of a throwing provider's outcome: one that holds the success's
  /// instance, or nil when there is none to hold.
  /// `overriddenScope` is as `CacheEntry.make` takes it.
  func weakEntry<Value>(
    caching outcome: Value, in frame: Frame, overriddenScope: ScopeInfo?
  ) -> CacheEntry? {
    // A throwing provider's value is always its `Result`.
    let instance = (outcome as! any WeaklyCachedOutcome).weaklyHeldObject
    return instance.flatMap {
      CacheEntry.make(
        caching: $0, kind: .weak, overriddenScope: overriddenScope, serial: frame.serial,
        hook: nil)
    }
  }
}

/// The outcome a throwing provider's ``WeakScope`` entry stands for: a success wrapped around
/// the instance it holds.
func weaklyCachedOutcome<Value>(_ object: AnyObject, as type: Value.Type) -> Value {
  // A throwing provider's value is always its `Result`.
  (Value.self as! any WeaklyCachedOutcome.Type).init(weaklyHeld: object) as! Value
}
