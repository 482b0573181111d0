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
///   Rarely, that element is the instance it already has.
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
  let key: ProviderKey
  let resolve: Resolve

  typealias Resolve = @Sendable (PodEngine) async throws(Failure) -> Value

  /// Starts watching.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(watcher: InstanceWatcher(engine: engine, key: key, resolve: resolve))
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
    ProviderInstances(engine: engine, key: provider.info.key) { engine in
      engine.resolve(provider, from: nil)
    }
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
    ProviderInstances(engine: engine, key: provider.info.key) { engine in
      try await engine.resolve(provider, from: nil)
    }
  }
}

/// One iterator's watch: registered with the engine while the iterator lives, so that changes
/// mark it.
final class InstanceWatcher<Value, Failure: Error>: @unchecked Sendable {
  // Sendable: every field is immutable; the watch's state is guarded by the engine's lock.
  private let engine: PodEngine
  private let watch: InstanceWatch
  private let id: Int
  private let resolve: ProviderInstances<Value, Failure>.Resolve

  init(
    engine: PodEngine, key: ProviderKey,
    resolve: @escaping ProviderInstances<Value, Failure>.Resolve
  ) {
    self.engine = engine
    self.resolve = resolve
    let watch = InstanceWatch(key: key, pod: engine.pod)
    self.watch = watch
    id = engine.state.withLock { state in
      let id = state.watchers.takeID()
      state.watchers.instances[id] = watch
      return id
    }
  }

  deinit {
    stopWatching()
  }

  /// Unregisters the watch; from then on `next()` returns nil at once.
  private func stopWatching() {
    let watch = engine.state.withLock { $0.watchers.instances.removeValue(forKey: id) }
    withExtendedLifetime(watch) {}
  }

  func next() async throws(Failure) -> Value? {
    while true {
      guard await waitForChange() else { return nil }
      let value: Value
      do {
        value = try await resolve(engine)
      } catch {
        // A build cut short because the pod went away or the consumer left is an end, not
        // a failure.
        if Task.isCancelled || !engine.isAlive { return nil }
        // An iterator that threw has ended, as async iterators do: a later `next()` must not
        // wait for a discard and build again, and an ended watch has nothing left to hold.
        stopWatching()
        throw error
      }
      let engine = self.engine
      let watch = self.watch
      let isNew = engine.state.withLock { state -> Bool? in
        watch.isResolving = false
        guard watch.pod.isAlive else { return nil }
        let entry = watch.pod.slots[watch.key]?.entry
        let seen = watch.seen
        if watch.isChanged {
          // Something changed while resolving: what `value` came from may be gone already,
          // so the next element is resolved at once and handed out whatever it is.
          watch.seen = .unknown
          return true
        }
        watch.seen = entry.map { .cached(InstanceWatch.Weak(entry: $0)) } ?? .uncached
        switch seen {
        case .unknown: return true
        case .uncached: return entry != nil
        case .cached(let last): return entry == nil || entry !== last.entry
        }
      }
      guard let isNew else { return nil }
      if isNew { return value }
    }
  }

  /// Waits until a change concerns the watch, then marks it as resolving. Returns false once
  /// the pod is gone, the task is cancelled or the watch has stopped.
  private func waitForChange() async -> Bool {
    let engine = self.engine
    let watch = self.watch
    let id = self.id
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let isReady = engine.state.withLock { state in
          guard !watch.isChanged, watch.pod.isAlive, !Task.isCancelled,
            state.watchers.instances[id] != nil
          else { return true }
          watch.waiting = continuation
          return false
        }
        if isReady { continuation.resume() }
      }
    } onCancel: {
      engine.state.withLock { _ in watch.takeWakeUp() }?()
    }
    return engine.state.withLock { state in
      guard watch.pod.isAlive, !Task.isCancelled, watch.isChanged,
        state.watchers.instances[id] != nil
      else { return false }
      watch.isChanged = false
      watch.isResolving = true
      return true
    }
  }
}
