import ProviderPod

/// The second reported crash, with no user code re-entering the pod: two threads resolve a
/// cached scoped class instance through a pod that has an observer (which sends the cached
/// read down the general path), and a third clears the scope in a loop.
enum ObservedClear {
  static let report = Report(scenario: "observed-clear")
  static let items = Ledger("item", exact: false, report: report)

  struct RequestScope: ProviderScope {}

  final class Item: Tracked, @unchecked Sendable {}

  /// Its presence is the point: an observed pod never takes the lock-free cached path.
  struct QuietObserver: PodObserver {
    func pod(_ pod: Pod, didReport event: PodEvent) {}
  }

  static let itemProvider = Provider(scope: RequestScope(), name: "item") { _ in Item(items) }

  static let scenario = Scenario(
    name: "observed-clear",
    summary: "cached resolves through an observed pod against a clear of their scope",
    report: report, run: inFreshProcesses("observed-clear", report: report, race: run))

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration)
    do {
      let pod = Pod(observer: QuietObserver())
      onThreads(3) { index in
        var operations = 0
        while !deadline.hasPassed {
          if index < 2 {
            _ = pod.resolve(itemProvider)
          } else {
            pod.clearCachedInstances(forScope: RequestScope())
          }
          operations += 1
        }
        report.add(operations: operations)
      }
    }
    await settle([items])
  }
}
