import ProviderPod
import Vapor

/// Shuts the app's pod down when the application shuts down, after its HTTP server has
/// answered the requests in flight.
///
/// `Application.asyncShutdown()` calls its lifecycle handlers before it stops the server that
/// `serve` started (that happens later, with the application's storage), so this handler stops
/// the server itself first: the server's shutdown waits for the requests in flight, and
/// stopping it again later does nothing. Then the pod is shut down and its cleanups awaited
/// (the database closed) before the application goes on to shut down its event loops.
///
/// Only `asyncShutdown()` calls it, on an application made with `Application.make`: the
/// synchronous `shutdown()` cannot await a pod's cleanups, and this handler does nothing there.
public struct PodLifecycleHandler: LifecycleHandler {
  /// The app's pod.
  public let pod: Pod

  /// A handler that shuts `pod` down with the application.
  public init(pod: Pod) {
    self.pod = pod
  }

  /// Stops the server, then shuts the pod down and awaits its cleanups.
  public func shutdownAsync(_ application: Application) async {
    await application.server.shutdown()
    do {
      try await pod.shutdown()
    } catch {
      // Vapor's shutdown cannot fail: what did not close is reported here.
      application.logger.error("the app's pod did not shut down cleanly: \(error)")
    }
  }
}
