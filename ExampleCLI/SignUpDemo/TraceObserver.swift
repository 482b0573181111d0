import Foundation
import ProviderPod

/// Prints what the pod does, one line per event, with each instance's visible label.
final class TraceObserver: PodObserver, @unchecked Sendable {
  private let transcript: Transcript
  private let lock = NSLock()
  private var enabled = true

  init(transcript: Transcript) { self.transcript = transcript }

  /// Whether events are printed.
  var isEnabled: Bool {
    get { lock.withLock { enabled } }
    set { lock.withLock { enabled = newValue } }
  }

  func pod(_ pod: Pod, didReport event: PodEvent) {
    guard isEnabled, let line = Self.line(for: event, labels: { pod.latestLabel(for: $0) }) else {
      return
    }
    transcript.write(line)
  }

  /// The line for `event`, or nil for the demo's own plumbing.
  static func line(for event: PodEvent, labels: (String) -> String) -> String? {
    func row(_ mark: String, _ verb: String, _ provider: String, _ scope: String) -> String {
      "    \(mark) \(verb.padded(to: 10)) \(labels(provider).padded(to: 24)) \(scope)"
    }
    switch event {
    case .built(let provider, _) where provider == instanceLabelsProvider.name,
      .reused(let provider, _) where provider == instanceLabelsProvider.name:
      return nil
    case .built(let provider, let scope):
      return row("+", "built", provider, scope)
    case .reused(let provider, let scope):
      return row("=", "reused", provider, scope)
    case .discarded(let provider, let scope, let reason):
      return row("-", "discarded", provider, scope) + "  (\(reason.explanation))"
    case .overridden(let provider):
      return "    ~ overridden \(provider)"
    case .captiveDependency(let holder, let holderScope, let dependency, let dependencyScope):
      return
        "    ! captive    \(labels(holder)) in \(holderScope) holds \(labels(dependency)) in \(dependencyScope)"
    }
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
}

extension Pod {
  /// The label of the instance `provider` built last, or the provider's name.
  func latestLabel(for provider: String) -> String {
    resolve(instanceLabelsProvider).latest(for: provider) ?? provider
  }
}

extension String {
  func padded(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
