/// Scopes only a pod given them may hold (``ProviderScope/requiresOwningPod``).
extension EngineState {
  /// What the program stops with when a provider in such a scope is resolved through a pod
  /// chain that owns no such scope: the provider, the scope, the pod, and the fix.
  static func missingOwnerReport(
    resolving provider: ProviderInfo, in scope: ScopeInfo, through pod: PodRecord
  ) -> String {
    let podDescription =
      pod.parent == nil
      ? "a root pod, which owns no scope"
      : "a child pod that does not own \(scope.name), nor do the pods above it"
    return """
      ProviderPod: \(provider.cycleLabel) is in \(scope.name), whose instances live only in \
      a pod given that scope, and it was resolved through \(podDescription). Resolve it \
      through a child pod made for it: Pod(parent: pod, scopes: [\(scope.name)()]).
      """
  }
}
