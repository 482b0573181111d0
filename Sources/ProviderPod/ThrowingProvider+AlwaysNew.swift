extension ThrowingProvider {
  /// Creates a throwing provider that builds a new value on every resolve: the way to provide
  /// a value that is not `Sendable`; see ``Provider/init(scope:name:fileID:line:column:_:)``.
  ///
  /// ```swift
  /// let importSessionProvider = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in
  ///   try ImportSession(directory: "inbox")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - scope: ``AlwaysCreateNewScope``.
  ///   - name: A name for messages and events; the value type and where the provider is
  ///     declared if nil.
  ///   - fileID: Where the provider is declared; filled in by the compiler.
  ///   - line: Where the provider is declared; filled in by the compiler.
  ///   - column: Where the provider is declared; filled in by the compiler.
  ///   - build: Builds a new value for each resolve, or throws.
  public convenience init(
    scope: AlwaysCreateNewScope,
    name: String? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext) throws -> Value
  ) {
    self.init(
      anyScope: scope, name: name, onDiscard: nil, fileID: fileID, line: line, column: column,
      build: build)
  }

  /// Builds the provider with `build` in the pod, in the provider's own scope, for
  /// ``Pod/init(overrides:observer:)``: for a value that is not `Sendable`, the only override
  /// there is; see ``Provider/override(with:)``.
  public func override(
    with build: @escaping @Sendable (BuildContext) throws -> Value
  ) -> ProviderOverride {
    provider.override(with: ThrowingProvider.uncachedOnFailure(build))
  }
}
