import Foundation
import ProviderPod
import Testing

/// The pod the code under test reaches through a global, as an app keeps it.
let appPod = Pod()

let greetingProvider = Provider(name: "greeting") { _ in "live" }
let messageProvider = Provider(name: "message") { pod in
  "\(pod.resolve(greetingProvider)), from a singleton"
}
let nameProvider = Provider(name: "name") { _ in "nobody" }

/// The places several tests meet, so that each knows the others are inside their isolations
/// at the same moment.
actor Meeting {
  private let expected: Int
  private var arrived = 0
  private var waiting: [CheckedContinuation<Bool, Never>] = []
  private var gaveUp = false

  init(expecting expected: Int) {
    self.expected = expected
  }

  /// Waits until every participant has arrived; false if the watchdog gave up first, which
  /// means the participants did not run at the same time.
  func arrive() async -> Bool {
    arrived += 1
    if arrived == expected {
      for waiter in waiting { waiter.resume(returning: true) }
      waiting = []
      return true
    }
    if gaveUp { return false }
    // A hang watchdog only: on a loaded machine the others may take many seconds to start.
    let watchdog = Task {
      try await Task.sleep(for: .seconds(120))
      self.giveUp()
    }
    defer { watchdog.cancel() }
    return await withCheckedContinuation { waiting.append($0) }
  }

  private func giveUp() {
    gaveUp = true
    for waiter in waiting { waiter.resume(returning: false) }
    waiting = []
  }
}

/// A value shared between threads, behind an `NSLock` (not `Mutex`, whose futex calls the
/// thread sanitizer does not see).
final class Shared<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}
