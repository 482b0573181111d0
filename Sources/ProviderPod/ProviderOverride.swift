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
  public var description: String { "override of \(record.provider.name)" }
}

/// An installed override, whatever its value type. Immutable.
class OverrideRecord: @unchecked Sendable {
  let providerKey: ProviderKey
  let provider: ProviderInfo
  let scope: ScopeInfo

  init(providerKey: ProviderKey, provider: ProviderInfo, scope: ScopeInfo) {
    self.providerKey = providerKey
    self.provider = provider
    self.scope = scope
  }
}

/// The override of a `Provider<Value>`; the pod keys it by that provider, so the downcast
/// from `OverrideRecord` in `Pod.resolve` always holds.
final class TypedOverride<Value>: OverrideRecord, @unchecked Sendable {
  let build: @Sendable (Pod) -> Value

  init(
    provider: Provider<Value>, scope: (any ProviderScope)?,
    build: @escaping @Sendable (Pod) -> Value
  ) {
    self.build = build
    super.init(
      providerKey: provider.info.key, provider: provider.info,
      scope: scope.map(ScopeInfo.init) ?? provider.info.scope)
  }

  convenience init(provider: Provider<Value>, value: Value) {
    let box = UncheckedSendable(value: value)
    self.init(provider: provider, scope: nil) { _ in box.value }
  }
}
