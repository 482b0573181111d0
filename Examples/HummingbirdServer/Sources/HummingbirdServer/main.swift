import GreetingServer

// Runs until SIGINT or SIGTERM. Once the server has shut down, the app's pod has gone away and
// disposed of what it opened.
let database = try await serveUntilShutdown()
print("shut down; database closed: \(database.isClosed)")
