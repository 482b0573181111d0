/// One iterator's watch: registered with the engine while the iterator lives, so that changes
/// mark it.
final class InstanceWatcher<Value, Failure: Error> {
  private let engine: PodEngine
  private let watch: InstanceWatch
  private let id: Int
  private let resolve: ProviderInstances<Value, Failure>.Resolve

  init(
    engine: PodEngine, info: ProviderInfo,
    resolve: @escaping ProviderInstances<Value, Failure>.Resolve
  ) {
    self.engine = engine
    self.resolve = resolve
    let watch = InstanceWatch(info: info, pod: engine.pod)
    self.watch = watch
    id = engine.state.withLock { $0.addInstanceWatch(watch) }
  }

  deinit {
    stopWatching()
  }

  /// Unregisters the watch; from then on `next()` returns nil at once.
  private func stopWatching() {
    let watch = engine.state.withLock { $0.removeInstanceWatch(id) }
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
      let watch = self.watch
      let resolved = engine.state.withLock { $0.endResolving(watch) }
      switch resolved {
      case .new: return value
      case .unchanged: continue
      case .podGone: return nil
      }
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
        let isReady = engine.state.withLock {
          $0.parkInstanceWatch(watch, id: id, continuation: continuation)
        }
        if isReady { continuation.resume() }
      }
    } onCancel: {
      engine.state.withLock { $0.wakeUpCancelled(watch) }?()
    }
    return engine.state.withLock { $0.beginResolving(watch, id: id) }
  }
}
