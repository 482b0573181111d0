/// Everything a pod keeps for one provider: its cached instance, its build in progress, and
/// what was built from it.
///
/// A pod keeps a slot while any of the three exists and drops it after. Keeping "built from"
/// in both directions is what makes a discard cost what it discards: the instances built
/// from a provider are found here, not by scanning every cached instance. The instances
/// built from it may live in a child pod: links point at slots, wherever they are.
///
/// Guarded by the tree's lock, which is what makes access exclusive: fields are exempt from
/// the dynamic exclusivity checks a class's stored properties would otherwise cost.
final class Slot {
  let info: ProviderInfo
  /// The pod whose slot this is.
  let pod: PodRecord
  /// The cached instance; for a link, the ancestor's instance it shares.
  @exclusivity(unchecked) var entry: CacheEntry?
  /// The newest caching build of the provider; only a running one is joined.
  @exclusivity(unchecked) var build: Frame?
  /// Set when this pod shares an ancestor's instance: the ancestor's slot. A link is a
  /// shortcut for finding the shared instance; what is built from it depends on the
  /// ancestor's slot, and the link goes when the ancestor's instance does.
  @exclusivity(unchecked) var linkTarget: Slot?
  /// The slots whose cached instance or running build was built from this one (or that link
  /// to it), with how many of those each has (an old stale build and a new one can overlap).
  @exclusivity(unchecked) var dependents = Dependents()
  /// The serial of the last build that recorded this slot as a dependency: a builder that
  /// resolves the same provider twice records it once.
  @exclusivity(unchecked) var recordedBy = 0

  init(_ info: ProviderInfo, in pod: PodRecord) {
    self.info = info
    self.pod = pod
  }

  var key: ProviderKey { info.key }
  var id: SlotID { SlotID(address: UInt(bitPattern: ObjectIdentifier(self))) }
  var isUnused: Bool { entry == nil && build == nil && dependents.isEmpty }
}

/// An engine object's identity in its tables (a slot's in "built from" tables, a child pod's
/// among its parent's children): its address, hashed as cheaply as a ``ProviderKey`` (SipHash
/// on an `ObjectIdentifier` cost about 180 instructions per lookup, and a build with 100
/// dependencies makes hundreds). A table that holds the id holds or outlives the object, so
/// the address is not reused while the table has it.
struct SlotID: Hashable {
  let address: UInt

  func hash(into hasher: inout Hasher) {
    hasher.combine(address)
  }

  func _rawHashValue(seed: Int) -> Int {
    mixedAddressHash(address, seed: seed)
  }
}
