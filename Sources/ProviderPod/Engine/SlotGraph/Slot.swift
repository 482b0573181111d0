/// A provider's slot in one pod, and the identity engine objects have in their tables.
///
/// **Unsafe code here, and the invariant it relies on.** `Slot`'s mutable fields are exempt
/// from dynamic exclusivity checks (`@exclusivity(unchecked)`), for the reason and under the
/// invariant `PodRecord.swift` states for both classes: every field is read and written only
/// while holding the tree's lock, or, in a request pod's shared sections, the smaller locks
/// named there.

/// Everything a pod keeps for one provider: its cached instance, its build in progress, and
/// what was built from it.
///
/// A pod keeps a slot while any of the three exists, and drops it after unless the slot has
/// held an instance of the pod's own (not a link) and its provider is no family member: that
/// slot stays while its provider exists, so clearing and rebuilding a scope neither frees nor
/// makes its slots (half the cost of a clear). What stays is bounded by the live providers the
/// pod has cached; the slots of providers that are gone are swept when the table has doubled
/// (`EngineState.sweepSlotsOfGoneProviders`). A family's members, made from arguments, are
/// unbounded, and a family keeps a member only while the pod uses it. Keeping "built from"
/// in both directions is what makes a discard cost what it discards: the instances built
/// from a provider are found here, not by scanning every cached instance. The instances
/// built from it may live in a child pod: links point at slots, wherever they are.
///
/// Guarded by the tree's lock (see the top of this file and of `PodRecord.swift`).
final class Slot {
  let info: ProviderInfo
  /// The pod whose slot this is.
  let pod: PodRecord
  /// The cached instance; for a link, the ancestor's instance it shares. Whatever changes it
  /// takes the instance out of the tree's published ones first (`unpublish`): a read without
  /// the lock must never find an instance the slot no longer holds. Not a `didSet`: an
  /// observed property copies the entry on every write, which cost a new pod with 100
  /// dependencies 4% more instructions; the debug checks catch a write that forgets.
  @exclusivity(unchecked) var entry: CacheEntry?
  // The next three sit in the entry's last word, which it does not fill: declared anywhere
  // else, they made each slot 16 bytes larger (as two more `Bool`s after the dependents did).
  /// Set once the slot has held an instance of its own, for a provider outside a family: the
  /// pod then keeps the slot, empty or not, until its provider is gone.
  @exclusivity(unchecked) var isKept = false
  /// `isPublished`, `readsUnrecorded` and `sharesUnrecorded`, one bit each.
  @exclusivity(unchecked) private var marks: UInt8 = 0
  /// `memberIndex`, in 32 bits: a pod would need hundreds of gigabytes to hold more members.
  @exclusivity(unchecked) private var memberPlace: Int32 = -1
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
  /// The number of the last discard that reached this slot: a discard follows each slot once.
  @exclusivity(unchecked) var discardMark = 0

  @inline(__always)
  init(_ info: ProviderInfo, in pod: PodRecord) {
    self.info = info
    self.pod = pod
  }

  /// Caches `entry`, built from `dependencies`, in a slot whose previous entry the caller has
  /// removed and unpublished (see `entry`). Both are moved in: a copy retained all the entry
  /// holds, under the lock, and released it after.
  @inline(__always)
  func cache(_ entry: consuming CacheEntry, builtFrom dependencies: consuming [Slot]) {
    entry.dependencies = dependencies
    self.entry = consume entry
  }

  /// Whether the entry's value is published for reads without the lock (`SharedReads.swift`).
  var isPublished: Bool {
    @inline(__always) get { marks & 1 != 0 }
    @inline(__always) set { marks = newValue ? marks | 1 : marks & ~1 }
  }

  /// Whether the entry's dependencies in the root pod lack this slot among their dependents:
  /// a request pod's instance built in a shared section (see `EngineState+UnrecordedReads`).
  var readsUnrecorded: Bool {
    @inline(__always) get { marks & 2 != 0 }
    @inline(__always) set { marks = newValue ? marks | 2 : marks & ~2 }
  }

  /// For a slot of the root: set once a child pod has read it through an exclusive section.
  /// Only then do builds of the root's children read it in shared sections without counting
  /// among its dependents, and only a discard that reaches such a slot looks for them (see
  /// `EngineState+UnrecordedReads`). Written only by exclusive sections.
  var sharesUnrecorded: Bool {
    @inline(__always) get { marks & 4 != 0 }
    @inline(__always) set { marks = newValue ? marks | 4 : marks & ~4 }
  }

  /// The slot's place among its pod's members of its instance's scope; -1 when it is none.
  var memberIndex: Int {
    get { Int(memberPlace) }
    set { memberPlace = Int32(newValue) }
  }

  var key: ProviderKey { info.key }
  var id: SlotID { SlotID(address: UInt(bitPattern: ObjectIdentifier(self))) }
  var isUnused: Bool { entry == nil && build == nil && dependents.isEmpty }

  /// The cached value, held for a read after the lock; nil unless the pod keeps it alive: for
  /// a class instance without a hook, the instance itself (retaining it is what the caller's
  /// copy needs anyway), otherwise its box. Reads the entry's fields where they are: copying
  /// the entry out retains all it holds (a cached resolve cost 392 instructions that way, 295
  /// this way).
  @inline(__always)
  var heldStrongValue: HeldValue? {
    switch entry?.kind {
    case .object?: HeldValue(reference: entry!.holder, isValue: true)
    case .boxed?: HeldValue(reference: entry!.holder, isValue: false)
    default: nil
    }
  }
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
