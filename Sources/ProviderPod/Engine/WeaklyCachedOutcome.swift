/// What a ``WeakScope`` entry holds weakly for a value, and how a resolve gets the value back.
///
/// A throwing provider caches its outcome, a `Result`, which is never a class instance: held
/// as is, a success would never be cached in ``WeakScope``. Its entry holds the success's
/// instance instead, and a resolve wraps it again. Decided on the provider's value type, not
/// on what a value holds at run time, so an entry always reads back as it was made: a
/// `Provider<Any>` whose builder returns a `Result` caches nothing there, as before.
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
    // The instance came from a success of this type (see `weaklyHeldObject(of:)`).
    self = .success(object as! Success)
  }
}

/// The class instance a ``WeakScope`` entry holds for `value`, or nil when it caches nothing.
func weaklyHeldObject<Value>(of value: Value) -> AnyObject? {
  if Value.self is any WeaklyCachedOutcome.Type {
    return (value as! any WeaklyCachedOutcome).weaklyHeldObject
  }
  return classInstance(value)
}

/// The value a ``WeakScope`` entry's instance stands for: the instance itself, or the outcome
/// wrapped around it.
func weaklyCachedValue<Value>(_ object: AnyObject, as type: Value.Type) -> Value {
  if let value = object as? Value { return value }
  return (Value.self as! any WeaklyCachedOutcome.Type).init(weaklyHeld: object) as! Value
}
