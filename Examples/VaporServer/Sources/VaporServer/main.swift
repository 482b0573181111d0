import ProviderPod
import Vapor
import VaporGreetingServer

// Serves http://127.0.0.1:8080/hello (send an X-User-ID header) until SIGINT or SIGTERM. Then
// the application shuts down: the server answers the requests in flight, the app's pod is shut
// down and its cleanups awaited (the database closed), and the event loops stop.
var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
let pod = Pod(observer: LoggingObserver(logger: app.logger))
let database = pod.resolve(databaseProvider)  // opened at start-up, not by the first request
do {
  app.configure(pod: pod)
  try await app.execute()
  try await app.asyncShutdown()
} catch {
  try? await app.asyncShutdown()
  throw error
}
print("shut down; database closed: \(database.isClosed)")
