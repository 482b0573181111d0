/// A replacement builder for one provider, made by ``Provider/override(scope:with:)`` or
/// ``Provider/override(withValue:)`` and installed with ``Pod/init(overrides:observer:)``.
///
/// ```swift
/// let testPod = Pod(overrides: [
///   httpClientProvider.override { _ in FakeHTTPClient() },
///   configurationProvider.override(withValue: .staging),
/// ])
/// ```
public struct ProviderOverride: Sendable {
  let record: OverrideRecord

  init(_ record: OverrideRecord) {
    self.record = record
  }
}

extension ProviderOverride: CustomStringConvertible {
  /// Names the overridden provider.
  public var description: String { "override of \(record.name)" }
}
