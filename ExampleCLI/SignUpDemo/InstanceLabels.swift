import Foundation
import ProviderPod

/// Hands out short visible identities, such as `SignUpSession#2`, so a reader can tell what
/// was reused and what was rebuilt. One per pod, so every pod counts from 1.
final class InstanceLabels: @unchecked Sendable {
  private let lock = NSLock()
  private var counts: [String: Int] = [:]
  private var latest: [String: String] = [:]

  init() {}

  /// A new label for an instance of `type`, remembered as the latest one `provider` built.
  func next(_ type: String, provider: String? = nil) -> String {
    lock.withLock {
      counts[type, default: 0] += 1
      let label = "\(type)#\(counts[type]!)"
      latest[provider ?? type] = label
      return label
    }
  }

  /// The label of the instance `provider` built most recently.
  func latest(for provider: String) -> String? {
    lock.withLock { latest[provider] }
  }
}

/// Demo plumbing, not part of the app model: hidden from traces and graphs.
let instanceLabelsProvider = Provider(name: "InstanceLabels") { _ in InstanceLabels() }

extension ProviderResolver {
  /// A visible identity for a new instance of `type`.
  func label(_ type: String, provider: String? = nil) -> String {
    resolve(instanceLabelsProvider).next(type, provider: provider)
  }
}
