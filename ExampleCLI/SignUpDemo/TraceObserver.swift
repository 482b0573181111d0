import Foundation
import ProviderPod

/// Watches one pod for the demo: numbers instances as the pod reports building them
/// (`SignUpSession#2` is the second session built), and prints what each of the app's pod
/// calls did, grouped so that a call reads as a few lines.
///
/// One per pod. The observers of a tree of pods (the app's pod and its windows' child pods)
/// share one log: instances are numbered across the tree, events print together in the order
/// they happened, tracing is on or off for the whole tree, and once the tree has a child each
/// line says which pod reported it (`[app]`, `[window 1]`). A pod that is not in the tree
/// (a test's) numbers its own instances, from #1.
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
    /// The name of the pod that reported it.
    let pod: String
  }

  /// What the observers of one tree of pods share.
  private final class Log: @unchecked Sendable {
    let transcript: Transcript
    let lock = NSLock()
    // Guarded by `lock`, as are the labels of every observer sharing this log.
    var enabled = true
    var namesPods = false
    var buildCounts: [String: Int] = [:]
    var pending: [Entry] = []

    init(transcript: Transcript) { self.transcript = transcript }
  }

  private let log: Log
  /// The pod's name in the trace: `app`, `window 2`.
  let podName: String
  /// The observer of the parent pod, whose instances this pod shares.
  let parent: TraceObserver?
  /// The label of the instance each provider built last in this pod. Guarded by the log's lock.
  private var labels: [String: String] = [:]
  /// The providers whose instance this pod caches now. Guarded by the log's lock.
  private var held: Set<String> = []

  /// The observer of a root pod: the app's, or a test's.
  init(transcript: Transcript, podName: String = "app") {
    log = Log(transcript: transcript)
    self.podName = podName
    parent = nil
  }

  /// The observer of a child pod of the pod `parent` observes, numbering with it. From now
  /// on, lines say which pod reported them.
  init(childOf parent: TraceObserver, podName: String) {
    log = parent.log
    self.podName = podName
    self.parent = parent
    log.lock.withLock { log.namesPods = true }
  }

  private var transcript: Transcript { log.transcript }

  /// Whether calls and events are printed, for every pod of the tree.
  var isEnabled: Bool {
    get { log.lock.withLock { log.enabled } }
    set { log.lock.withLock { log.enabled = newValue } }
  }

  func pod(_ pod: Pod, didReport event: PodEvent) {
    log.lock.withLock {
      func append(_ kind: Entry.Kind, _ label: String, _ scope: String) {
        log.pending.append(Entry(kind: kind, label: label, scope: scope, pod: podName))
      }
      switch event {
      case .built(let provider, let scope):
        log.buildCounts[provider, default: 0] += 1
        labels[provider] = "\(provider)#\(log.buildCounts[provider]!)"
        held.insert(provider)
        append(.built, labels[provider]!, scope)
      case .reused(let provider, let scope):
        append(.reused, currentLabel(provider), scope)
      case .discarded(let provider, let scope, let reason):
        held.remove(provider)
        append(.discarded(reason), currentLabel(provider), scope)
      case .overridden(let provider):
        append(.overridden, provider, "")
      case .captiveDependency(let holder, let holderScope, let dependency, let dependencyScope):
        let captive = "\(currentLabel(dependency)) in \(dependencyScope)"
        append(.captive(captive), currentLabel(holder), holderScope)
      case .providerRecreated(let provider, let declaration):
        append(.recreated(declaration), provider, "")
      case .buildFailed(let provider, let attempt, let error, let retryingIn):
        // Not numbered: the instance does not exist yet.
        append(.failed(attempt: attempt, error: error, retryingIn: retryingIn), provider, "")
      }
    }
  }

  /// The label of the instance `provider` built last in this pod, or else in the nearest pod
  /// above that built one, or the provider's name if none did (an instance given with
  /// `override(withValue:)`).
  func label(_ provider: String) -> String {
    log.lock.withLock { currentLabel(provider) }
  }

  /// Whether this pod caches an instance of `provider` now, by the events it reported: a
  /// child's graph also lists the parent's instances its own were built from.
  func holds(_ provider: String) -> Bool {
    log.lock.withLock { held.contains(provider) }
  }

  /// The name of the pod that caches `provider`'s instance, this one or the nearest above.
  private func holder(of provider: String) -> String? {
    log.lock.withLock {
      var observer: TraceObserver? = self
      while let current = observer {
        if current.held.contains(provider) { return current.podName }
        observer = current.parent
      }
      return nil
    }
  }

  /// Caller holds the log's lock.
  private func currentLabel(_ provider: String) -> String {
    var observer: TraceObserver? = self
    while let current = observer {
      if let label = current.labels[provider] { return label }
      observer = current.parent
    }
    return provider
  }

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
    transcript.write(
      code.split(separator: "\n").map { ("  ▸ " + $0).fitted(indent: "      ") }
        .joined(separator: "\n"))
  }

  /// Prints the events reported since the last flush (or drops them when tracing is off):
  /// discards first, causes before consequences, in the scope tree's order and then by
  /// name, so a clear reads the same every time whatever order the pod reported; then builds, in the order they happened (dependencies
  /// first); then everything that was reused, on one line.
  func flush(override: String = "changed") {
    let (entries, namesPods) = log.lock.withLock {
      defer { log.pending = [] }
      return (log.enabled ? log.pending : [], log.namesPods)
    }
    var lines: [String] = []
    var discards: [(order: DiscardOrder, reason: DiscardReason, line: String)] = []
    var reused: [String] = []
    for entry in entries {
      let pod = namesPods ? entry.pod : nil
      let tag = pod.map { " [\($0)]" } ?? ""
      switch entry.kind {
      case .overridden:
        lines.append("    ~ override \(override)  \(entry.label)\(tag)")
      case .discarded(let reason):
        let line = Self.row("-", "discarded", entry.label, entry.scope, pod: pod)
        let order = DiscardOrder(
          cause: reason.order, scope: Self.scopeOrder(entry.scope), label: entry.label)
        discards.append((order, reason, line))
      case .built:
        lines.append(Self.row("+", "built", entry.label, entry.scope, pod: pod))
      case .reused:
        if !reused.contains(entry.label + tag) { reused.append(entry.label + tag) }
      case .captive(let captive):
        lines.append("    ! captive    \(entry.label) in \(entry.scope)\(tag) holds \(captive)")
      case .recreated(let declaration):
        lines.append(
          "    ! recreated  \(entry.label)\(tag), made again at \(declaration): a computed"
            + " property? Declare it with let")
      case .failed(let attempt, let error, let retryingIn):
        let next = retryingIn.map { "retrying in \($0.milliseconds) ms" } ?? "giving up"
        lines.append(
          "    ✗ failed     \(entry.label)\(tag), attempt \(attempt): \(error); \(next)"
            .fitted(indent: Self.listIndent))
      }
    }
    let sortedDiscards = Self.grouped(discards.sorted { $0.order < $1.order })
    let firstBuild = lines.firstIndex { $0.hasPrefix("    +") } ?? lines.endIndex
    lines.insert(contentsOf: sortedDiscards, at: firstBuild)
    if !reused.isEmpty {
      lines.append(
        ("    = reused     " + reused.joined(separator: ", ")).fitted(indent: Self.listIndent))
    }
    for line in lines { transcript.write(line) }
  }

  /// The graph of the pod this observes, with each instance's label, one line per instance:
  /// `EmailStepViewModel#2 (EmailStepScope) <- SignUpSession#2, EmailValidator#2`. A child's
  /// graph also lists the parent's instances its own were built from, tagged with their pod:
  /// `NameValidator#1 (ProfileStepScope) <- AppConfiguration#1 [app]`.
  func labeledGraphLines(of pod: Pod) -> [String] {
    let graph = pod.dependencyGraph()
    func labeled(_ node: DependencyGraph.Node) -> String {
      let label = label(node.provider)
      guard parent != nil, !holds(node.provider), let holder = holder(of: node.provider) else {
        return label
      }
      return "\(label) [\(holder)]"
    }
    return graph.nodes.map { node in
      let line = "\(labeled(node)) (\(node.scope))"
      let dependencies = graph.dependencies(of: node).map(labeled)
      return dependencies.isEmpty ? line : line + " <- " + dependencies.joined(separator: ", ")
    }
  }

  /// Where a continued list of labels starts, under the first label of a row.
  private static let listIndent = String(repeating: " ", count: 17)

  /// A built or discarded instance: `    + built      SignUpSession#2          SignUpFlowScope`,
  /// then `[window 1]` when the tree names its pods. A label too long for its column (a
  /// family member's argument) would push the row past the terminal's width: the scope and
  /// the pod then go on a line of their own, still in their column.
  private static func row(
    _ mark: String, _ verb: String, _ label: String, _ scope: String, pod: String?
  ) -> String {
    let start = "    \(mark) \(verb.padded(to: 10)) "
    let end = pod.map { scope.padded(to: 16) + " [\($0)]" } ?? scope
    let row = start + label.padded(to: 24) + " " + end
    guard row.displayWidth > terminalColumns else { return row }
    return start + label + "\n" + String(repeating: " ", count: start.count + 25) + end
  }

  /// The discard lines, each run with one cause after a line that says it: a reason on each
  /// row would not fit the terminal's width.
  private static func grouped(
    _ discards: [(order: DiscardOrder, reason: DiscardReason, line: String)]
  ) -> [String] {
    var lines: [String] = []
    var start = discards.startIndex
    while start < discards.endIndex {
      let reason = discards[start].reason
      let end = discards[start...].firstIndex { $0.reason != reason } ?? discards.endIndex
      lines.append("    discarded because \(reason.explanation(count: end - start))")
      lines += discards[start..<end].map(\.line)
      start = end
    }
    return lines
  }

  /// The demo's scopes from the longest-lived down, as the tour's scope tree lists them.
  private static func scopeOrder(_ scope: String) -> Int {
    ["SingletonScope", "WindowScope", "SignUpFlowScope", "EmailStepScope", "ProfileStepScope"]
      .firstIndex(of: scope) ?? 5
  }
}
