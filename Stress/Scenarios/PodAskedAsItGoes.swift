import ProviderPod

/// A context kept past its build asks for its pod (`BuildContext.pod`) just as the pod's only
/// holder, its child, goes away, round after round, the two threads starting within a few
/// instructions of each other and the child let go of a little later each round. The pod it
/// gets back, if any, must be whole: with its parent, which it keeps, and able to resolve.
/// A pod going away used to test whether its parent was held by anything else and then take
/// the parent's own parent out; the kept context could take the parent back in between, and
/// got a live pod whose parent, the app's pod, was gone.
enum PodAskedAsItGoes {
  static let report = Report(scenario: "pod-asked-as-it-goes")

  struct RequestScope: ProviderScope {}
  final class Keeper: Sendable {
    let context: BuildContext
    init(_ context: BuildContext) { self.context = context }
  }
  final class Session: Sendable {}

  static let keeper = Provider(scope: RequestScope(), name: "keeper") { Keeper($0) }
  static let session = Provider(scope: RequestScope(), name: "session") { _ in Session() }

  static let scenario = Scenario(
    name: "pod-asked-as-it-goes",
    summary: "a kept context asks for its pod as the pod's last holder, its child, goes away",
    report: report, run: { duration, _ in run(for: duration) })

  static func run(for duration: Duration) {
    let deadline = Deadline(after: duration)
    // Odd: a round's context is handed over and the threads race; even: the round is over;
    // -1: no more rounds.
    let turn = Locked(0)
    let handedOver = Locked<Keeper?>(nil)
    onThreads(2) { index in
      if index == 1 {
        var round = 0
        while true {
          var now = turn.value
          while now != 2 * round + 1, now != -1 { now = turn.value }
          if now == -1 { return }
          if let pod = handedOver.value?.context.pod {
            report.check(pod.parent != nil, "a pod came back without its parent")
            _ = pod.resolve(session)
          }
          turn.withLock { $0 = 2 * round + 2 }
          round += 1
        }
      }
      var round = 0
      while !deadline.hasPassed {
        var app: Pod? = Pod()
        var pod: Pod? = Pod(parent: app!, scopes: [RequestScope()])
        let kept = pod!.resolve(keeper)
        var child: Pod? = Pod(parent: pod!)
        _ = child
        app = nil
        pod = nil
        handedOver.withLock { $0 = kept }
        turn.withLock { $0 = 2 * round + 1 }
        for _ in 0..<(round % 64) { _ = turn.value }
        child = nil
        while turn.value != 2 * round + 2 {}
        handedOver.withLock { $0 = nil }
        round += 1
      }
      report.add(operations: round)
      turn.withLock { $0 = -1 }
    }
  }
}
