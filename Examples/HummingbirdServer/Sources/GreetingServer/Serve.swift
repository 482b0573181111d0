import Hummingbird
import Logging
import ProviderPod

/// Serves until SIGINT or SIGTERM, then shuts down gracefully: the requests in flight are
/// answered, then the app's pod is shut down and its cleanups awaited (the database closed).
/// Returns the database, so a caller can see it was closed.
public func serveUntilShutdown(configuration: ApplicationConfiguration? = nil) async throws
  -> Database
{
  let logger = Logger(label: "GreetingServer")
  let app = Pod(observer: LoggingObserver(logger: logger))
  let database = app.resolve(databaseProvider)  // opened at start-up, not by the first request
  // Hummingbird's `runService` runs the server in a swift-service-lifecycle `ServiceGroup`
  // that starts a graceful shutdown on either signal. `buildApplication` lists the app's pod
  // as a service before the HTTP server, so the server stops first and the pod after it.
  try await buildApplication(app: app, configuration: configuration, logger: logger).runService()
  return database
}
