import ProviderPod
import ServiceLifecycle

/// The app's pod as a service of the server's `ServiceGroup`, so that its cleanups are part of
/// the server's shutdown rather than left to whenever the last reference goes away.
///
/// A `ServiceGroup` shuts its services down in the reverse of their order, each after the one
/// after it has returned: listed before the HTTP server, the pod is shut down once the server
/// has answered the requests in flight, and the group returns only after the pod's cleanups
/// (the database's async close) have finished.
public struct PodService: Service {
  /// The app's pod.
  public let pod: Pod

  /// A service that shuts `pod` down when its group shuts down.
  public init(pod: Pod) {
    self.pod = pod
  }

  /// Waits for the group's graceful shutdown, then shuts the pod down and awaits its cleanups.
  public func run() async throws {
    // Cancelled instead (the group failed, or its task was cancelled), the pod is still shut
    // down: what it opened must be closed either way, and its cleanups see the cancellation.
    try? await gracefulShutdown()
    try await pod.shutdown()
  }
}
