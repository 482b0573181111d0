import ProviderPod

/// A build that a clear invalidates while it runs (here the builder's own clear of what it
/// used, so that it happens every time) and that then resolves an always-new family member:
/// the pod must keep nothing for the member once the build is over. Measures the heap per
/// build.
enum InvalidatedAlwaysNew {
  static let report = Report(scenario: "invalidated-always-new")

  struct BaseScope: ProviderScope {}
  struct UserScope: ProviderScope {}
  final class Base: Sendable {}

  static let base = Provider(scope: BaseScope(), name: "base") { _ in Base() }
  static let fresh = ProviderFamily(scope: AlwaysCreateNewScope(), name: "fresh") {
    (_, id: Int) in id
  }
  static let user = ProviderFamily(scope: UserScope(), name: "user") { (context, id: Int) in
    _ = context.resolve(base)
    context.clearCachedInstances(forScope: BaseScope())
    return context.resolve(fresh(id))
  }

  static let scenario = Scenario(
    name: "invalidated-always-new",
    summary: "heap per invalidated build that then resolves an always-new family member",
    report: report, run: { duration, _ in run(for: duration) })

  static func run(for duration: Duration) {
    let deadline = Deadline(after: duration)
    let pod = Pod()
    var id = 0
    let growth = HeapGrowth.measure(until: deadline) {
      id += 1
      let value = pod.resolve(user(id))
      if value != id { report.fail("user(\(id)) resolved to \(value)") }
    }
    growth.check(in: report, what: "invalidated build")
  }
}
