/// One instance the pod has cached, with what it needs to discard it correctly later.
///
/// Immutable apart from `dependencies`, which is written once under the pod's lock.
class CacheEntry: @unchecked Sendable {
  let provider: any ProviderIdentity
  let scope: ScopeInfo
  /// False for `WeakEntry`; lets the hot path avoid a dynamic cast.
  let isStrong: Bool
  /// The providers this instance was built from (directly or through uncached providers):
  /// discarding any of them discards this instance (S4).
  var dependencies: [ObjectIdentifier: any ProviderIdentity] = [:]

  init(provider: any ProviderIdentity, scope: ScopeInfo, isStrong: Bool) {
    self.provider = provider
    self.scope = scope
    self.isStrong = isStrong
  }
}

/// A cached value kept alive by the pod. Its type always matches the provider it is keyed
/// by, which is what makes the unchecked downcast in `Pod.resolve` safe.
final class StrongEntry<Value>: CacheEntry, @unchecked Sendable {
  let value: Value

  init(value: Value, provider: any ProviderIdentity, scope: ScopeInfo) {
    self.value = value
    super.init(provider: provider, scope: scope, isStrong: true)
  }
}

/// A cached class instance the pod does not keep alive (``WeakScope``).
final class WeakEntry: CacheEntry, @unchecked Sendable {
  private(set) weak var object: AnyObject?

  init(object: AnyObject, provider: any ProviderIdentity, scope: ScopeInfo) {
    self.object = object
    super.init(provider: provider, scope: scope, isStrong: false)
  }
}

/// Moves a value the caller knows to be safe across an isolation boundary.
struct UncheckedSendable<Wrapped>: @unchecked Sendable {
  let value: Wrapped
}

/// The value as a class instance, or nil when it is not one (structs, enums, optionals,
/// tuples, functions). Decided on the dynamic type, so an existential holding an object counts.
func classInstance<Value>(_ value: Value) -> AnyObject? {
  let any = value as Any
  guard type(of: any) is AnyClass else { return nil }
  return any as AnyObject
}
