import ProviderPod

// How the trace words and orders what it prints: why an instance was discarded, in which
// order discards are listed, back-offs in milliseconds, padded columns.

/// Where a discard is listed.
struct DiscardOrder: Comparable {
  let cause: Int
  let scope: Int
  let label: String

  static func < (lhs: Self, rhs: Self) -> Bool {
    (lhs.cause, lhs.scope, lhs.label) < (rhs.cause, rhs.scope, rhs.label)
  }
}

extension DiscardReason {
  /// Why `count` instances were discarded.
  func explanation(count: Int) -> String {
    let one = count == 1
    return switch self {
    case .scopeCleared: one ? "its scope was cleared" : "their scope was cleared"
    case .dependencyDiscarded:
      one ? "it was built from a discarded instance" : "they were built from discarded instances"
    case .overrideChanged: one ? "its override changed" : "their override changed"
    case .providerCleared: one ? "its provider was cleared" : "their providers were cleared"
    case .podShutDown: one ? "its pod was shut down" : "their pod was shut down"
    }
  }

  /// Causes before what they caused.
  var order: Int { self == .dependencyDiscarded ? 1 : 0 }
}

extension Duration {
  /// The duration in whole milliseconds, as a log line shows a back-off.
  var milliseconds: Int64 {
    components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
  }
}

extension String {
  func padded(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
