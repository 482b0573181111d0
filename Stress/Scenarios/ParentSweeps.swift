import ProviderPod

/// Providers made at run time (one per screen, say), each resolved through a window pod that
/// does not own its scope, so the instance and its slot are the app pod's; the app clears the
/// scope and the provider goes. Nothing is ever resolved through the app pod itself, and it
/// must still let the slots of gone providers go. Measures the heap per provider made and gone.
enum ParentSweeps {
  static let report = Report(scenario: "parent-sweeps")

  struct ScreenScope: ProviderScope {}
  final class Screen: Sendable {}

  static let scenario = Scenario(
    name: "parent-sweeps",
    summary: "heap per provider made at run time, resolved through a child pod, and gone",
    report: report, run: { duration, _ in run(for: duration) })

  static func run(for duration: Duration) {
    let deadline = Deadline(after: duration)
    let app = Pod()
    let growth = HeapGrowth.measure(until: deadline) {
      let screen = Provider(scope: ScreenScope(), name: "screen") { _ in Screen() }
      let window = Pod(parent: app)
      _ = window.resolve(screen)
      app.clearCachedInstances(forScope: ScreenScope())
    }
    growth.check(in: report, what: "provider made and gone")
  }
}
