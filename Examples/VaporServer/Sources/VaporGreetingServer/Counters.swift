import Synchronization

/// How many of a kind of object were made and are still alive: the tests read them to check
/// that request instances are never shared and never outlive their request.
public final class LiveCounter: Sendable {
  private let made = Atomic<Int>(0)
  private let alive = Atomic<Int>(0)

  /// A counter at zero.
  public init() {}

  /// Counts a new object; returns its serial, from 1.
  func objectMade() -> Int {
    alive.add(1, ordering: .relaxed)
    return made.add(1, ordering: .relaxed).newValue
  }

  func objectGone() {
    alive.subtract(1, ordering: .relaxed)
  }

  /// Objects made so far.
  public var madeCount: Int { made.load(ordering: .relaxed) }
  /// Objects made and not yet gone.
  public var aliveCount: Int { alive.load(ordering: .relaxed) }
}
