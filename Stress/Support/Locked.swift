#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// State shared between the racing threads, behind a plain OS lock.
///
/// Not `Synchronization.Mutex`: that needs macOS 15, and this target builds wherever the
/// library does (macOS 13). Not Foundation either: LeakSanitizer reports the caches Foundation
/// keeps for the life of the process, and the stress run's leak check must mean the pod's
/// instances only.
final class Locked<State>: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private var state: State

  init(_ state: State) {
    self.state = state
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&state)
  }

  var value: State { withLock { $0 } }
}
