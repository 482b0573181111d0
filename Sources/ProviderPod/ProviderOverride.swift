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

/// An installed override, whatever its value type. Immutable.
class OverrideRecord: @unchecked Sendable {
  /// The provider's key, or for a family override the family's.
  let providerKey: ProviderKey
  /// The name events use.
  let name: String
  /// The provider, or nil for a family override.
  let provider: ProviderInfo?
  let scope: ScopeInfo
  /// False for `withValue:` overrides: the pod did not make the value, so it does not
  /// dispose of it.
  let ownsValue: Bool

  init(
    providerKey: ProviderKey, name: String, provider: ProviderInfo?, scope: ScopeInfo,
    ownsValue: Bool
  ) {
    self.providerKey = providerKey
    self.name = name
    self.provider = provider
    self.scope = scope
    self.ownsValue = ownsValue
  }

  var isFamilyOverride: Bool { provider == nil }
}

/// The override of a `Provider<Value>`; the pod keys it by that provider, so the downcast
/// from `OverrideRecord` in `Pod.resolve` always holds.
final class TypedOverride<Value>: OverrideRecord, @unchecked Sendable {
  let build: @Sendable (Pod) -> Value

  init(
    provider: Provider<Value>, scope: (any ProviderScope)?, ownsValue: Bool = true,
    build: @escaping @Sendable (Pod) -> Value
  ) {
    self.build = build
    super.init(
      providerKey: provider.info.key, name: provider.info.name, provider: provider.info,
      scope: scope.map(ScopeInfo.init) ?? provider.info.scope, ownsValue: ownsValue)
  }

  convenience init(provider: Provider<Value>, value: Value) {
    let box = UncheckedSendable(value: value)
    self.init(provider: provider, scope: nil, ownsValue: false) { _ in box.value }
  }
}

/// An override of every member of a `ProviderFamily<Argument, Value>`, keyed by the family.
final class TypedFamilyOverride<Argument: Hashable & Sendable, Value>: OverrideRecord,
  @unchecked Sendable
{
  let build: @Sendable (Pod, Argument) -> Value

  init(
    family: ProviderFamily<Argument, Value>, scope: (any ProviderScope)?,
    build: @escaping @Sendable (Pod, Argument) -> Value
  ) {
    self.build = build
    super.init(
      providerKey: family.info.key, name: family.info.name, provider: nil,
      scope: scope.map(ScopeInfo.init) ?? family.info.scope, ownsValue: true)
  }
}
