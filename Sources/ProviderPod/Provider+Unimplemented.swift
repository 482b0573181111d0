extension Provider {
  /// A provider with no builder of its own: each pod that needs it is given its value by an
  /// override, and a resolve where no pod gives it stops the program, naming the provider and
  /// where to give it.
  ///
  /// Data that comes with a request, a window or a document reaches builders this way without
  /// a placeholder that would be used silently when forgotten:
  ///
  /// ```swift
  /// struct RequestScope: ProviderScope {
  ///   static let requiresOwningPod = true
  /// }
  /// let currentRequestProvider = Provider<Request>.unimplemented(scope: RequestScope())
  ///
  /// let request = Pod(
  ///   parent: appPod, scopes: [RequestScope()],
  ///   overrides: [currentRequestProvider.override(withValue: incoming)])
  /// ```
  ///
  /// Put it in a scope that requires an owning pod, as above, and the request's data can only
  /// be resolved through a request's pod, never cached where the next request would find it.
  /// The value must be `Sendable`: a pod gives it to every caller.
  ///
  /// - Parameters:
  ///   - scope: Where the given value is cached; usually the scope of the pods that give it.
  ///   - name: A name for messages and events; the value type and where the provider is
  ///     declared if nil.
  ///   - fileID: Where the provider is declared; filled in by the compiler.
  ///   - line: Where the provider is declared; filled in by the compiler.
  ///   - column: Where the provider is declared; filled in by the compiler.
  public static func unimplemented(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column
  ) -> Provider<Value> where Value: Sendable {
    let label = unimplementedLabel(
      name: name, typeName: "\(Value.self)", fileID: fileID, line: line)
    return Provider(scope: scope, name: name, fileID: fileID, line: line, column: column) {
      context in
      fatalError(unimplementedReport(label: label, askedBy: context.askingProviderLabel))
    }
  }
}

extension AsyncProvider {
  /// An async provider with no builder of its own: each pod that needs it is given its value
  /// by an override, and a resolve where no pod gives it stops the program; see
  /// ``Provider/unimplemented(scope:name:fileID:line:column:)``.
  public static func unimplemented(
    scope: any ProviderScope = SingletonScope(),
    name: String? = nil,
    fileID: String = #fileID,
    line: Int = #line,
    column: Int = #column
  ) -> AsyncProvider<Value> {
    let label = unimplementedLabel(
      name: name, typeName: "\(Value.self)", fileID: fileID, line: line)
    return AsyncProvider(scope: scope, name: name, fileID: fileID, line: line, column: column) {
      context in
      fatalError(unimplementedReport(label: label, askedBy: context.askingProviderLabel))
    }
  }
}

/// `name (File.swift:12)`, or `Type (File.swift:12)`: how cycle reports name a provider.
private func unimplementedLabel(name: String?, typeName: String, fileID: String, line: Int)
  -> String
{
  "\(name ?? typeName) (\(declarationSite(fileID: fileID, line: line)))"
}

/// What a resolve of a provider without a builder stops with: the provider, who asked for
/// it, and the fix.
private func unimplementedReport(label: String, askedBy asker: String?) -> String {
  let asked =
    asker.map { "\($0) asked for it" } ?? "it was resolved through a pod, not from a builder"
  return """
    ProviderPod: \(label) has no builder of its own, and no pod that resolved it gives its \
    value (\(asked)). Give it to the pod that needs it with an override, for example \
    Pod(parent: pod, scopes: [...], overrides: [provider.override(withValue: value)]).
    """
}

extension BuildContext {
  /// The provider whose build resolved this one, as cycle reports name it (`greeting
  /// (Routes.swift:12)`); nil when it was resolved through a pod, from no build. Read under
  /// the lock: that build may be ending on another thread (a task its builder started).
  fileprivate var askingProviderLabel: String? {
    let frame = self.frame
    return engine.state.withLock { _ in frame.parent?.info?.cycleLabel }
  }
}
