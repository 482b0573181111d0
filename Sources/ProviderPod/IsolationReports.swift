/// Calls an isolation's reporter where it can tell which test to fail: on the task that runs
/// the isolation, or one it started. A test framework records a failure for the test running
/// on the current task; a detached task or a thread handed the isolation's pod runs none, so
/// its reports wait until the isolation ends and are made then, by the isolating task.
final class IsolationReports: Sendable {
  private let reporter: @Sendable (String) -> Void
  /// Reports made off the isolation's tasks and not yet passed on; nil once it has ended.
  private let waiting = Locked<[String]?>([])

  init(_ reporter: @escaping @Sendable (String) -> Void) {
    self.reporter = reporter
  }

  func report(_ message: String) {
    if !PodIsolation.isRunning(self) {
      let waits = waiting.withLock { waiting in
        guard waiting != nil else { return false }
        waiting?.append(message)
        return true
      }
      // After the isolation ended nothing will pass it on: the reporter does what it can.
      if waits { return }
    }
    reporter(message)
  }

  /// Passes on what waited; on the isolating task, as the isolation ends.
  func end() {
    let waited = waiting.withLock { waiting in
      defer { waiting = nil }
      return waiting ?? []
    }
    for message in waited { reporter(message) }
  }
}
