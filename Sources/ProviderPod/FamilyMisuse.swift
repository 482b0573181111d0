// A family is not a provider: it needs an argument to name one member. Without these
// overloads, `pod.resolve(family)` inside a builder made the compiler give up ("failed to
// produce diagnostic"); with them it says what to write instead.

extension ProviderResolver {
  /// Not available: a family needs an argument.
  @available(
    *, unavailable,
    message: "a ProviderFamily needs an argument: resolve one member, as in pod.resolve(family(id))"
  )
  public func resolve<Argument, Value>(_ family: ProviderFamily<Argument, Value>) -> Value {
    fatalError("unavailable")
  }

  /// Not available: a family needs an argument.
  @available(
    *, unavailable,
    message:
      "an AsyncProviderFamily needs an argument: resolve one member, as in try await pod.resolve(family(id))"
  )
  public func resolve<Argument, Value>(_ family: AsyncProviderFamily<Argument, Value>) async throws
    -> Value
  {
    fatalError("unavailable")
  }
}
