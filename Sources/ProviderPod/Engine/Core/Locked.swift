internal import CProviderPod

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Android)
  import Android
#endif

/// State guarded by a plain OS lock, and the engine's every claim that a type is safe to share
/// between threads because that lock guards it.
///
/// A tree's lock also has a shared side (`withShared`): sections that run beside each other
/// and never beside `withLock`, for a request pod's own work (see `EngineState+SharedSections`
/// for what they may write, and `SharedReads.c` for why the two sides exclude each other).
///
/// **Unsafe code here, and the invariant it relies on.** The lock and the state live behind
/// pointers this class allocates and frees, in its initializer and its `deinit`. Their
/// addresses (`LockHandle`) leave this file only to a holder that knows the `Locked` outlives
/// it, as its header must say (a pod's record: see `PodRecord`); the handle's `withLock` and
/// `withShared` (or `openShared`, the same section for a caller that ends it itself after
/// copying out a value it found there) are the only ways in. A shared section reads the state
/// in place through `SharedAccess` (an address, not a copy) and never writes it: only
/// `withLock` hands out the state `inout`, and no `withLock` section runs beside a shared one.
/// The types listed at the end are declared `@unchecked Sendable` here, and nowhere else,
/// because the compiler cannot see what makes them safe: each field of theirs is either
/// immutable once the object is shared, or read and written only while holding their tree's
/// lock (one `Locked<EngineState>` per tree of pods), or, in a request pod's shared sections,
/// the smaller lock `EngineState+SharedSections` names for it. The engine's methods that touch
/// them run under that lock (`EngineState`'s methods, and closures passed to `withLock` or
/// `withShared`); user code never does. A new type claimed here must say which of its fields
/// are which.
///
/// Not `Synchronization.Mutex`: that needs macOS 15 / iOS 18, a DI library has to run on the
/// systems apps still support, and on Linux the thread sanitizer cannot see its locking.
/// On Linux the mutex is glibc's adaptive kind: a thread that finds it held spins a little
/// before it sleeps. Every section under it is short (well under a microsecond), shorter than
/// a sleep and a wake-up, and a server's request pods all take it: two threads of request pods
/// went from 0.59x one thread's rate to 0.69x with this alone (medians of eight runs on two
/// cores), for nine instructions a trip.
/// The state sits behind a pointer rather than in a stored `var`: passing a class's stored
/// property `inout` costs a dynamic exclusivity check on every access, which doubled the cost
/// of a cached resolve. Nothing user-supplied ever runs while the lock is held.
final class Locked<State>: @unchecked Sendable {
  /// The lock's and the state's addresses, which is all a section uses.
  let handle: LockHandle<State>

  init(_ state: State, sharedSections: UnsafeMutablePointer<pp_tree_words>? = nil) {
    let stateAddress = UnsafeMutablePointer<State>.allocate(capacity: 1)
    stateAddress.initialize(to: state)
    let lock = LockAddress.allocate(capacity: 1)
    #if canImport(Darwin)
      lock.initialize(to: os_unfair_lock())
    #else
      lock.initialize(to: pthread_mutex_t())
      var attributes = pthread_mutexattr_t()
      pthread_mutexattr_init(&attributes)
      defer { pthread_mutexattr_destroy(&attributes) }
      #if canImport(Glibc)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
      #endif
      let status = pthread_mutex_init(lock, &attributes)
      if status != 0 { lockFailed("pthread_mutex_init", error: status) }
    #endif
    handle = LockHandle(lock: lock, state: stateAddress, sharedSections: sharedSections)
  }

  deinit {
    #if !canImport(Darwin)
      let status = pthread_mutex_destroy(handle.lock)
      if status != 0 { lockFailed("pthread_mutex_destroy", error: status) }
    #endif
    handle.lock.deinitialize(count: 1)
    handle.lock.deallocate()
    handle.state.deinitialize(count: 1)
    handle.state.deallocate()
    #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
      handle.exclusiveSections.deallocate()
    #endif
  }

  /// See `LockHandle.withLock`.
  @inline(__always)
  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    try handle.withLock(body)
  }

  /// See `LockHandle.withShared`.
  @inline(__always)
  func withShared<Result>(_ body: (SharedAccess<State>) -> Result?) -> Result? {
    handle.withShared(body)
  }
}

/// The addresses of a `Locked` value's lock and state, through which every section runs: for
/// a holder that knows the `Locked` outlives it, which keeps these rather than a reference to
/// it. A pod's record does (the tree's root record owns the lock, and every record keeps its
/// parent's, up to the root's): a reference would be retained as each request's pod is
/// made and released as it goes, two writes every request on every core makes to one count.
/// Valid only while its `Locked` lives; the holder's header must say why it does.
struct LockHandle<State> {
  fileprivate let lock: LockAddress
  fileprivate let state: UnsafeMutablePointer<State>
  /// For a tree's state: the words of its shared sections (see `withShared`), kept alive by
  /// the state itself (its `ThreadBuildGate`). Nil for a lock with no shared side.
  fileprivate let sharedSections: UnsafeMutablePointer<pp_tree_words>?
  #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
    /// Exclusive sections entered so far, counted inside them: for tests that a request pod's
    /// own work takes none. Debug builds only: a release build writes nothing for it.
    fileprivate let exclusiveSections: UnsafeMutablePointer<Int>
  #endif

  fileprivate init(
    lock: LockAddress, state: UnsafeMutablePointer<State>,
    sharedSections: UnsafeMutablePointer<pp_tree_words>?
  ) {
    self.lock = lock
    self.state = state
    self.sharedSections = sharedSections
    #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
      exclusiveSections = .allocate(capacity: 1)
      exclusiveSections.initialize(to: 0)
    #endif
  }

  /// Runs `body` with the state, holding the lock. What `body` took out of the tree's
  /// published instances is let go of after the lock, once no read can still use it.
  @inline(__always)
  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    // Only the tree's lock: the others (a cleanup list's, a shutdown's) are taken inside the
    // tree's sections, where a release of what the tree retired could run a deinit.
    defer { if sharedSections != nil { reclaimPublishedValues() } }
    #if canImport(Darwin)
      os_unfair_lock_lock(lock)
      defer { os_unfair_lock_unlock(lock) }
    #else
      // Checked as swift-nio's `NIOLock` checks them: a lock that failed guards nothing, so
      // the program stops here rather than go on touching the state unguarded.
      let locked = pthread_mutex_lock(lock)
      if locked != 0 { lockFailed("pthread_mutex_lock", error: locked) }
      defer {
        let unlocked = pthread_mutex_unlock(lock)
        if unlocked != 0 { lockFailed("pthread_mutex_unlock", error: unlocked) }
      }
    #endif
    // Inside the mutex: one writer at a time raises the flag and waits out shared sections.
    if let sharedSections { pp_exclusive_enter(sharedSections) }
    defer { if let sharedSections { pp_exclusive_exit(sharedSections) } }
    #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
      exclusiveSections.pointee += 1
    #endif
    return try body(&state.pointee)
  }

  #if DEBUG || PROVIDERPOD_INTERNAL_CHECKS
    /// Exclusive sections entered so far (debug builds only).
    var exclusiveSectionsEntered: Int { exclusiveSections.pointee }
  #endif

  /// Runs `body` in a shared section of the lock, beside other shared sections and never
  /// beside `withLock`; nil, without running it, while a `withLock` section runs (or for a
  /// lock with no shared side). `body` may read the state, which only `withLock` sections
  /// write, and must write only what its own caller's header says guards it: each engine type
  /// lists what a shared section may write of it, and under which smaller lock.
  @inline(__always)
  func withShared<Result>(_ body: (SharedAccess<State>) -> Result?) -> Result? {
    guard let access = openShared() else { return nil }
    defer { closeShared() }
    return body(access)
  }

  /// Enters a shared section, as `withShared` does, for a caller that may leave it open past
  /// its own return: one that found a cached value ends it once the value is copied out (see
  /// `SectionRead`), and any other with `closeShared()`. Nil, entering nothing, as for
  /// `withShared`.
  @inline(__always)
  func openShared() -> SharedAccess<State>? {
    guard let sharedSections, pp_shared_enter(sharedSections) else { return nil }
    return SharedAccess(pointer: state)
  }

  /// Ends the thread's shared section, opened with `openShared()`.
  @inline(__always)
  func closeShared() { pp_shared_exit() }
}

/// The platform's lock, behind the pointer that `Locked` allocates.
#if canImport(Darwin)
  private typealias LockAddress = os_unfair_lock_t
#else
  private typealias LockAddress = UnsafeMutablePointer<pthread_mutex_t>
#endif

/// The state as a shared section reads it: in place, through an address, since a copy of the
/// tree's state would retain everything it holds (lines every other thread's section touches).
/// Read-only: the state's methods that a shared section calls are non-mutating, and what they
/// write lives in pods and frames, under the locks their headers name.
struct SharedAccess<State> {
  fileprivate let pointer: UnsafeMutablePointer<State>

  var state: State {
    unsafeAddress { UnsafePointer(pointer) }
  }
}

/// Stops the program on a lock call that failed. Out of line, so that the check costs a
/// locked section one comparison and nothing else.
@inline(never)
private func lockFailed(_ call: String, error: Int32) -> Never {
  preconditionFailure("ProviderPod: \(call) failed with error \(error)")
}

/// Moves a value the caller knows to be safe across an isolation boundary: a value handed to
/// `overrideProvider(_:withValue:)`, which the pod only hands back to its callers.
struct UncheckedSendable<Wrapped>: @unchecked Sendable {
  let value: Wrapped
}

// The engine's objects that threads share, and why each is safe to.

/// Addresses of a lock and of the state it guards, used only through the lock's sections.
extension LockHandle: @unchecked Sendable {}

/// A view of the pod's record, whose engine fields are constant once the pod is shared (the
/// parent `Pod` too, until the pod's `deinit` takes it) and whose tables are guarded by the
/// tree's lock (see `PodRecord`).
extension PodEngine: @unchecked Sendable {}
/// A reference to a cached value or its box, taken under the lock and handed to the caller
/// that resolved it; the boxes are immutable (a value, a hook, a weak reference).
extension HeldValue: @unchecked Sendable {}
/// An address read in a shared section and copied from on the same thread before the section
/// ends (see `SectionRead`); it never reaches another thread.
extension UnretainedValue: @unchecked Sendable {}
/// Immutable: a replacement builder and what the pod needs to key it. Non-final, so the
/// compiler cannot check it; the typed subclasses add one immutable, `@Sendable` closure.
extension OverrideRecord: @unchecked Sendable {}
extension TypedOverride: @unchecked Sendable {}
extension TypedFamilyOverride: @unchecked Sendable {}
extension TypedAsyncOverride: @unchecked Sendable {}
extension TypedAsyncFamilyOverride: @unchecked Sendable {}
/// Every field guarded by the lock; the build's task and continuations are resumed after it.
extension AnyAsyncBuild: @unchecked Sendable {}
extension AsyncBuild: @unchecked Sendable {}
/// Every field guarded by the lock.
extension InstanceWatch: @unchecked Sendable {}
/// Immutable: an engine, a watch (see above) and a `@Sendable` closure. Generic over a value
/// type that need not be `Sendable`: instances are handed to the consuming task, never shared.
extension InstanceWatcher: @unchecked Sendable {}
/// Guarded by the lock, except what its own header lists as the running thread's alone.
extension Frame: @unchecked Sendable {}
/// A tree's shared words (`ThreadBuildGate`), handed to the cleanup task that unlists itself:
/// the words are touched only through atomics, and the list in its header only under its
/// crossing lock (see `RunningCleanups`).
extension RunningCleanups: @unchecked Sendable {}
