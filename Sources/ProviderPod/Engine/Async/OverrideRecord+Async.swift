/// The async override of an `AsyncProvider<Value>`.
final class TypedAsyncOverride<Value: Sendable>: OverrideRecord {
  let build: @Sendable (BuildContext) async throws -> Value

  init(
    provider: AsyncProvider<Value>, scope: (any ProviderScope)?, ownsValue: Bool = true,
    build: @escaping @Sendable (BuildContext) async throws -> Value
  ) {
    self.build = build
    super.init(provider: provider.info, scope: scope, ownsValue: ownsValue)
  }

  convenience init(provider: AsyncProvider<Value>, value: Value) {
    self.init(provider: provider, scope: nil, ownsValue: false) { _ in value }
  }
}

/// An override of every member of an `AsyncProviderFamily<Argument, Value>`.
final class TypedAsyncFamilyOverride<Argument: Hashable & Sendable, Value: Sendable>:
  OverrideRecord
{
  let build: @Sendable (BuildContext, Argument) async throws -> Value

  init(
    family: AsyncProviderFamily<Argument, Value>, scope: (any ProviderScope)?,
    build: @escaping @Sendable (BuildContext, Argument) async throws -> Value
  ) {
    self.build = build
    super.init(family: family.info, scope: scope)
  }
}
