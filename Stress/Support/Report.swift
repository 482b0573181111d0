#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What one scenario did and which invariants it saw broken.
final class Report: Sendable {
  let scenario: String
  private let state = Locked(State())

  private struct State {
    var operations = 0
    var failures = 0
    var notes: [String] = []
  }

  /// Only the first few violations are printed: one broken invariant in a loop would
  /// otherwise bury everything else.
  private static let printedFailures = 5

  init(scenario: String) { self.scenario = scenario }

  var operations: Int { state.value.operations }
  var failures: Int { state.value.failures }
  /// What the scenario measured, for its summary line.
  var notes: [String] { state.value.notes }

  func note(_ text: String) { state.withLock { $0.notes.append(text) } }

  /// Threads count locally and add their total once, so that counting does not serialise
  /// the loops being raced.
  func add(operations: Int) { state.withLock { $0.operations += operations } }

  func fail(_ message: String) {
    let number = state.withLock {
      $0.failures += 1
      return $0.failures
    }
    guard number <= Self.printedFailures else { return }
    // Unbuffered, and at once: a later crash must not swallow what was found before it.
    complain("PodStress: \(scenario): FAILED: \(message)")
  }

  func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
  }
}

/// Prints a line and flushes it, so that the lines before a crash survive it in a pipe.
func say(_ line: String) {
  print(line)
  fflush(nil)
}

/// Writes a line to standard error, unbuffered. Through the descriptor: the C `stderr`
/// global is shared mutable state to Swift 6.
func complain(_ line: String) {
  var line = line + "\n"
  line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
