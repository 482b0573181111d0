import Dispatch
import Testing

@testable import ProviderPod

// A request's pod that builds its handler from the app's cached instances notes what it read
// on its own side only, so that requests on many cores do not all write the app's instances'
// bookkeeping. Whatever the app then changes must still reach every handler built from what
// changed, at once, and each handler's hook must run exactly once. Each test checks that the
// request really read the app's instances that way, so that it cannot pass by going around it.

private typealias RequestScope = AppRequestScope
private typealias AppScope = AppConfigScope

/// The app (`AppWithRequests`), and the handler each request builds from its config and
/// database.
private struct Fixture {
  let shared = AppWithRequests()
  let handler: Provider<Instance>
  var app: Pod { shared.pod }
  var log: DisposalLog { shared.log }
  var builds: Counter { shared.builds }
  var config: Provider<Instance> { shared.config }
  var database: Provider<Instance> { shared.database }

  /// `extra`, if given, is resolved by the handler's builder after the two app instances.
  init(extra: Provider<Instance>? = nil) {
    let reads = [shared.config, shared.database] + (extra.map { [$0] } ?? [])
    handler = shared.requestProvider("handler", reads: reads)
  }

  func request() -> Pod { shared.request() }
  func readsUnrecorded(_ request: Pod) -> Bool { shared.readsUnrecorded(request) }
}

@Suite("A request's reads of the app's instances")
struct RequestReadsOfAppTests {
  @Test("an override of an app singleton discards every live request's handler, once each")
  func appOverrideReachesEveryRequest() {
    let fixture = Fixture()
    var requests = (0..<20).map { _ in fixture.request() }
    let first = requests.map { $0.resolve(fixture.handler) }
    #expect(requests.allSatisfy(fixture.readsUnrecorded))
    let replacement = Instance("replacement", serial: 0)
    fixture.app.overrideProvider(fixture.database, withValue: replacement)
    // Before the override returned, every handler was discarded, each hook once.
    #expect(fixture.log.take().sorted() == ["database#2"] + first.map(\.description).sorted())
    let second = requests.map { $0.resolve(fixture.handler) }
    #expect(second.allSatisfy { $0.dependencies[1] === replacement })
    #expect(fixture.app.invariantViolations == [])
    requests.removeAll()
    // The app's instances keep nothing of requests that went: a later change finds nothing.
    fixture.app.removeOverrideProvider(fixture.database)
    #expect(fixture.log.take().count == second.count)
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("clearing one app instance discards the handlers built from it, and only those")
  func appClearOfOneInstance() {
    let fixture = Fixture()
    let unrelated = Provider(scope: RequestScope(), name: "unrelated") { _ in
      Instance("unrelated", serial: 0)
    }
    let requests = (0..<5).map { _ in fixture.request() }
    let handlers = requests.map { $0.resolve(fixture.handler) }
    let others = requests.map { $0.resolve(unrelated) }
    #expect(requests.allSatisfy(fixture.readsUnrecorded))
    fixture.app.clearCachedInstance(of: fixture.config)
    #expect(fixture.log.take().sorted() == ["config#1"] + handlers.map(\.description).sorted())
    for (request, other) in zip(requests, others) {
      #expect(request.resolve(unrelated) === other)
    }
    let config = fixture.app.resolve(fixture.config)
    #expect(requests.allSatisfy { $0.resolve(fixture.handler).dependencies[0] === config })
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("a handler that also reads the app through the app's lock is discarded once")
  func readsBothWays() {
    // An always-new helper is built under the app's lock, and records its read of the
    // database on the app's side, for the handler that resolved it, after the handler read
    // the config and the database on its own side.
    let logger = Provider(name: "logger") { _ in Instance("logger", serial: 0) }
    let helper = Provider(scope: AlwaysCreateNewScope(), name: "helper") { pod in
      Instance("helper", serial: 0, dependencies: [pod.resolve(logger)])
    }
    let fixture = Fixture(extra: helper)
    _ = fixture.app.resolve(logger)
    var request: Pod? = fixture.request()
    let handler = request!.resolve(fixture.handler)
    #expect(fixture.app.invariantViolations == [])
    fixture.app.clearCachedInstance(of: logger)
    #expect(fixture.log.take() == [handler.description])
    let again = request!.resolve(fixture.handler)
    #expect(again !== handler)
    #expect(fixture.app.invariantViolations == [])
    fixture.app.clearCachedInstances(forScope: AppScope())
    #expect(fixture.log.take().sorted() == ["config#1", again.description].sorted())
    let last = request!.resolve(fixture.handler)
    // A request pod going away disposes of what it cached.
    request = nil
    #expect(fixture.log.take() == [last.description])
    #expect(fixture.app.invariantViolations == [])
    fixture.app.clearCachedInstance(of: fixture.database)
    #expect(fixture.log.take() == ["database#2"])
  }

  @Test("an override in a request pod discards what it built from the app's instance")
  func requestOverrideAfterReading() {
    let fixture = Fixture()
    let request = fixture.request()
    let sibling = fixture.request()
    let handler = request.resolve(fixture.handler)
    let siblingHandler = sibling.resolve(fixture.handler)
    #expect(fixture.readsUnrecorded(request))
    let mine = Instance("mine", serial: 0)
    request.overrideProvider(fixture.config, withValue: mine)
    #expect(fixture.log.take() == [handler.description])
    #expect(request.resolve(fixture.handler).dependencies[0] === mine)
    #expect(sibling.resolve(fixture.handler) === siblingHandler)
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("an app change while a request's build runs keeps its result out of the cache")
  func appChangeDuringBuild() {
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let waiting = Counter()
    let pause = Provider(scope: AlwaysCreateNewScope(), name: "pause") { _ in
      // Only the first build waits, with both app instances read.
      if waiting.next() == 1 {
        entered.signal()
        waitWithWatchdog(gate)
      }
      return Instance("pause", serial: 0)
    }
    let fixture = Fixture(extra: pause)
    let request = fixture.request()
    let built = Shared<Instance?>(nil)
    let done = startThread { built.withLock { $0 = request.resolve(fixture.handler) } }
    guard waitOrFail(entered, "the request's build") else { return }
    #expect(fixture.readsUnrecorded(request))
    fixture.app.clearCachedInstance(of: fixture.database)
    #expect(fixture.log.take() == ["database#2"])
    gate.signal()
    guard waitOrFail(done, "the request's thread") else { return }
    let database = fixture.app.resolve(fixture.database)
    let next = request.resolve(fixture.handler)
    #expect(next !== built.withLock { $0 })
    #expect(next.dependencies[1] === database)
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("a request that only reads the app's instances takes no lock other requests wait on")
  func requestBesideHeldAppRecords() {
    let fixture = Fixture()
    let builds = fixture.builds
    let (config, database) = (fixture.config, fixture.database)
    let handler = Provider(scope: RequestScope(), name: "plain handler") { pod in
      Instance(
        "handler", serial: builds.next(),
        dependencies: [pod.resolve(config), pod.resolve(database)])
    }
    let handled = Shared<Instance?>(nil)
    // While another thread holds the lock of the app's shared records, a request joins the
    // app, builds its handler from the app's instances and goes away: it takes none of it.
    let finished = fixture.app.holdingCrossingLock {
      waitWithWatchdog(
        startThread {
          let request = fixture.request()
          handled.withLock { $0 = request.resolve(handler) }
        })
    }
    #expect(finished, "a request waited for the lock of the app's shared records")
    guard let built = handled.withLock({ $0 }) else { return }
    #expect(built.dependencies[0] === fixture.app.resolve(config))
    #expect(fixture.app.childCount == 0)
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("requests on eight threads, beside clears of the app, dispose of each handler once")
  func threadsBesideClears() {
    let fixture = Fixture()
    let stop = Shared(false)
    let clears = startThread {
      while !stop.withLock({ $0 }) {
        fixture.app.clearCachedInstances(forScope: AppScope())
        _ = fixture.app.resolve(fixture.config)
      }
    }
    let cached = Shared<[String]>([])
    onThreads(8) { _ in
      for _ in 0..<300 {
        let request = fixture.request()
        let handler = request.resolve(fixture.handler)
        // Found again, it was cached: its hook runs once, by a clear or as its pod goes.
        if request.resolve(fixture.handler) === handler {
          cached.withLock { $0.append(handler.description) }
        }
      }
    }
    stop.withLock { $0 = true }
    _ = waitOrFail(clears, "the clearing thread")
    let counts = Dictionary(fixture.log.entries.map { ($0, 1) }, uniquingKeysWith: +)
    #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts.filter { $0.value > 1 })")
    let handlers = cached.withLock { $0 }
    #expect(!handlers.isEmpty)
    #expect(handlers.filter { counts[$0] != 1 } == [])
    #expect(fixture.app.invariantViolations == [])
  }
}
