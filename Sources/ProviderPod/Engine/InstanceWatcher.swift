/// One iterator's watch: registered with the engine while the iterator lives, so that changes
/// mark it.
final class InstanceWatcher<Value, Failure: Error> {
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
