extension Provider {
  /// Creates a provider that builds a new value on every resolve: the way to provide a value
  /// that is not `Sendable`.
  ///
  /// ```swift
  /// final class ReportDraft {  // mutable, not Sendable
  ///   var lines: [String] = []
  /// }
  /// let reportDraftProvider = Provider(scope: AlwaysCreateNewScope()) { _ in ReportDraft() }
  /// ```
  ///
  /// A pod is shared by every thread, and a scope that caches hands one instance to every
  /// caller, so a provider in any other scope needs a `Sendable` value. Built anew for each
  /// resolve, a value belongs to the caller that resolved it alone. Such a provider can only
  /// be overridden with another builder that also runs on every resolve
  /// (``override(with:)``).
  ///
  /// The pod never owns an always-new instance, so there is no `onDiscard` hook.
  ///
  /// - Parameters:
  ///   - scope: ``AlwaysCreateNewScope``.
  ///   - name: A name for events and cycle reports. By default the value type and the
  ///     declaration's file and line.
  ///   - fileID: Where the provider is declared; filled in by the compiler.
  ///   - line: Where the provider is declared; filled in by the compiler.
  ///   - column: Where the provider is declared; filled in by the compiler.
  ///   - build: Builds a new value for each resolve.
  public convenience init(
    scope: AlwaysCreateNewScope,
    name: String? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column,
    _ build: @escaping @Sendable (BuildContext) -> Value
  ) {
    self.init(
      anyScope: scope, name: name, onDiscard: nil, fileID: fileID, line: line, column: column,
      build: build)
  }

  /// An override for ``Pod/init(overrides:observer:)`` that builds the value another way, in
  /// the provider's own scope.
  ///
  /// For a provider whose value is not `Sendable`, the only override there is: its provider
  /// builds a new value on every resolve, and so does the override. For a `Sendable` value,
  /// ``override(scope:with:)`` may also name another scope.
  ///
  /// ```swift
  /// let pod = Pod(overrides: [reportDraftProvider.override { _ in ReportDraft.sample() }])
  /// ```
  ///
  /// - Parameter build: The replacement builder.
  public func override(
    with build: @escaping @Sendable (BuildContext) -> Value
  ) -> ProviderOverride {
    ProviderOverride(TypedOverride(provider: self, scope: nil, build: build))
  }
}
