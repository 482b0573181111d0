import ProviderPod

/// One race, runnable alone with `--scenario NAME`.
struct Scenario: Sendable {
  let name: String
  /// What it races, for `--list` and the summary.
  let summary: String
  let report: Report
  /// Races for the duration; the flag says to race in this process rather than fresh ones.
  let run: @Sendable (_ duration: Duration, _ inProcess: Bool) async -> Void
}

/// In the order they run: the two reported crashes first, so that a short run still meets them.
let allScenarios: [Scenario] = [
  ReentrantDiscard.scenario,
  ObservedClear.scenario,
  ExactOnce.scenario,
  StaleAfterChange.scenario,
  ChildPods.scenario,
  LateJoiningChildren.scenario,
  RequestsBesideAppChanges.scenario,
  RequestBuildsReadApp.scenario,
  WatchersAndAsync.scenario,
  ValueKinds.scenario,
  NestedThreadBuilds.scenario,
  LentContexts.scenario,
  ThreadEnds.scenario,
  ParentSweeps.scenario,
  InvalidatedAlwaysNew.scenario,
  ReleasedMidBuild.scenario,
  SharedReads.scenario,
  CrowdedReads.scenario,
  CrowdedBuilds.scenario,
  IsolatedPods.scenario,
  ShutdownRace.scenario,
  OrphanedRequests.scenario,
  DeepChains.scenario,
  MultiScopeRequests.scenario,
  PodAskedAsItGoes.scenario,
]

/// Waits briefly for instances that die on other threads or tasks (a hook, a build finishing
/// after its pod went away), then checks every ledger.
func settle(_ ledgers: [Ledger]) async {
  let deadline = Deadline(after: .seconds(3))
  while ledgers.contains(where: { $0.current.alive > 0 }), !deadline.hasPassed {
    try? await Task.sleep(for: .milliseconds(5))
  }
  for ledger in ledgers { ledger.checkSettled() }
}

/// Races `race` against a new app pod kept in `global`, as apps keep theirs (builders, deinits
/// and hooks reach it there), until `duration` has passed; then lets go of the pod and waits
/// for what `ledgers` track to settle.
func raceAgainstAppInGlobal(
  _ global: Locked<Pod?>, for duration: Duration, settling ledgers: [Ledger],
  _ race: (Pod, Deadline) -> Void
) async {
  let deadline = Deadline(after: duration)
  do {
    let pod = Pod()
    global.withLock { $0 = pod }
    race(pod, deadline)
    global.withLock { $0 = nil }
  }
  await settle(ledgers)
}
