internal import CProviderPod

/// Cached instances read without the tree's lock: a slot whose instance has been read once
/// through the lock is *published* in its tree's table (`pp_tree_words` in `CProviderPod`),
/// keyed by pod and provider, and every later cached resolve through that pod finds it there
/// with no lock at all. Threads that only read cached instances then share no line that any of
/// them writes, so reads scale with cores; the instance's own reference count is the one
/// exception, as it is for any shared Swift reference.
///
/// **Unsafe code here, and the invariant it relies on.** The table holds a retained reference
/// to each published instance (or its box), as a raw pointer tagged in its lowest bit when it
/// is the instance itself. Sound because
/// - the table mirrors the slots: only `Slot.publish` puts a reference there, under the lock,
///   for the slot's current strong entry, and every change of `Slot.entry` (and a pod going
///   away, `EngineState.release`) takes it out first, under the same lock; so a read finds the
///   slot's current instance or nothing, and the entry's type is the provider's `Value`
///   (see `CacheEntry`);
/// - a read copies the value it found (retaining the instance) before it announces its end
///   (`PublishedRead`), and a reference taken out of the table is released only after every
///   read that was running then has ended (`pp_reclaim`, which `Locked.withLock` calls after
///   unlocking when the writer retired anything): a read never retains a freed object. The C
///   file's header gives the memory ordering argument.
/// Nothing outside this file turns a published pointer into a reference.
///
/// Two more reads here write no reference count that other requests share: a request pod's
/// build that reads an app instance copies it out of a shared section left open for the copy
/// (`SectionRead`, sound for the same reason); and a list of slots lends its elements to a
/// loop (`allLent`), the list holding each for the whole call.
extension Slot {
  /// Publishes the slot's instance for reads without the lock, in the table of the tree's
  /// `words`. Under the tree's lock; only a value the pod keeps alive (not a weak one).
  @inline(never)
  func publish(in words: UnsafeMutablePointer<pp_tree_words>) {
    guard !isPublished, let held = heldStrongValue else { return }
    // The table tags an instance in its address's lowest bit, which an Objective-C tagged
    // pointer (a small `NSNumber` or `NSString` on Darwin) may already use: such a value is
    // read under the lock.
    if held.isValue, UInt(bitPattern: ObjectIdentifier(held.reference)) & 1 != 0 { return }
    let retained = Unmanaged.passRetained(held.reference).toOpaque()
    pp_publish(words, pod.address, info.key.address, held.isValue ? retained + 1 : retained)
    isPublished = true
  }

  /// Takes the slot's instance out of the published ones. Under the tree's lock. Kept out of
  /// line: the discard loops that call it for the few published slots among many ran about 160
  /// instructions slower per discarded instance with it inlined.
  @inline(never)
  func unpublish(in words: UnsafeMutablePointer<pp_tree_words>) {
    isPublished = false
    _ = pp_unpublish(words, pod.address, info.key.address)
  }
}

extension PodRecord {
  /// The pod's key in its tree's table of published instances.
  var address: UInt { UInt(bitPattern: ObjectIdentifier(self)) }
}

extension PodEngine {
  /// A read of the instance published for `info` in this pod, open until its value is taken;
  /// nil, the read closed, when none is published.
  @inline(__always)
  func publishedValue(of info: ProviderInfo) -> PublishedRead? {
    guard let found = pp_read_open(treeWords, pod.address, info.key.address) else {
      pp_read_close()
      return nil
    }
    return PublishedRead(bits: UInt(bitPattern: found))
  }
}

/// An open read of a published instance: until it closes, no writer releases what it found.
/// Its value is copied out while it is open, which retains the instance once, and the copy is
/// what the caller gets. A read that retained the instance itself and handed that reference
/// to a copy retained and released it once more: four writes of a reference count that every
/// thread reading the same instance writes, where handing out a strong reference needs two.
///
/// A value kept in a box (a struct, or an instance with a hook) is copied out of the box
/// borrowed, so a read of a value with no reference in it writes nothing at all.
///
/// The copy's retain stays inside the read: `pp_read_close` is a call the optimiser cannot see
/// into, which may release the instance as far as it knows, so no retain of it is moved past
/// the call; and the resolves that read (`Pod.resolve` and the like) are not inlinable, so the
/// copy is the value's own copy operation, a runtime call, in the library's generic code.
struct PublishedRead: ~Copyable {
  /// The instance or its box, tagged in bit 0 when it is the instance.
  private let bits: UInt

  fileprivate init(bits: UInt) { self.bits = bits }

  /// The value, as the `Value` its entry was made from; closes the read.
  @inline(__always)
  consuming func value<Value>(as type: Value.Type) -> Value {
    let bits = self.bits
    discard self
    defer { pp_read_close() }
    let found = UnsafeMutableRawPointer(bitPattern: bits & ~1).unsafelyUnwrapped
    return copiedValue(at: found, isInstance: bits & 1 != 0, as: type)
  }

  deinit { pp_read_close() }
}

/// A cached instance of the root pod read by a request pod's build in a shared section of the
/// tree's lock (`EngineState.sharedStep`), which stays open until the value is copied out: a
/// retained reference handed out of the section, copied and released, wrote the instance's
/// reference count twice more than the copy alone, on every request, on every core.
///
/// Sound for the reason a `PublishedRead` is: only an exclusive section changes the root's
/// entries, and none runs beside an open shared section, so the instance outlives the copy;
/// `pp_shared_exit` is as opaque to the optimiser as `pp_read_close`. Nothing runs between the
/// step that found the value and the copy (no user code, no other section on the thread), and
/// that step let go of nothing, which it would have had to do inside the section.
struct SectionRead: ~Copyable {
  private let found: UnretainedValue

  /// A read of `found`, which the thread's open shared section keeps alive.
  init(_ found: UnretainedValue) { self.found = found }

  /// The value, as the `Value` its entry was made from; ends the section.
  @inline(__always)
  consuming func value<Value>(as type: Value.Type) -> Value {
    let found = self.found
    discard self
    defer { pp_shared_exit() }
    return copiedValue(at: found.address, isInstance: found.isInstance, as: type)
  }

  deinit { pp_shared_exit() }
}

/// A slot's strong instance, or its box, by address, taken without a retain: valid only while
/// the section that found it stays open (see `SectionRead`).
struct UnretainedValue {
  fileprivate let address: UnsafeMutableRawPointer
  /// Whether `address` is the instance itself rather than its box.
  fileprivate let isInstance: Bool
}

extension Slot {
  /// The strong value the slot holds now, unretained; nil for none, or a weak one. Read in
  /// place, as `heldStrongValue` is: a copy of the entry would retain all it holds.
  var unretainedValue: UnretainedValue? {
    switch entry?.kind {
    case .object?:
      UnretainedValue(address: Unmanaged.passUnretained(entry!.holder).toOpaque(), isInstance: true)
    case .boxed?:
      UnretainedValue(
        address: Unmanaged.passUnretained(entry!.holder).toOpaque(), isInstance: false)
    default: nil
    }
  }
}

/// The value at `address` (see `PublishedRead`): a copy of the instance, which is the caller's
/// reference, or a copy out of its box, borrowed. The caller keeps the address alive.
@inline(__always)
private func copiedValue<Value>(
  at address: UnsafeMutableRawPointer, isInstance: Bool, as type: Value.Type
) -> Value {
  // The instance is a `Value` (its entry was made only from a class instance of one, see
  // `CacheEntry.make`).
  if isInstance { return unsafeBitCast(address, to: Value.self) }
  // The box is borrowed, not retained: a retain would write the box's reference count, which
  // every thread reading the value writes.
  return Unmanaged<ValueBox>.fromOpaque(address)._withUnsafeGuaranteedRef { $0.value(as: type) }
}

extension Array where Element == Slot {
  /// Calls `body` with each slot until it returns false; false if it did. The slots are lent,
  /// not retained: a request pod's loops over what its instances were built from retained
  /// each app slot, a write every request on every core shares. The list holds each slot for
  /// the whole call, and `body` must not change the list.
  @inline(__always)
  func allLent(_ body: (Slot) -> Bool) -> Bool {
    withUnsafeBufferPointer { slots in
      for index in slots.indices {
        let going = Unmanaged.passUnretained(slots[index])._withUnsafeGuaranteedRef(body)
        if !going { return false }
      }
      return true
    }
  }
}

/// Lets go of what this thread took out of the table of published instances, once no read can
/// still be using it. Called after the lock is released: a release may run a deinit.
@inline(__always)
func reclaimPublishedValues() {
  if pp_needs_reclaim() { pp_reclaim() }
}

extension EngineState {
  /// The table of published instances' problems: it must hold exactly the instances of the
  /// slots that say they are published, each the slot's current one. Under the lock.
  func publishedValueViolations(in pods: [PodRecord]) -> [String] {
    var problems: [String] = []
    var published = 0
    for pod in pods {
      for slot in pod.slots where slot.isPublished {
        published += 1
        let found = pp_published_value(threadBuildGate.words, pod.address, slot.info.key.address)
        guard let held = slot.heldStrongValue, let found else {
          problems.append("\(slot.info.name): published without a value the pod keeps")
          continue
        }
        let expected = Unmanaged.passUnretained(held.reference).toOpaque()
        if UnsafeMutableRawPointer(found) != (held.isValue ? expected + 1 : expected) {
          problems.append("\(slot.info.name): published value is not the slot's")
        }
      }
    }
    if published != pp_published_count(threadBuildGate.words) {
      problems.append("the published instances are not those of the slots that say so")
    }
    return problems
  }
}
