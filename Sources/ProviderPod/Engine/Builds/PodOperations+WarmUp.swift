extension PodOperations {
  /// Resolves every provider in a child task of its own; the first failure cancels the rest.
  /// From a build, each provider is resolved from that build, so it depends on all of them.
  func warmUp(_ providers: [any WarmableProvider]) async throws {
    do {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for provider in providers {
          group.addTask {
            do {
              try await warmUp(provider)
            } catch {
              throw WarmUpError(provider: provider.name, underlying: error)
            }
          }
        }
        // The first failure leaves the group, which cancels the other tasks and waits for
        // them: their resolves stop waiting, and builds left without callers are cancelled.
        for try await _ in group {}
      }
    } catch {
      if Task.isCancelled { throw CancellationError() }
      throw error
    }
  }

  /// Warms one provider up. The library's own providers resolve through these operations,
  /// from the caller's build if there is one. Any other ``WarmableProvider`` resolves through
  /// the pod; from a build, with that build bound to the task, so that those resolves are
  /// nested in it as a resolve through a pod kept in a global is.
  private func warmUp(_ provider: any WarmableProvider) async throws {
    if let known = provider as? any WarmedUpByOperations {
      try await known.warmUp(with: self)
      return
    }
    guard let pod = engine.root else { return }
    guard let caller else { return try await provider.warmUp(in: pod) }
    // The caller may be a synchronous build whose context was handed to this task: a resolve
    // looks for a frame bound to its task only while the tree counts one, so count this one
    // as an async build does.
    engine.threadBuildGate.asyncBuildStarted()
    defer { engine.threadBuildGate.asyncBuildEnded() }
    try await CurrentFrame.$task.withValue(caller) { try await provider.warmUp(in: pod) }
  }
}

/// The library's warmable providers, which a warm-up resolves through `PodOperations`, and so
/// from the build that asked for it.
protocol WarmedUpByOperations: Sendable {
  func warmUp(with operations: PodOperations) async throws
}

extension Provider: WarmedUpByOperations {
  func warmUp(with operations: PodOperations) {
    _ = operations.resolve(self)
  }
}

extension AsyncProvider: WarmedUpByOperations {
  func warmUp(with operations: PodOperations) async throws {
    _ = try await operations.resolve(self)
  }
}

extension MainActorProvider: WarmedUpByOperations {
  func warmUp(with operations: PodOperations) async {
    await MainActor.run { _ = operations.resolve(self) }
  }
}
