import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// A pod's shutdown awaits the running cleanups of its own instances and its children's. A
// child that has gone (shut down without being awaited, or let go of) is no longer among the
// pod's children, but its instances' hooks may still use what the pod is about to close.

@Suite("A shutdown awaits the cleanups of pods below it that have gone")
struct CleanupAwaitReviewTests {
  /// An app, a session's pod below it, and a request's pod below the session's, whose handler
  /// is built from the session's connection and still uses it in its hook.
  private struct ThreeLevels {
    let log = CloseLog()
    let handlerCleanupStarted = OneShot()
    let sessionShutdownBegan = ShutdownBegan()
    let connectionCleanupStarted = DispatchSemaphore(value: 0)
    let connection: Provider<Resource>
    let handler: Provider<Resource>
    let app = Pod()
    let session: Pod

    init() {
      let log = log
      let handlerCleanupStarted = handlerCleanupStarted
      let sessionShutdownBegan = sessionShutdownBegan
      let connectionCleanupStarted = connectionCleanupStarted
      let connection = Provider(
        scope: FlowScope(), name: "connection",
        onDiscard: { (connection: Resource) in
          connectionCleanupStarted.signal()
          await connection.close(log: log)
        }
      ) { _ in log.built("connection") }
      self.connection = connection
      handler = Provider(
        scope: StepScope(), name: "handler",
        // The session's pod begins its shutdown while this hook runs; its connection must
        // not close until the hook has ended.
        onDiscard: hookWatchingForAnEarlyClose(
          log: log, started: handlerCleanupStarted, shutdownBegan: sessionShutdownBegan.began,
          builtFromCleanupStarted: connectionCleanupStarted)
      ) { pod in log.built("handler", from: [pod.resolve(connection)]) }
      session = Pod(parent: app, scopes: [FlowScope()], observer: sessionShutdownBegan)
    }

    func expectClosedInOrder() {
      #expect(log.order == ["handler", "connection"])
      #expect(log.tooEarly.isEmpty)
    }
  }

  @Test("a pod's shutdown awaits the cleanups of a child shut down without being awaited")
  func awaitsChildShutDownBefore() async throws {
    let tree = ThreeLevels()
    let request = Pod(parent: tree.session, scopes: [StepScope()])
    _ = request.resolve(tree.handler)
    let requestShutdown = Task.detached { try await request.shutdown() }
    await withWatchdog("the request's cleanup to start") {
      await tree.handlerCleanupStarted.wait()
    }
    await withWatchdog("the session's shutdown") { try? await tree.session.shutdown() }
    try await requestShutdown.value
    tree.expectClosedInOrder()
  }

  @Test("a pod's shutdown awaits the cleanups of a child let go of just before")
  func awaitsChildReleasedBefore() async throws {
    let tree = ThreeLevels()
    do {
      let request = Pod(parent: tree.session, scopes: [StepScope()])
      _ = request.resolve(tree.handler)
    }
    await withWatchdog("the request's cleanup to start") {
      await tree.handlerCleanupStarted.wait()
    }
    await withWatchdog("the session's shutdown") { try? await tree.session.shutdown() }
    tree.expectClosedInOrder()
  }

  @Test("the app's shutdown awaits the hooks of a request pod let go of on another thread")
  func awaitsReleaseStillRunningItsHooks() async throws {
    let log = CloseLog()
    let handlerHookStarted = OneShot()
    let databaseCleanupStarted = DispatchSemaphore(value: 0)
    let appShutdownBegan = ShutdownSignal()
    let database = databaseSignallingItsCleanup(log: log, cleanupStarted: databaseCleanupStarted)
    let connection = Provider(
      scope: StepScope(), name: "connection",
      onDiscard: { (connection: Resource) in await connection.close(log: log) }
    ) { pod in log.built("connection", from: [pod.resolve(database)]) }
    // A synchronous hook, run on the thread that lets the request's pod go, before the
    // connection's: the app's shutdown begins while it runs. Give a wrongly started close of
    // the database the time to show.
    let handler = Provider(
      scope: StepScope(), name: "handler",
      onDiscard: { (handler: Resource) in
        handlerHookStarted.set()
        _ = appShutdownBegan.signal.wait(timeout: .now() + .seconds(hangWatchdogSeconds))
        if databaseCleanupStarted.wait(timeout: .now() + .milliseconds(300)) == .success {
          log.record(Resource("the database's cleanup started while the handler's hook ran"))
          databaseCleanupStarted.signal()
        }
        handler.closeNow(log: log)
      }
    ) { pod in log.built("handler", from: [pod.resolve(connection)]) }
    let app = Pod(observer: appShutdownBegan)
    _ = app.resolve(database)
    let appShutdown = Task.detached {
      await handlerHookStarted.wait()
      try await app.shutdown()
    }
    await onThreadOutsideTasks {
      let request = Pod(parent: app, scopes: [StepScope()])
      _ = request.resolve(handler)
    }
    await withWatchdog("the app's shutdown") { try? await appShutdown.value }
    #expect(log.order == ["handler", "connection", "database"])
    #expect(log.tooEarly.isEmpty)
  }

  @Test("a request's shutdown awaits the hooks of its instances an app's clear still runs")
  func awaitsClearStillRunningItsHooks() async throws {
    let log = CloseLog()
    let handlerHookStarted = OneShot()
    let requestShutdownReturned = DispatchSemaphore(value: 0)
    let requestShutdownBegan = ShutdownSignal()
    // The request's own data, which the clear leaves: its discard tells that the request's
    // shutdown has begun.
    let requestID = Provider(scope: StepScope(), name: "requestID") { _ in log.built("id") }
    let session = Provider(scope: FlowScope(), name: "session") { _ in log.built("session") }
    let connection = Provider(
      scope: StepScope(), name: "connection",
      onDiscard: { (connection: Resource) in await connection.close(log: log) }
    ) { pod in log.built("connection", from: [pod.resolve(session)]) }
    // A synchronous hook, run on the thread that clears, before the connection's: the
    // request shuts down while it runs. Give a shutdown that did not wait the time to return.
    let handler = Provider(
      scope: StepScope(), name: "handler",
      onDiscard: { (handler: Resource) in
        handlerHookStarted.set()
        _ = requestShutdownBegan.signal.wait(timeout: .now() + .seconds(hangWatchdogSeconds))
        if requestShutdownReturned.wait(timeout: .now() + .milliseconds(300)) == .success {
          log.record(Resource("the request's shutdown returned while the handler's hook ran"))
        }
        handler.closeNow(log: log)
      }
    ) { pod in log.built("handler", from: [pod.resolve(connection)]) }
    let app = Pod()
    let request = Pod(parent: app, scopes: [StepScope()], observer: requestShutdownBegan)
    _ = request.resolve(handler)
    _ = request.resolve(requestID)
    let requestShutdown = Task.detached {
      await handlerHookStarted.wait()
      try await request.shutdown()
      requestShutdownReturned.signal()
      return log.order
    }
    // The app's session goes, and with it the request's connection and handler.
    await onThreadOutsideTasks { app.clearCachedInstances(forScope: FlowScope()) }
    let closedBeforeShutdownReturned = try await requestShutdown.value
    #expect(closedBeforeShutdownReturned == ["handler", "connection"])
    #expect(log.tooEarly.isEmpty)
  }
}

/// Runs `body` on a thread of its own rather than one of the tasks' few: a synchronous hook
/// that blocks there leaves them free for the shutdown that races it.
private func onThreadOutsideTasks(_ body: @escaping @Sendable () -> Void) async {
  await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
    Thread.detachNewThread {
      body()
      done.resume()
    }
  }
}

/// Signalled when a pod reports its first discard by a shutdown, for a synchronous hook to
/// wait on: the shutdown's section has run.
private final class ShutdownSignal: PodObserver {
  let signal = DispatchSemaphore(value: 0)
  func pod(_ pod: Pod, didReport event: PodEvent) {
    if case .discarded(_, _, .podShutDown) = event { signal.signal() }
  }
}
