/// The instances of one provider in one pod, over time: the current one first, then a new one
/// each time the pod discards it and it is built again. Made by ``Pod/instances(of:)-(Provider<Value>)``.
///
/// ```swift
/// for await session in pod.instances(of: sessionProvider) {
///   show(session)  // the current session, then each new one after a clear
/// }
/// ```
///
/// - **What counts as a change.** Whatever discards the cached instance: a clear of its scope
///   or of the provider, an override added, changed or removed, a discarded dependency. The
///   sequence then resolves the provider again (building it, as any resolve would) and hands
///   out the new instance. Several discards before the consumer asks for the next element give
///   one new instance, the current one.
/// - **Nothing is missed.** A discard that races with handing out an instance makes the next
///   element come at once, so the consumer never waits holding an instance the pod has let go.
///   That element can be the instance it already has: seldom in an app, but under a steady
///   stream of changes from other threads about one element in six was, in a stress run.
///   Compare identities (`===`) where handing out the same instance twice matters.
/// - **Nothing is kept.** The sequence holds no instance between elements: what the pod
///   discards lives only as long as the consumer keeps it.
/// - **It ends** when the pod goes away, and when the consuming task is cancelled. For an
///   async provider, it throws what a build threw, and ends.
/// - An ``AlwaysCreateNewScope`` provider, whose instances are never cached, yields one
///   instance; a ``WeakScope`` instance that goes away by itself is not a discard.
///
/// Each iterator watches on its own, so two loops over one sequence each get every instance.
public struct ProviderInstances<Value, Failure: Error>: AsyncSequence, Sendable {
  /// An instance of the provider.
  public typealias Element = Value

  let engine: PodEngine
  let info: ProviderInfo
  let resolve: Resolve

  typealias Resolve = @Sendable (PodEngine) async throws(Failure) -> Value

  /// Starts watching.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(watcher: InstanceWatcher(engine: engine, info: info, resolve: resolve))
  }

  /// Hands out the instances; see ``ProviderInstances``.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let watcher: InstanceWatcher<Value, Failure>

    /// The current instance, once it differs from the last one handed out; nil once the pod
    /// has gone away or the task was cancelled, and after a build's error was thrown, since
    /// the sequence ended there.
    public mutating func next() async throws(Failure) -> Value? {
      try await watcher.next()
    }
  }
}

extension Pod {
  /// The provider's instances in this pod, over time: the current one, then a new one each
  /// time the cached instance is discarded (by a clear, an override, a discarded dependency)
  /// and built again.
  ///
  /// ```swift
  /// @MainActor final class StatusViewModel {
  ///   var session: SignUpSession?
  ///
  ///   func follow(_ pod: Pod) async {
  ///     for await session in pod.instances(of: sessionProvider) {
  ///       self.session = session  // a new sign-up: the new session, without polling
  ///     }
  ///   }
  /// }
  /// ```
  ///
  /// The sequence resolves the provider when it is first asked for an element, and again
  /// after each discard. It ends when the pod goes away or the consuming task is cancelled,
  /// and never keeps an instance the pod discarded. See ``ProviderInstances``.
  public func instances<Value>(of provider: Provider<Value>) -> ProviderInstances<Value, Never> {
    operations.instances(of: provider)
  }

  /// The async provider's instances in this pod, over time; see
  /// ``instances(of:)-(Provider<Value>)``.
  ///
  /// ```swift
  /// for try await configuration in pod.instances(of: remoteConfigProvider) {
  ///   apply(configuration)
  /// }
  /// ```
  ///
  /// A build that fails (after its retries) ends the sequence with its error; a build that
  /// stopped because a change made it unwanted is not a failure, and the sequence waits for
  /// the new one.
  public func instances<Value: Sendable>(
    of provider: AsyncProvider<Value>
  ) -> ProviderInstances<Value, any Error> {
    operations.instances(of: provider)
  }
}

extension BuildContext {
  /// The provider's instances in the pod, over time, as ``Pod`` does; see
  /// ``Pod/instances(of:)-(Provider<Value>)``.
  ///
  /// The sequence watches the pod, not this build: it resolves the provider when it is asked
  /// for an element, wherever it is iterated, and what it resolves is not recorded as
  /// something this build depends on. A service built here may keep it and follow the
  /// provider for as long as it lives.
  public func instances<Value>(of provider: Provider<Value>) -> ProviderInstances<Value, Never> {
    operations.instances(of: provider)
  }

  /// The async provider's instances in the pod, over time, as ``Pod`` does; see
  /// ``Pod/instances(of:)-(AsyncProvider<Value>)`` and ``instances(of:)-(Provider<Value>)``.
  public func instances<Value: Sendable>(
    of provider: AsyncProvider<Value>
  ) -> ProviderInstances<Value, any Error> {
    operations.instances(of: provider)
  }
}
