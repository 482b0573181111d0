#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Android)
  import Android
#endif

/// State guarded by a plain OS lock.
///
/// Not `Synchronization.Mutex`: that needs macOS 15 / iOS 18, a DI library has to run on the
/// systems apps still support, and on Linux the thread sanitizer cannot see its locking.
/// The state sits behind a pointer rather than in a stored `var`: passing a class's stored
/// property `inout` costs a dynamic exclusivity check on every access, which doubled the cost
/// of a cached resolve. Nothing user-supplied ever runs while the lock is held.
final class Locked<State>: @unchecked Sendable {
  #if canImport(Darwin)
    private let lock: os_unfair_lock_t
  #else
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
  #endif
  private let state: UnsafeMutablePointer<State>

  init(_ state: State) {
    self.state = .allocate(capacity: 1)
    self.state.initialize(to: state)
    #if canImport(Darwin)
      lock = .allocate(capacity: 1)
      lock.initialize(to: os_unfair_lock())
    #else
      lock = .allocate(capacity: 1)
      lock.initialize(to: pthread_mutex_t())
      pthread_mutex_init(lock, nil)
    #endif
  }

  deinit {
    #if !canImport(Darwin)
      pthread_mutex_destroy(lock)
    #endif
    lock.deinitialize(count: 1)
    lock.deallocate()
    state.deinitialize(count: 1)
    state.deallocate()
  }

  @inline(__always)
  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    #if canImport(Darwin)
      os_unfair_lock_lock(lock)
      defer { os_unfair_lock_unlock(lock) }
    #else
      pthread_mutex_lock(lock)
      defer { pthread_mutex_unlock(lock) }
    #endif
    return try body(&state.pointee)
  }
}
