/// A child pod's own `Pod`, found from its record only when a builder or a warm-up asks for
/// it.
///
/// **Unsafe code here, and the invariant it relies on.** `PodRecord.ownerAddress` is the
/// child `Pod`'s address, held without a reference count. It is read, written and turned into
/// a reference only under the pod's own lock (`lockSharedSections`, the lock of the pod's
/// shared sections), and the pod's `deinit` clears it under that lock before the pod's memory
/// is freed: in the pod's own shared section as it goes (`sharedRelease`), or, going through
/// the exclusive side (`EngineState.release`), taking that lock for the store. So while the
/// address is set and the lock held, the pod's memory is there, though its last reference may
/// have gone: its `deinit` may have begun, and wait for the lock. A pod that never joined its
/// tree clears it as it goes, without a lock: nothing else can reach its record then (only a
/// build's context, or the pod's own operations, called through the pod, ask for the pod, and
/// a context exists only once the pod has joined).
///
/// The weak `owner` is set from a strong reference made from the address: Swift's runtime lets
/// a strong reference to an object whose `deinit` has begun be taken and let go of with no
/// effect, and makes a weak reference to it nil. The strong reference is kept until the weak
/// one has been read back (`withExtendedLifetime`), and let go of before the lock is (in a
/// function of its own, never inlined). Read back, the weak reference holds a live pod (the
/// caller's reference, released after the lock) or is nil, the pod going. So no release here,
/// the debug build's copies included, is ever a live pod's last, whose `deinit` would run
/// under the lock it takes (a review's test, asking as the pod went, hung that way when the
/// weak reference was stored from an unretained one: the debug build copied it); and none
/// comes after the lock, when a going pod may be freed.
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

  /// Whether `owner` is set only when first asked for, under the pod's lock: a child's, unless
  /// the pod is observed. Otherwise it was set before the record was shared, and is read
  /// without a lock.
  var setsOwnerWhenAsked: Bool { depth > 0 && !hasObserver }

  /// The pod, set as `owner` first if nobody asked for it before. Takes the pod's lock, which
  /// the caller must not hold (no section calls this).
  func ownerSettingItFirst() -> Pod? {
    lockSharedSections()
    let found = ownerSettingItFirstUnderLock()
    unlockSharedSections()
    return found
  }

  /// Apart, and never inlined, so that `candidate` is let go of before it returns, under the
  /// lock and after the weak reference has been read back (see the header).
  @inline(never)
  private func ownerSettingItFirstUnderLock() -> Pod? {
    guard let address = ownerAddress else { return owner }
    ownerAddress = nil
    let candidate = Unmanaged<Pod>.fromOpaque(address).takeUnretainedValue()
    owner = candidate
    return withExtendedLifetime(candidate) { owner }
  }

  /// The pod is going away: its address must not be used once this returns. In the pod's own
  /// shared section (which holds its lock).
  @inline(__always)
  func forgetOwnerAddress() {
    ownerAddress = nil
  }

  /// `forgetOwnerAddress` from an exclusive section, which does not hold the pod's lock.
  func forgetOwnerAddressLocking() {
    guard setsOwnerWhenAsked else { return }
    lockSharedSections()
    ownerAddress = nil
    unlockSharedSections()
  }
}
