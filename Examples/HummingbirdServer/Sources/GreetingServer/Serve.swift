import Hummingbird
import ProviderPod

/// Serves until SIGINT or SIGTERM, then shuts down gracefully and lets the app's pod go.
///
/// The app's pod lives inside this function, so once the server has stopped and its
/// connections have let go of the routes (on the server's own threads, just after it stops),
/// nothing holds it: it goes away, and the `onDiscard` hooks of what it built run then (the
/// database is closed). Returns the database, so a caller can see it was closed.
public func serveUntilShutdown(configuration: ApplicationConfiguration? = nil) async throws
  -> Database
{
  let app = Pod()
  let database = app.resolve(databaseProvider)  // opened at start-up, not by the first request
  // Hummingbird's `runService` runs the server in a swift-service-lifecycle `ServiceGroup`
  // that starts a graceful shutdown on either signal: requests in flight are answered first.
  try await buildApplication(app: app, configuration: configuration).runService()
  return database
}
