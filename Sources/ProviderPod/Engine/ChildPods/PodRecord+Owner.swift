/// A child pod's own `Pod`, found from its record only when a builder or a warm-up asks for
/// it.
///
/// **Unsafe code here, and the invariant it relies on.** `PodRecord.ownerAddress` is the
/// child `Pod`'s address, held without a reference count. It is turned back into a reference
/// only here, under the tree's lock (an exclusive section), and only while it is set. The pod's
/// `deinit` clears it (`forgetOwnerAddress`) in the section that lets the pod go, exclusive
/// (`EngineState.release`) or the pod's own shared one (`sharedRelease`), which never runs
/// beside an exclusive section; the pod's memory is freed only after its `deinit` returns. So
/// while the address is set and the lock held, the pod's memory is there, though its last
/// reference may have gone: it may be deinitialising, waiting for the lock. A pod that never
/// joined its tree goes away without the lock; nothing can ask for it then, since only a
/// build's context or a pod's own operations ask, and a context exists only once the pod has
/// joined, and the pod's operations are called through the pod.
///
/// The reference made from the address is a strong one, and Swift's runtime lets a strong
/// reference to an object that is deinitialising be taken and let go of with no effect; the
/// weak reference stored from it is then nil, as the runtime makes it for such an object. The
/// strong reference is kept until the weak one has been read back (`withExtendedLifetime`):
/// let go of before, it could be the pod's last (its owner letting go meanwhile), and the
/// pod's `deinit` would then run here, under the lock it takes. Read back, the weak reference
/// holds the pod alive or is nil, so letting go of the strong one is never the last release
/// of a live pod, and for a deinitialising one it is no release at all.
extension PodRecord {
  /// Notes a child pod's address, for `owner` to be set from it if anything asks; an observed
  /// pod's `owner` is set at once, since every event it reports names the pod, outside the
  /// lock. By the pod's initializer, before anything else can reach the record.
  @inline(__always)
  func noteOwner(_ pod: Pod) {
    if hasObserver {
      owner = pod
    } else {
      ownerAddress = Unmanaged.passUnretained(pod).toOpaque()
    }
  }

  /// Whether `owner` is set only when first asked for, under the lock: a child's, unless the
  /// pod is observed. Otherwise it was set before the record was shared, and is read without
  /// the lock.
  var setsOwnerWhenAsked: Bool { depth > 0 && !hasObserver }

  /// The pod, set as `owner` first if nobody asked for it before. Only under the tree's lock.
  func ownerSettingItFirst() -> Pod? {
    guard let address = ownerAddress else { return owner }
    ownerAddress = nil
    let candidate = Unmanaged<Pod>.fromOpaque(address).takeUnretainedValue()
    owner = candidate
    return withExtendedLifetime(candidate) { owner }
  }

  /// The pod is going away: its address must not be used once this section ends. Under the
  /// tree's lock, or in the pod's own shared section.
  @inline(__always)
  func forgetOwnerAddress() {
    ownerAddress = nil
  }
}
