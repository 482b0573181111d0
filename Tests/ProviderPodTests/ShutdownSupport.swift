import Dispatch
import ProviderPod
import Testing

/// A resource with an asynchronous close, which checks that everything built from it was
/// closed first.
final class Resource: Sendable, CustomStringConvertible {
  let name: String
  let builtFrom: [Resource]
  private let state = Shared((closed: false, closedBeforeItsUsers: [String]()))

  init(_ name: String, builtFrom: [Resource] = []) {
    self.name = name
    self.builtFrom = builtFrom
  }

  var description: String { name }
  var isClosed: Bool { state.withLock { $0.closed } }

  /// Closes it, suspending first so that a cleanup started too early would show.
  func close(log: CloseLog) async {
    await Task.yield()
    state.withLock { $0.closed = true }
    log.record(self)
  }

  /// Closes it at once.
  func closeNow(log: CloseLog) {
    state.withLock { $0.closed = true }
    log.record(self)
  }
}

/// What was closed, in order, and every close of a resource something still open was built
/// from.
final class CloseLog: Sendable {
  private let state = Shared((order: [String](), tooEarly: [String]()))
  /// Who uses what: a resource's users must be closed before it.
  private let users = Shared([String: [Resource]]())

  /// A resource made from `builtFrom` and noted as built: what a test's builder returns.
  func built(_ name: String, from builtFrom: [Resource] = []) -> Resource {
    let resource = Resource(name, builtFrom: builtFrom)
    noteBuilt(resource)
    return resource
  }

  func noteBuilt(_ resource: Resource) {
    users.withLock {
      for dependency in resource.builtFrom { $0[dependency.name, default: []].append(resource) }
    }
  }

  func record(_ resource: Resource) {
    let open = users.withLock { $0[resource.name] ?? [] }.filter { !$0.isClosed }.map(\.name)
    state.withLock {
      $0.order.append(resource.name)
      for user in open { $0.tooEarly.append("\(resource.name) closed before \(user)") }
    }
  }

  var order: [String] { state.withLock { $0.order } }
  var tooEarly: [String] { state.withLock { $0.tooEarly } }
}

/// Set once by any task; awaited by others. Cancelling a waiter does not end its wait unless
/// it asks for that.
final class OneShot: Sendable {
  private let state = Shared((isSet: false, waiters: [CheckedContinuation<Void, Never>]()))

  func set() {
    let waiters = state.withLock { state in
      state.isSet = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  var isSet: Bool { state.withLock { $0.isSet } }

  func wait() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state in
        if state.isSet { return true }
        state.waiters.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }
}

/// Runs `body` under a watchdog: fails the test rather than hang if it has not ended within
/// `hangWatchdogSeconds` (it normally ends at once).
func withWatchdog(
  _ what: Comment, _ body: @escaping @Sendable () async -> Void
) async {
  let done = OneShot()
  let watched = Task {
    await body()
    done.set()
  }
  let watchdog = Task {
    try? await Task.sleep(for: .seconds(hangWatchdogSeconds))
    if !done.isSet { Issue.record("timed out waiting for \(what): hung") }
    done.set()
  }
  await done.wait()
  watchdog.cancel()
  _ = watched
}

/// Set when a pod reports its first discard by a shutdown: the shutdown has begun.
final class ShutdownBegan: PodObserver {
  let began = OneShot()
  func pod(_ pod: Pod, didReport event: PodEvent) {
    if case .discarded(_, _, .podShutDown) = event { began.set() }
  }
}

/// The app's database, whose hook signals `cleanupStarted` as it begins to close it: a test
/// that a shutdown waits for the cleanups built from it watches for that signal.
func databaseSignallingItsCleanup(
  log: CloseLog, cleanupStarted: DispatchSemaphore
) -> Provider<Resource> {
  Provider(
    name: "database",
    onDiscard: { (database: Resource) in
      cleanupStarted.signal()
      await database.close(log: log)
    }
  ) { _ in log.built("database") }
}

/// The hook of a resource whose cleanup must end before what it was built from closes, for
/// tests that a shutdown waits for it: it says it started, waits until the shutdown has begun,
/// gives a close of what it was built from, wrongly started meanwhile, the time to show (that
/// close's hook signals `builtFromCleanupStarted`), and closes.
func hookWatchingForAnEarlyClose(
  log: CloseLog, started: OneShot, shutdownBegan: OneShot,
  builtFromCleanupStarted: DispatchSemaphore
) -> @Sendable (Resource) async -> Void {
  { resource in
    started.set()
    await shutdownBegan.wait()
    if builtFromCleanupStarted.wait(timeout: .now() + .milliseconds(300)) == .success {
      builtFromCleanupStarted.signal()
    }
    await resource.close(log: log)
  }
}
