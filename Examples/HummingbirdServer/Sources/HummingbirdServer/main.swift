import GreetingServer

// Runs until SIGINT or SIGTERM. Once the server has shut down, the app's pod has been shut
// down and its cleanups awaited: the database is closed.
let database = try await serveUntilShutdown()
print("shut down; database closed: \(database.isClosed)")
