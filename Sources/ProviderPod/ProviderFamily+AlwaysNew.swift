extension ProviderFamily {
  /// Creates a family whose members build a new value on every resolve: the way to provide a
  /// value that is not `Sendable`; see
  /// ``Provider/init(scope:name:fileID:line:column:_:)``.
  ///
  /// ```swift
  /// let reportDraftProvider = ProviderFamily(scope: AlwaysCreateNewScope()) {
  ///   (_, title: String) in ReportDraft(title: title)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - scope: ``AlwaysCreateNewScope``.
  ///   - name: The family's name. By default the value type and the declaration's location.
  ///   - fileID: Where the family is declared; filled in by the compiler.
  ///   - line: Where the family is declared; filled in by the compiler.
  ///   - column: Where the family is declared; filled in by the compiler.
  ///   - build: Builds a new value for each resolve of a member, from the pod and the
  ///     member's argument.
  public convenience init(
    scope: AlwaysCreateNewScope,
    name: String? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) {
    self.init(
      anyScope: scope, name: name, onDiscard: nil, fileID: fileID, line: line, column: column,
      build: build)
  }

  /// An override of every member for ``Pod/init(overrides:observer:)``, in the family's own
  /// scope: for a value that is not `Sendable`, the only override there is; see
  /// ``Provider/override(with:)``.
  ///
  /// - Parameter build: The replacement builder.
  public func override(
    with build: @escaping @Sendable (BuildContext, Argument) -> Value
  ) -> ProviderOverride {
    ProviderOverride(TypedFamilyOverride(family: self, scope: nil, build: build))
  }
}
