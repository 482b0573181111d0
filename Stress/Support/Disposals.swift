#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Numbers the `onDiscard` hooks of stamped instances in the order they start, so that a read
/// can tell whether what it got was disposed of before the read began.
///
/// A reader takes `now` before it resolves. An instance stamped with a number at most that
/// reading had its hook start before the resolve did, so it had left every cache by then and no
/// resolve that began afterwards may hand it out. The converse is not checked: a hook that
/// starts while a resolve is running may stamp the instance that resolve returns.
final class DisposalClock: Sendable {
  private let count = Locked(0)

  var now: Int { count.value }

  fileprivate func tick() -> Int {
    count.withLock {
      $0 += 1
      return $0
    }
  }
}

/// A tracked instance that remembers when its `onDiscard` hook started.
class Stamped: Tracked, @unchecked Sendable {
  private let clock: DisposalClock
  private let stamp = Locked<Int?>(nil)

  init(_ ledger: Ledger, clock: DisposalClock) {
    self.clock = clock
    super.init(ledger)
  }

  /// For an `onDiscard` hook: stamps the instance first, then counts the disposal.
  func disposeNow() {
    // The stamp's lock, then the clock's: readers take either alone, never both.
    stamp.withLock { $0 = $0 ?? clock.tick() }
    discarded()
  }

  /// The number of its hook's start, or nil while it has not been disposed of.
  var disposedAt: Int? { stamp.value }
}

extension Report {
  /// Fails if `instance`, handed out by a resolve that began at `began` (a reading of
  /// `DisposalClock.now`), had been disposed of before then.
  func checkNotDisposed(_ instance: Stamped, before began: Int, _ what: String) {
    guard let stamp = instance.disposedAt, stamp <= began else { return }
    fail(
      "\(what): \(instance.ledger.name)#\(instance.serial) handed out by a resolve that began"
        + " after its onDiscard ran"
        + " (hook #\(stamp), the resolve began at #\(began))")
  }
}

/// Holds threads until all of them have arrived, so that they race from the same moment
/// however late each was scheduled (on 2 cores, most of 8 threads start late).
final class StartLine: Sendable {
  private let arrived = Locked(0)
  private let count: Int

  init(count: Int) { self.count = count }

  func arriveAndWait() {
    arrived.withLock { $0 += 1 }
    while arrived.value < count { sched_yield() }
  }
}
