import Foundation
import ProviderPod

/// Watches one pod for the demo: numbers instances as the pod reports building them
/// (`SignUpSession#2` is the second session that pod built), and prints what each of the
/// app's pod calls did, grouped so that a call reads as a few lines.
///
/// One per pod: each pod numbers its own instances.
final class TraceObserver: PodObserver, @unchecked Sendable {
  /// One event, with the labels it had when it happened.
  private struct Entry {
    enum Kind {
      case discarded(DiscardReason)
      case built, reused, overridden
      case captive(String)
      /// Made again at this declaration: the demo declares providers with `let`, so this is
      /// shown only if someone edits one into a computed property.
      case recreated(String)
      case failed(attempt: Int, error: String, retryingIn: Duration?)
    }
    let kind: Kind
    let label: String
    let scope: String
  }

  private let transcript: Transcript
  private let lock = NSLock()
  private var enabled = true
  private var buildCounts: [String: Int] = [:]
  private var labels: [String: String] = [:]
  private var pending: [Entry] = []

  init(transcript: Transcript) { self.transcript = transcript }

  /// Whether calls and events are printed.
  var isEnabled: Bool {
    get { lock.withLock { enabled } }
    set { lock.withLock { enabled = newValue } }
  }

  func pod(_ pod: Pod, didReport event: PodEvent) {
    lock.withLock {
      switch event {
      case .built(let provider, let scope):
        buildCounts[provider, default: 0] += 1
        labels[provider] = "\(provider)#\(buildCounts[provider]!)"
        pending.append(Entry(kind: .built, label: labels[provider]!, scope: scope))
      case .reused(let provider, let scope):
        pending.append(Entry(kind: .reused, label: currentLabel(provider), scope: scope))
      case .discarded(let provider, let scope, let reason):
        pending.append(Entry(kind: .discarded(reason), label: currentLabel(provider), scope: scope))
      case .overridden(let provider):
        pending.append(Entry(kind: .overridden, label: provider, scope: ""))
      case .captiveDependency(let holder, let holderScope, let dependency, let dependencyScope):
        let held = "\(currentLabel(dependency)) in \(dependencyScope)"
        pending.append(Entry(kind: .captive(held), label: currentLabel(holder), scope: holderScope))
      case .providerRecreated(let provider, let declaration):
        pending.append(Entry(kind: .recreated(declaration), label: provider, scope: ""))
      case .buildFailed(let provider, let attempt, let error, let retryingIn):
        // Not numbered: the instance does not exist yet.
        pending.append(
          Entry(
            kind: .failed(attempt: attempt, error: error, retryingIn: retryingIn),
            label: provider, scope: ""))
      }
    }
  }

  /// The label of the instance `provider` built last in this pod, or the provider's name if
  /// it built none (an instance given with `override(withValue:)`).
  func label(_ provider: String) -> String {
    lock.withLock { currentLabel(provider) }
  }

  /// Caller holds the lock.
  private func currentLabel(_ provider: String) -> String { labels[provider] ?? provider }

  /// Prints a line of the app's code, then what the pod did while `body` ran it.
  ///
  /// - Parameter override: What the call did to an override (`added`, `removed`): the pod
  ///   reports adding, replacing and removing alike, but the caller knows which it was.
  func show<Result>(
    _ code: String, override: String = "changed", _ body: () throws -> Result
  ) rethrows -> Result {
    flush()
    if isEnabled { writeCode(code) }
    defer { flush(override: override) }
    return try body()
  }

  /// The async form of ``show(_:override:_:)``.
  func showAwaiting<Result>(
    _ code: String, isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> Result
  ) async rethrows -> Result {
    flush()
    if isEnabled { writeCode(code) }
    defer { flush() }
    return try await body()
  }

  private func writeCode(_ code: String) {
    transcript.write(code.split(separator: "\n").map { "  ▸ " + $0 }.joined(separator: "\n"))
  }

  /// Prints the events reported since the last flush (or drops them when tracing is off):
  /// discards first, causes before consequences, in the scope tree's order and then by
  /// name, so a clear reads the same every time whatever order the pod reported; then builds, in the order they happened (dependencies
  /// first); then everything that was reused, on one line.
  func flush(override: String = "changed") {
    let entries = lock.withLock {
      defer { pending = [] }
      return enabled ? pending : []
    }
    var lines: [String] = []
    var discards: [(order: DiscardOrder, line: String)] = []
    var reused: [String] = []
    for entry in entries {
      switch entry.kind {
      case .overridden:
        lines.append("    ~ override \(override)  \(entry.label)")
      case .discarded(let reason):
        let line = Self.row("-", "discarded", entry.label, entry.scope)
        let order = DiscardOrder(
          cause: reason.order, scope: Self.scopeOrder(entry.scope), label: entry.label)
        discards.append((order, line + "  (\(reason.explanation))"))
      case .built:
        lines.append(Self.row("+", "built", entry.label, entry.scope))
      case .reused:
        if !reused.contains(entry.label) { reused.append(entry.label) }
      case .captive(let held):
        lines.append("    ! captive    \(entry.label) in \(entry.scope) holds \(held)")
      case .recreated(let declaration):
        lines.append(
          "    ! recreated  \(entry.label), made again at \(declaration): a computed property?"
            + " Declare it with let")
      case .failed(let attempt, let error, let retryingIn):
        let next = retryingIn.map { "retrying in \($0.milliseconds) ms" } ?? "giving up"
        lines.append("    ✗ failed     \(entry.label), attempt \(attempt): \(error); \(next)")
      }
    }
    let sortedDiscards = discards.sorted { $0.order < $1.order }.map(\.line)
    let firstBuild = lines.firstIndex { $0.hasPrefix("    +") } ?? lines.endIndex
    lines.insert(contentsOf: sortedDiscards, at: firstBuild)
    if !reused.isEmpty {
      lines.append("    = reused     " + reused.joined(separator: ", "))
    }
    for line in lines { transcript.write(line) }
  }

  /// The pod's dependency graph with each instance's label, one line per instance:
  /// `EmailStepViewModel#2 (EmailStepScope) <- SignUpSession#2, EmailValidator#2`.
  func labeledGraphLines(of pod: Pod) -> [String] {
    let graph = pod.dependencyGraph()
    return graph.nodes.map { node in
      let line = "\(label(node.provider)) (\(node.scope))"
      let dependencies = graph.dependencies(of: node).map { label($0.provider) }
      return dependencies.isEmpty ? line : line + " <- " + dependencies.joined(separator: ", ")
    }
  }

  private static func row(_ mark: String, _ verb: String, _ label: String, _ scope: String)
    -> String
  {
    "    \(mark) \(verb.padded(to: 10)) \(label.padded(to: 24)) \(scope)"
  }

  /// The demo's scopes from the longest-lived down, as the tour's scope tree lists them.
  private static func scopeOrder(_ scope: String) -> Int {
    ["SingletonScope", "SignUpFlowScope", "EmailStepScope", "ProfileStepScope"]
      .firstIndex(of: scope) ?? 4
  }
}

/// Where a discard is listed.
private struct DiscardOrder: Comparable {
  let cause: Int
  let scope: Int
  let label: String

  static func < (lhs: Self, rhs: Self) -> Bool {
    (lhs.cause, lhs.scope, lhs.label) < (rhs.cause, rhs.scope, rhs.label)
  }
}

extension DiscardReason {
  var explanation: String {
    switch self {
    case .scopeCleared: "its scope was cleared"
    case .dependencyDiscarded: "it was built from a discarded instance"
    case .overrideChanged: "its override changed"
    case .providerCleared: "its provider was cleared"
    }
  }

  /// Causes before what they caused.
  fileprivate var order: Int { self == .dependencyDiscarded ? 1 : 0 }
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
