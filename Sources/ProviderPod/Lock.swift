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
/// Not `Synchronization.Mutex`: that needs macOS 15 / iOS 18, and a DI library has to run on
/// the systems apps still support. Nothing user-supplied ever runs while the lock is held.
final class Locked<State>: @unchecked Sendable {
  #if canImport(Darwin)
    private let lock: os_unfair_lock_t
  #else
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
  #endif
  private var state: State

  init(_ state: State) {
    self.state = state
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
    return try body(&state)
  }
}
