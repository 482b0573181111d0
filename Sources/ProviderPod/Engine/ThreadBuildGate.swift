internal import CProviderPod

/// Whether an always-new build through a tree's root pod may run without the lock (see
/// `Frame.beginThreadBuild`), read with one atomic load.
///
/// Two things close it: the root pod overriding something or having gone away (its builds
/// then need the general path's lookups), and async builds running in the tree, whose frames
/// are bound to their tasks where only the general path looks for them. A build nested in
/// another thread build on the same thread ignores the second, since its caller is known.
///
/// The word counts async builds in steps of two and keeps the root's state in its lowest bit.
///
/// A managed buffer, which keeps the word in the object's own allocation: an atomic needs a
/// stable address, which a stored property does not promise, and a pointer to a separate
/// allocation would cost each new pod two allocations rather than one.
///
/// Not `Sendable` (a managed buffer cannot be): the engines that share it are, and they
/// touch the word only atomically.
final class ThreadBuildGate: ManagedBuffer<Void, pp_atomic_counter> {
  static func make() -> ThreadBuildGate {
    let gate = unsafeDowncast(create(minimumCapacity: 1) { _ in () }, to: ThreadBuildGate.self)
    gate.withUnsafeMutablePointerToElements { pp_atomic_counter_init($0, 0) }
    return gate
  }

  @inline(__always)
  private var word: UnsafeMutablePointer<pp_atomic_counter> {
    withUnsafeMutablePointerToElements { $0 }
  }

  /// Open for a build with no known caller: nothing closes it.
  @inline(__always)
  var isOpen: Bool { pp_atomic_counter_load(word) == 0 }

  /// Open for a build nested in a thread build: the root pod overrides nothing and is alive.
  @inline(__always)
  var isOpenForNestedBuilds: Bool { pp_atomic_counter_load(word) & 1 == 0 }

  /// Set under the tree's lock whenever the root's overrides change or it goes away, so that
  /// the last write is the state the lock left.
  func rootNeedsLookups(_ needsLookups: Bool) {
    if needsLookups {
      pp_atomic_counter_set_bits(word, 1)
    } else {
      pp_atomic_counter_clear_bits(word, 1)
    }
  }

  func asyncBuildStarted() {
    pp_atomic_counter_add(word, 2)
  }

  func asyncBuildEnded() {
    pp_atomic_counter_add(word, -2)
  }
}
