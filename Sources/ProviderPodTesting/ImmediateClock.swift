/// A clock whose sleeps end at once: give it to a test's pod, and a retry's back-off of ten
/// seconds takes no real time.
///
/// ```swift
/// @Test(.isolated(appPod, clock: ImmediateClock()))
/// func retriesUntilTheServerAnswers() async throws { ... }
/// ```
///
/// A sleep still ends with `CancellationError` when its task is cancelled, as `Task.sleep`
/// does, and lets other tasks run first. The clock's time stands still: it measures nothing.
public struct ImmediateClock: Clock, Sendable {
  /// A point in the clock's time, which never moves.
  public struct Instant: InstantProtocol, Sendable {
    /// How far from the clock's origin.
    public let offset: Duration

    /// The instant `duration` later.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// How long from this instant to `other`.
    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    /// Whether `lhs` comes first.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }
  }

  /// Makes a clock.
  public init() {}

  /// The origin, always.
  public var now: Instant { Instant(offset: .zero) }

  /// The clock cannot wait less than nothing.
  public var minimumResolution: Duration { .zero }

  /// Returns at once, having let other tasks run; throws `CancellationError` if the task is
  /// cancelled.
  public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    await Task.yield()
    try Task.checkCancellation()
  }
}
