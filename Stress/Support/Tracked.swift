/// Serial numbers in creation order, for every tracked instance in the process: an instance
/// made before a change completed has a smaller serial than anything made after it.
private let serials = Locked(0)

/// The serial the next tracked instance will get.
func nextSerial() -> Int { serials.value + 1 }

/// An instance the pod builds, counted from birth to disposal to death.
class Tracked: @unchecked Sendable {
  let serial: Int
  let ledger: Ledger
  /// Written under the ledger's lock only.
  fileprivate var isDisposed = false

  init(_ ledger: Ledger) {
    serial = serials.withLock {
      $0 += 1
      return $0
    }
    self.ledger = ledger
    ledger.born()
  }

  deinit { ledger.died() }

  /// For an `onDiscard` hook: the pod must run it once per instance, never twice.
  func discarded() { ledger.disposed(self) }
}

/// Counts one kind of instance. `exact` ledgers are for providers nothing races with a
/// change, so every instance their builder made was cached and must be disposed of; the
/// others may hand an instance out uncached (a build that raced a clear), which the pod does
/// not dispose of.
final class Ledger: Sendable {
  let name: String
  let exact: Bool
  private let report: Report
  private let counts = Locked(Counts())

  struct Counts {
    var born = 0
    var alive = 0
    var disposed = 0
  }

  init(_ name: String, exact: Bool, report: Report) {
    self.name = name
    self.exact = exact
    self.report = report
  }

  var current: Counts { counts.value }

  fileprivate func born() {
    counts.withLock {
      $0.born += 1
      $0.alive += 1
    }
  }

  fileprivate func died() { counts.withLock { $0.alive -= 1 } }

  fileprivate func disposed(_ instance: Tracked) {
    let first = counts.withLock {
      guard !instance.isDisposed else { return false }
      instance.isDisposed = true
      $0.disposed += 1
      return true
    }
    report.check(first, "\(name)#\(instance.serial): onDiscard ran twice")
  }

  /// Once every pod holding these instances is gone: none is alive, and each was disposed of
  /// as its ledger promises.
  func checkSettled() {
    let counts = current
    report.check(
      counts.alive == 0,
      "\(name): \(counts.alive) of \(counts.born) instances still alive after their pods went away")
    if exact {
      report.check(
        counts.disposed == counts.born,
        "\(name): built \(counts.born), onDiscard ran \(counts.disposed) times")
    } else {
      report.check(
        counts.disposed <= counts.born,
        "\(name): built \(counts.born), onDiscard ran \(counts.disposed) times")
    }
  }
}

/// The oldest serial a resolve may hand out: raised after each change completes.
final class Floor: Sendable {
  private let serial = Locked(0)

  var current: Int { serial.value }

  func raise(to newFloor: Int) { serial.withLock { $0 = max($0, newFloor) } }
}
