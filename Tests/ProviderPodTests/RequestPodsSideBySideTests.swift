import Dispatch
import Testing

@testable import ProviderPod

// A server's request pods do their own work beside each other's, on every thread: each builds
// its handler in the scope it owns from the app's instances and goes away, without waiting for
// the others. Whatever runs beside what, each request must see its own data and the app's
// current instances, and the app's changes must reach every request that built from them.

/// A request's own data, given to its pod as an override.
private let requestNumber = Provider<Int>(scope: StepScope(), name: "requestNumber") { _ in -1 }

@Suite("Request pods working side by side")
struct RequestPodsSideBySideTests {
  @Test("each request's handler gets the data its own pod was given, on every thread")
  func ownDataOnEveryThread() {
    let app = Pod()
    let database = instanceProvider("database")
    let handler = Provider(scope: StepScope(), name: "handler") { pod in
      (number: pod.resolve(requestNumber), database: pod.resolve(database))
    }
    let appDatabase = app.resolve(database)
    let mismatches = Counter()
    onThreads(8) { thread in
      for request in 0..<300 {
        let number = thread * 1_000 + request
        let pod = Pod(
          parent: app, scopes: [StepScope()],
          overrides: [requestNumber.override(withValue: number)])
        let built = pod.resolve(handler)
        // Resolved again through the pod: the handler it cached, not a second one.
        let again = pod.resolve(handler)
        if built.number != number || built.database !== appDatabase
          || again.database !== built.database || again.number != number
        {
          mismatches.next()
        }
      }
    }
    #expect(mismatches.value == 0)
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
  }

  @Test("a clear of the app's scope reaches the handlers request pods on other threads built")
  func appClearReachesHeldRequests() {
    let app = Pod()
    let log = DisposalLog()
    let counter = Counter()
    let session = Provider(scope: UnrelatedScope(), name: "session", onDiscard: log.record) { _ in
      Instance("session", serial: counter.next())
    }
    let handler = Provider(scope: StepScope(), name: "handler", onDiscard: log.record) { pod in
      Instance("handler", serial: 0, dependencies: [pod.resolve(session)])
    }
    _ = app.resolve(session)
    let pods = Shared<[Pod]>([])
    let built = Barrier(9)
    let cleared = DispatchSemaphore(value: 0)
    let stale = Counter()
    let threads = (0..<8).map { _ in
      startThread {
        let pod = Pod(parent: app, scopes: [StepScope()])
        pods.withLock { $0.append(pod) }
        _ = pod.resolve(handler)
        built.arrive()
        guard waitWithWatchdog(cleared) else { return }
        // Built again from the app's new session, never from the one the clear discarded.
        if pod.resolve(handler).dependencies[0].serial != 2 { stale.next() }
      }
    }
    built.arrive()
    app.clearCachedInstances(forScope: UnrelatedScope())
    // Every handler, then the session it was built from, each exactly once.
    let discarded = log.take()
    #expect(discarded.filter { $0 == "handler#0" }.count == 8)
    #expect(discarded.last == "session#1")
    #expect(discarded.count == 9)
    _ = app.resolve(session)
    for _ in threads { cleared.signal() }
    for done in threads { _ = waitOrFail(done, "a request's thread") }
    #expect(stale.value == 0)
    pods.withLock { $0.removeAll() }
    #expect(log.take().filter { $0 == "handler#0" }.count == 8)
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
  }

  @Test("request pods going away on many threads leave nothing recorded in the app's instances")
  func nothingLeftInTheApp() {
    let app = Pod()
    let repository = instanceProvider("repository")
    let mailer = instanceProvider("mailer")
    let handler = instanceProvider(
      "handler", scope: StepScope(), dependencies: [repository, mailer])
    _ = app.resolve(repository)
    _ = app.resolve(mailer)
    onThreads(8) { _ in
      for _ in 0..<500 {
        let pod = Pod(parent: app, scopes: [StepScope()])
        _ = pod.resolve(handler)
      }
    }
    #expect(app.childCount == 0)
    // At rest, every "built from" record in the app's slots must belong to a live instance:
    // none is left by the requests that went away.
    #expect(app.invariantViolations == [])
    app.clearCachedInstance(of: repository)
    #expect(app.invariantViolations == [])
  }

  @Test("a request pod's build, its reads and its release wait for no sibling's work")
  func requestTakesNoExclusiveSection() {
    let app = Pod()
    let database = instanceProvider("database")
    let handler = Provider(scope: StepScope(), name: "handler") { pod in
      (number: pod.resolve(requestNumber), database: pod.resolve(database))
    }
    let appDatabase = app.resolve(database)
    // The first request after the app cached the database reads it through the app's lock,
    // once: every request after it reads it without.
    _ = Pod(parent: app, scopes: [StepScope()]).resolve(handler)
    let before = app.exclusiveSectionsEntered
    do {
      let pod = Pod(
        parent: app, scopes: [StepScope()], overrides: [requestNumber.override(withValue: 7)])
      let built = pod.resolve(handler)
      #expect(built.number == 7 && built.database === appDatabase)
    }
    #expect(app.exclusiveSectionsEntered == before)
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
  }

  @Test("an observed request pod reports what it builds and reads, and waits for no sibling")
  func observedRequestReports() {
    let appEvents = EventRecorder()
    let app = Pod(observer: appEvents)
    let database = instanceProvider("database")
    let handler = Provider(scope: StepScope(), name: "handler") { pod in
      (number: pod.resolve(requestNumber), database: pod.resolve(database))
    }
    let appDatabase = app.resolve(database)
    // The first request reads the app's database through the app's lock, once (see above).
    _ = Pod(parent: app, scopes: [StepScope()]).resolve(handler)
    _ = appEvents.take()
    let requestEvents = EventRecorder()
    let pod = Pod(
      parent: app, scopes: [StepScope()], overrides: [requestNumber.override(withValue: 7)],
      observer: requestEvents)
    _ = requestEvents.take()
    let before = app.exclusiveSectionsEntered
    let built = pod.resolve(handler)
    let again = pod.resolve(handler)
    #expect(app.exclusiveSectionsEntered == before)
    #expect(built.number == 7 && built.database === appDatabase)
    #expect(again.number == 7 && again.database === appDatabase)
    #expect(
      requestEvents.take() == [
        .built(provider: "requestNumber", scope: "StepScope"),
        .built(provider: "handler", scope: "StepScope"),
        .reused(provider: "handler", scope: "StepScope"),
      ])
    // The app's instance is reported by the app's pod, which owns it.
    #expect(appEvents.take() == [.reused(provider: "database", scope: "SingletonScope")])
    #expect(app.invariantViolations == [])
  }

  @Test("an observed request pod reports a provider made again, as any observed pod does")
  func observedRequestReportsRecreation() {
    let app = Pod()
    let recorder = EventRecorder()
    let pod = Pod(parent: app, scopes: [StepScope()], observer: recorder)
    let first = pod.resolve(RequestComputed.handler)
    let before = app.exclusiveSectionsEntered
    let second = pod.resolve(RequestComputed.handler)
    #expect(app.exclusiveSectionsEntered == before)
    #expect(first !== second)
    #expect(
      recorder.take() == [
        .built(provider: "handler", scope: "StepScope"),
        .built(provider: "handler", scope: "StepScope"),
        .providerRecreated(provider: "handler", declaration: RequestComputed.site),
      ])
  }
}

/// A handler declared as a computed property: a new provider on every use, the mistake an
/// observer reports.
private enum RequestComputed {
  static var handler: Provider<Instance> {
    Provider(scope: StepScope(), name: "handler") { _ in Instance("handler", serial: 0) }
  }
  static let site = "RequestPodsSideBySideTests.swift:\(line):13"
  static let line = #line - 3
}
