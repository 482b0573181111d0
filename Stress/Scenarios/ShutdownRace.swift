import ProviderPod

/// A pod in a global, shut down while tasks resolve through it and through child pods they
/// make per request: every instance's hook runs at most once, nothing stays alive, and a
/// resolve that begins after the shutdown returned gets an error rather than an instance.
/// The order of cleanups is the tests' to check: here a session whose build was still running
/// when the shutdown began is not cached: it is its caller's, the pod never runs its hook, and
/// the database may close while it is still open (counted in the summary).
enum ShutdownRace {
  static let report = Report(scenario: "shutdown-race")
  static let databases = Ledger("database", exact: false, report: report)
  static let sessions = Ledger("session", exact: false, report: report)

  struct RequestScope: ProviderScope {}

  final class Database: Tracked, @unchecked Sendable {
    /// Sessions built from it that are still open.
    let open = Locked(0)
  }

  final class Session: Tracked, @unchecked Sendable {
    let database: Database
    init(database: Database) {
      self.database = database
      database.open.withLock { $0 += 1 }
      super.init(sessions)
    }
  }

  /// The pod the tasks race on, replaced each round.
  static let current = Locked<Pod?>(nil)
  /// Whether this round's shutdown has returned.
  static let shutDown = Locked(false)
  /// Databases closed while a session built from them was still open (see above).
  static let closedUnderOpenSessions = Locked(0)

  static let databaseProvider = AsyncProvider<Database>(
    name: "database",
    onDiscard: { (database: Database) in
      await Task.yield()
      if database.open.value > 0 { closedUnderOpenSessions.withLock { $0 += 1 } }
      database.discarded()
    }
  ) { _ in Database(databases) }

  static let sessionProvider = AsyncProvider<Session>(
    scope: RequestScope(), name: "session",
    onDiscard: { (session: Session) in
      await Task.yield()
      session.database.open.withLock { $0 -= 1 }
      session.discarded()
    }
  ) { pod in Session(database: try await pod.resolve(databaseProvider)) }

  static let scenario = Scenario(
    name: "shutdown-race",
    summary: "shutdown of a global pod racing async resolves and request pods on several tasks",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration)
    var rounds = 0
    while !deadline.hasPassed {
      rounds += 1
      await round(seed: rounds)
    }
    report.note("\(rounds) shutdowns")
    report.note(
      "\(closedUnderOpenSessions.value) databases closed before a session whose build raced")
    await settle([databases, sessions])
  }

  /// One pod's life: tasks resolve until it is shut down under them.
  static func round(seed: Int) async {
    let pod = Pod()
    current.withLock { $0 = pod }
    shutDown.withLock { $0 = false }
    var random = FastRandom(seed: seed)
    let resolvesBeforeShutdown = 20 + random.next(200)
    let started = Locked(0)
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<4 {
        group.addTask {
          var operations = 0
          var random = FastRandom(seed: seed &* 31 &+ task)
          while true {
            guard let pod = current.value else { break }
            let afterShutdown = shutDown.value
            do {
              if random.next(2) == 0 {
                let request = Pod(parent: pod, scopes: [RequestScope()])
                _ = try await request.resolve(sessionProvider)
                if random.next(2) == 0 { try await request.shutdown() }
              } else {
                _ = try await pod.resolve(databaseProvider)
              }
              report.check(!afterShutdown, "a resolve that began after shutdown succeeded")
            } catch is ResolveAfterShutdownError {
              break
            } catch {
              report.fail("unexpected error: \(error)")
              break
            }
            operations += 1
            started.withLock { $0 += 1 }
          }
          report.add(operations: operations)
        }
      }
      group.addTask {
        while started.value < resolvesBeforeShutdown { await Task.yield() }
        do {
          try await pod.shutdown()
        } catch {
          report.fail("shutdown: \(error)")
        }
        shutDown.withLock { $0 = true }
        // The tasks stop at their next resolve, which now throws.
      }
    }
    current.withLock { $0 = nil }
  }
}
