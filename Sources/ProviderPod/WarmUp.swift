/// A provider that ``Pod/warmUp(_:)-(WarmableProvider...)`` can build ahead of time:
/// ``Provider``, ``AsyncProvider``, ``MainActorProvider``, and the members of their families.
public protocol WarmableProvider: Sendable {
  /// The name used in events, and in a ``WarmUpError``.
  var name: String { get }

  /// Resolves the provider in `pod` and lets go of the instance: the pod keeps it if its
  /// scope caches it.
  ///
  /// ```swift
  /// try await databaseProvider.warmUp(in: pod)  // one provider; Pod.warmUp does many
  /// ```
  func warmUp(in pod: Pod) async throws
}

extension Provider: WarmableProvider {
  /// Resolves the provider in `pod`, so that its instance is cached before it is needed.
  public func warmUp(in pod: Pod) {
    _ = pod.resolve(self)
  }
}

extension AsyncProvider: WarmableProvider {
  /// Resolves the async provider in `pod`, so that its instance is cached before it is needed.
  ///
  /// - Throws: What the build threw, or `CancellationError` if this task was cancelled.
  public func warmUp(in pod: Pod) async throws {
    _ = try await pod.resolve(self)
  }
}

extension MainActorProvider: WarmableProvider {
  /// Resolves the main-actor provider in `pod`, on the main actor.
  public func warmUp(in pod: Pod) async {
    await MainActor.run { _ = pod.resolve(self) }
  }
}

/// The first failure of ``Pod/warmUp(_:)-(WarmableProvider...)``: which provider failed, and how.
///
/// ```swift
/// do {
///   try await pod.warmUp(configurationProvider, databaseProvider)
/// } catch let error as WarmUpError {
///   print("\(error.provider) did not start: \(error.underlying)")
/// }
/// ```
public struct WarmUpError: Error, CustomStringConvertible {
  /// The name of the provider whose build failed, as in ``Provider/name``.
  public let provider: String
  /// What its build threw.
  public let underlying: any Error

  /// Describes the failure, such as `warming up databaseProvider failed: diskFull`.
  public var description: String { "warming up \(provider) failed: \(underlying)" }
}

extension Pod {
  /// Builds the providers up front, all at once, so that their instances are cached before
  /// anything needs them: at app launch, or when a flow begins.
  ///
  /// ```swift
  /// try await pod.warmUp(configurationProvider, databaseProvider, analyticsProvider)
  /// ```
  ///
  /// Every provider is resolved in a child task of its own, so async builds run concurrently
  /// (a plain builder runs on the thread that picks its task up). Providers that depend on
  /// each other still build once: a warm-up resolves exactly as `resolve` does.
  ///
  /// When a build fails, the warm-up throws at once and cancels the rest. Nothing is left
  /// half-built: a failed build caches nothing; a build the warm-up started and nobody else
  /// waits for is cancelled, and if it finishes all the same its value is not cached (its
  /// `onDiscard` runs); an instance that finished before the failure stays cached, since it
  /// is valid. A build someone else also waits for goes on for them.
  ///
  /// - Throws: A ``WarmUpError`` naming the first provider whose build failed, or
  ///   `CancellationError` if the calling task was cancelled.
  public func warmUp(_ providers: any WarmableProvider...) async throws {
    try await operations.warmUp(providers)
  }

  /// Builds the providers up front, all at once; see
  /// ``warmUp(_:)-(WarmableProvider...)``.
  ///
  /// ```swift
  /// let launchProviders: [any WarmableProvider] = [configurationProvider, databaseProvider]
  /// try await pod.warmUp(launchProviders)
  /// ```
  public func warmUp(_ providers: [any WarmableProvider]) async throws {
    try await operations.warmUp(providers)
  }
}

extension BuildContext {
  /// Builds the providers up front, all at once, from this build, as ``Pod`` does.
  ///
  /// ```swift
  /// let homeScreenProvider = AsyncProvider { pod in
  ///   try await pod.warmUp(profileProvider, feedProvider)  // both at once
  ///   return HomeScreen(profile: try await pod.resolve(profileProvider))
  /// }
  /// ```
  ///
  /// Each provider is resolved from this build, as ``resolve(_:)-(Provider<Value>)`` does: the
  /// build depends on every instance the warm-up resolved, so discarding one of them discards
  /// what this build makes too.
  ///
  /// - Throws: A ``WarmUpError`` naming the first provider whose build failed, or
  ///   `CancellationError` if the calling task was cancelled.
  public func warmUp(_ providers: any WarmableProvider...) async throws {
    try await operations.warmUp(providers)
  }

  /// Builds the providers up front, all at once, from this build; see
  /// ``warmUp(_:)-(WarmableProvider...)``.
  public func warmUp(_ providers: [any WarmableProvider]) async throws {
    try await operations.warmUp(providers)
  }
}
