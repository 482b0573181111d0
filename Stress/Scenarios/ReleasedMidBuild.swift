import ProviderPod

/// A root pod that goes away while one of its builds runs, the build then resolving again: a
/// context kept by an instance (as one that resolves lazily keeps it) starts the build, which
/// drops the last reference to the pod. The pod's tables must go with it; LeakSanitizer sees
/// them if they keep each other. Measures the heap per pod.
enum ReleasedMidBuild {
  static let report = Report(scenario: "released-mid-build")

  /// Where the builder finds the pod to drop. One thread only.
  final class Holder: @unchecked Sendable {
    var pod: Pod?
  }
  final class Keeper: Sendable {
    let context: BuildContext
    init(_ context: BuildContext) { self.context = context }
  }
  final class Other: Sendable {}

  static let holder = Holder()

  static let keeper = Provider(scope: AlwaysCreateNewScope(), name: "keeper") { context in
    Keeper(context)
  }
  static let other = Provider(name: "other") { _ in Other() }
  static let releasing = Provider(name: "releasing") { context in
    holder.pod = nil
    return context.resolve(other)
  }

  static let scenario = Scenario(
    name: "released-mid-build",
    summary: "heap per root pod that goes away while its build runs and resolves again",
    report: report, run: { duration, _ in run(for: duration) })

  static func run(for duration: Duration) {
    let deadline = Deadline(after: duration)
    let growth = HeapGrowth.measure(until: deadline) {
      let pod = Pod()
      let kept = pod.resolve(keeper)
      holder.pod = pod
      _ = consume pod
      _ = kept.context.resolve(releasing)
      if holder.pod != nil { report.fail("the builder did not drop the pod") }
    }
    growth.check(in: report, what: "pod")
  }
}
