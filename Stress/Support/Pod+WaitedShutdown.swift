import Dispatch
import ProviderPod

extension Pod {
  /// Shuts the pod down from a task and waits for it on this thread, as a server's middleware
  /// ends each request, seen from the request's thread. A shutdown that throws fails `report`.
  func shutDownAndWait(report: Report) {
    let done = DispatchSemaphore(value: 0)
    Task {
      do {
        try await self.shutdown()
      } catch {
        report.check(false, "a request's shutdown threw \(error)")
      }
      done.signal()
    }
    done.wait()
  }
}
