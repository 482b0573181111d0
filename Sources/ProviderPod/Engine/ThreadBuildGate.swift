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
final class ThreadBuildGate: @unchecked Sendable {
  // Sendable: the word is only touched atomically.
  private let word: UnsafeMutablePointer<pp_atomic_counter>

  init() {
    word = .allocate(capacity: 1)
    pp_atomic_counter_init(word, 0)
  }

  deinit {
    word.deallocate()
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
