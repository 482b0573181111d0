/// The changes a pod or a build context asks for: the one lock discipline of the engine,
/// decide under the lock (an `EngineState` method that returns what to do), then report events,
/// wake watchers and run hooks after unlocking.
extension PodEngine {
  /// Applies a change to the state, then reports its events and runs its disposal hooks,
  /// outside the lock and before returning.
  func change(
    isolation: (any Actor)?, _ body: (inout EngineState, inout EngineState.Aftermath) -> Void
  ) {
    var after = EngineState.Aftermath()
    let pod = self.pod
    let listed = state.withLock {
      $0.join(pod)
      body(&$0, &after)
      $0.noticeChange(into: &after)
      $0.checkInvariantsInDebugBuilds()
      return listTask(
        for: after.disposals, onMainActor: Self.isMainActor(isolation),
        disposedIn: after.disposedIn ?? [])
    }
    defer { withExtendedLifetime(after.released) {} }
    report(after.events)
    for wakeUp in after.wakeUps { wakeUp() }
    guard !after.disposals.isEmpty else { return }
    runDisposals(after.disposals, onMainActor: Self.isMainActor(isolation), listed: listed)
  }

  /// Whether the caller is on the main actor, where main-actor hooks run at once. Asked only
  /// of a change with hooks to run: most have none.
  private static func isMainActor(_ isolation: (any Actor)?) -> Bool {
    isolation.map { ($0 as AnyObject) === MainActor.shared } ?? false
  }

  /// Reports the overrides a pod was created with, once it is set up.
  func reportOverridden(_ records: [OverrideRecord]) {
    guard !records.isEmpty else { return }
    let pod = self.pod
    report(records.map { ReportedEvent(pod: pod, event: .overridden(provider: $0.name)) })
  }

  func install(_ record: OverrideRecord, isolation: (any Actor)?) {
    let pod = self.pod
    change(isolation: isolation) { $0.install(record, in: pod, into: &$1) }
  }

  func removeOverride(of key: ProviderKey, isolation: (any Actor)?) {
    let pod = self.pod
    change(isolation: isolation) { $0.removeOverride(key, in: pod, into: &$1) }
  }

  func clear(scope: any ProviderScope, isolation: (any Actor)?) {
    // `children` is user code: walk the tree before taking the lock.
    let scopes = ScopeInfo.clearableSubtree(of: scope)
    guard !scopes.isEmpty else { return }
    let pod = self.pod
    change(isolation: isolation) { $0.clear(scopes: scopes, in: pod, into: &$1) }
  }

  func clear(provider: ProviderInfo, isolation: (any Actor)?) {
    let pod = self.pod
    change(isolation: isolation) {
      $0.discard(pod.slots[provider.key].map { [$0] } ?? [], reason: .providerCleared, into: &$1)
    }
  }

  func clear(family: FamilyInfo, isolation: (any Actor)?) {
    let pod = self.pod
    change(isolation: isolation) {
      $0.discard($0.members(of: family, in: pod), reason: .providerCleared, into: &$1)
    }
  }

  func dependencyGraph() -> DependencyGraph {
    // Weak instances are held while the graph is made, and let go after the lock.
    var held: [AnyObject] = []
    let pod = self.pod
    let graph = state.withLock {
      $0.join(pod)
      return $0.dependencyGraph(of: pod, holding: &held)
    }
    withExtendedLifetime(held) {}
    return graph
  }

  /// The pod is going away: dispose of what it built (no events: there is no pod left to
  /// report about), let running builds finish without caching, and leave nothing of it in
  /// its parent.
  func shutDown() {
    let pod = self.pod
    // A child that never joined its tree holds nothing and nothing holds it: its own tables
    // are all there is, freed with it. Read without the lock: it is written (under the lock)
    // only by uses of the pod itself or of its descendants, whose pods keep this one, so every
    // writer has let go of it before this runs, which orders their writes before this read as
    // it orders any object's last use before its deinit. A build's context or an instance
    // sequence, which keep the engine past the pod, exist only once the pod joined.
    guard pod.isJoined else {
      // Nothing could have asked for the pod (see `PodRecord+Owner.swift`); forgotten all the
      // same, for whatever keeps the engine.
      pod.forgetOwnerAddress()
      return
    }
    // A request's pod goes away beside its siblings, unless `release` must see the tree.
    if runsSharedSections,
      let (released, listed) = state.withShared({
        access -> (EngineState.ReleasedPod, ListedCleanup?)? in
        guard
          let released = withTreeRoot({ root in
            EngineState.sharedRelease(pod, root: root, tree: sharedTree(access))
          })
        else { return nil }
        return (released, listTask(for: released.disposals, onMainActor: false, disposedIn: [pod]))
      })
    {
      runDisposals(released.disposals, onMainActor: false, listed: listed)
      withExtendedLifetime(released) {}
      return
    }
    let (released, wakeUps, earlier, listed) = state.withLock {
      let released = $0.release(pod)
      // The app's pod let go of: its async hooks wait for the cleanups its tree still runs,
      // which may use its instances (a request's pod let go of just before). Read before its
      // own task is listed, in the section that discarded, as a shutdown reads them. Nothing
      // of the tree can shut down any more, so none of those can be waiting for this one.
      let earlier = pod.parent == nil ? runningCleanups.awaited(byShutdownOf: pod) : []
      let result = (
        released, $0.endWatchers(of: pod), earlier,
        listTask(for: released.disposals, onMainActor: false, disposedIn: [pod])
      )
      $0.checkInvariantsInDebugBuilds()
      return result
    }
    for wakeUp in wakeUps { wakeUp() }
    runDisposals(released.disposals, onMainActor: false, listed: listed, after: earlier)
    withExtendedLifetime(released) {}
  }
}
