/// An installed override, whatever its value type. Immutable.
class OverrideRecord {
  /// The provider's key, or for a family override the family's.
  let providerKey: ProviderKey
  /// The name events use.
  let name: String
  /// The provider, or nil for a family override.
  let provider: ProviderInfo?
  /// The family, for a family override. Held here because the pod keys the record by the
  /// family's address: a family that went away must not leave its address to a new one.
  let family: FamilyInfo?
  let scope: ScopeInfo
  /// False for `withValue:` overrides: the pod did not make the value, so it does not
  /// dispose of it.
  let ownsValue: Bool

  init(provider: ProviderInfo, scope: (any ProviderScope)?, ownsValue: Bool) {
    self.providerKey = provider.key
    self.name = provider.name
    self.provider = provider
    self.family = nil
    self.scope = scope.map(ScopeInfo.init) ?? provider.scope
    self.ownsValue = ownsValue
  }

  init(family: FamilyInfo, scope: (any ProviderScope)?) {
    self.providerKey = family.key
    self.name = family.name
    self.provider = nil
    self.family = family
    self.scope = scope.map(ScopeInfo.init) ?? family.scope
    self.ownsValue = true
  }

  /// The record as the typed override it was made as. The pod keys records by provider (or
  /// family), and a `Provider<Value>`'s record is always a `TypedOverride<Value>`, so the
  /// cast holds; it is checked all the same, since overrides are off the hot path.
  func typed<Record: OverrideRecord>(_ type: Record.Type) -> Record {
    guard let record = self as? Record else {
      preconditionFailure("ProviderPod: \(name) has an override of another type")
    }
    return record
  }
}

/// The override of a `Provider<Value>`; the pod keys it by that provider, so the downcast
/// from `OverrideRecord` in `PodEngine.callBuilder` always holds.
final class TypedOverride<Value>: OverrideRecord {
  let build: @Sendable (BuildContext) -> Value

  init(
    provider: Provider<Value>, scope: (any ProviderScope)?, ownsValue: Bool = true,
    build: @escaping @Sendable (BuildContext) -> Value
  ) {
    self.build = build
    super.init(provider: provider.info, scope: scope, ownsValue: ownsValue)
  }

  convenience init(provider: Provider<Value>, value: Value) {
    let box = UncheckedSendable(value: value)
    self.init(provider: provider, scope: nil, ownsValue: false) { _ in box.value }
  }
}

/// An override of every member of a `ProviderFamily<Argument, Value>`, keyed by the family.
final class TypedFamilyOverride<Argument: Hashable & Sendable, Value>: OverrideRecord {
  let build: @Sendable (BuildContext, Argument) -> Value

  init(
    family: ProviderFamily<Argument, Value>, scope: (any ProviderScope)?,
    build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    self.build = build
    super.init(family: family.info, scope: scope)
  }
}
