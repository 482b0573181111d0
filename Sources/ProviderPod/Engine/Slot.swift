/// Everything the engine keeps for one provider: its cached instance, its build in progress,
/// and what was built from it.
///
/// The engine keeps a slot while any of the three exists and drops it after. Keeping
/// "built from" in both directions is what makes a discard cost what it discards: the
/// instances built from a provider are found here, not by scanning every cached instance.
final class Slot {
  let info: ProviderInfo
  /// The cached instance.
  var entry: CacheEntry?
  /// The newest caching build of the provider; only a running one is joined.
  var build: Frame?
  /// The providers whose cached instance or running build was built from this one, with
  /// how many of those each has (an old stale build and a new one can overlap).
  var dependents: [ProviderKey: Int] = [:]

  init(_ info: ProviderInfo) {
    self.info = info
  }

  var key: ProviderKey { info.key }
  var isUnused: Bool { entry == nil && build == nil && dependents.isEmpty }
}
