import Dispatch
import Testing

@testable import ProviderPod

// Review of "a request's reads of the app, recorded on its side": each test mixes a request's
// unrecorded reads of the app's instances with something else a user does, and checks that
// every handler built from a changed app instance is discarded (its hook run once) before the
// change returns, that nothing stale is handed out after, and that the bookkeeping holds.

private typealias ReqScope = AppRequestScope
private typealias AppLevelScope = AppConfigScope
/// The app, with a singleton built from another: `store` from `database`.
private typealias App = AppWithRequests

@Suite("Review: a request's unrecorded reads of the app")
struct UnrecordedReadsReviewTests {
  @Test("nested request builds: clearing the app singleton discards service and handler once")
  func nestedRequestBuilds() {
    let app = App(withStore: true)
    let service = app.requestProvider("service", reads: [app.config])
    let handler = app.requestProvider("handler", reads: [service, app.database])
    let request = app.request()
    let built = request.resolve(handler)
    #expect(app.readsUnrecorded(request))
    app.pod.clearCachedInstances(forScope: AppLevelScope())
    #expect(
      app.log.take().sorted()
        == ["config#1", built.description, built.dependencies[0].description].sorted())
    let again = request.resolve(handler)
    #expect(again !== built)
    #expect(again.dependencies[0].dependencies[0] === app.pod.resolve(app.config))
    // The database was not cleared: clearing it now discards the new handler, not the service.
    app.pod.clearCachedInstance(of: app.database)
    #expect(app.log.take().sorted() == ["database#2", "store#3", again.description].sorted())
    #expect(request.resolve(handler).dependencies[0] === again.dependencies[0])
    #expect(app.violations(app.pod, request) == [])
  }

  @Test("clearing an app singleton another app singleton was built from reaches the request")
  func appChainReachesRequest() {
    let app = App(withStore: true)
    let handler = app.requestProvider("handler", reads: [app.store!])
    let requests = (0..<3).map { _ in app.request() }
    let built = requests.map { $0.resolve(handler) }
    #expect(requests.allSatisfy(app.readsUnrecorded))
    app.pod.clearCachedInstance(of: app.database)
    #expect(
      app.log.take().sorted()
        == (["database#2", "store#3"] + built.map(\.description)).sorted())
    let store = app.pod.resolve(app.store!)
    #expect(requests.allSatisfy { $0.resolve(handler).dependencies[0] === store })
    #expect(app.violations(app.pod) == [])
  }

  @Test("a request pod's grandchild's instance built from a marked handler is discarded")
  func grandchildOfRequest() {
    let app = App(withStore: true)
    struct Leaf: ProviderScope {}
    let handler = app.requestProvider("handler", reads: [app.config])
    let log = app.log
    let leaf = Provider(scope: Leaf(), name: "leaf", onDiscard: log.record) { pod in
      Instance("leaf", serial: 0, dependencies: [pod.resolve(handler), pod.resolve(app.database)])
    }
    let request = app.request()
    let child = Pod(parent: request, scopes: [Leaf()])
    let built = child.resolve(leaf)
    let handlerInstance = request.resolve(handler)
    #expect(built.dependencies[0] === handlerInstance)
    app.pod.clearCachedInstances(forScope: AppLevelScope())
    #expect(
      app.log.take().sorted()
        == ["config#1", handlerInstance.description, built.description].sorted())
    #expect(child.resolve(leaf) !== built)
    #expect(app.violations(app.pod, request, child) == [])
    // An override in the grandchild reaches what its request pod read unrecorded.
    let replacement = Instance("replacement", serial: 0)
    let current = child.resolve(leaf)
    child.overrideProvider(app.config, withValue: replacement)
    #expect(app.log.take().contains(current.description))
    #expect(child.resolve(leaf).dependencies[0].dependencies[0] === replacement)
    #expect(request.resolve(handler).dependencies[0] === app.pod.resolve(app.config))
    #expect(app.violations(app.pod, request, child) == [])
  }

  @Test("a marked build then reading through the exclusive path: family, throwing, weak, lazy")
  func mixedPaths() throws {
    let app = App(withStore: true)
    let builds = app.builds
    let family = ProviderFamily(name: "member") { (_, id: Int) in
      Instance("member\(id)", serial: builds.next())
    }
    let throwing = ThrowingProvider(name: "throwing") { _ in
      Instance("throwing", serial: builds.next())
    }
    let weak = Provider(scope: WeakScope(), name: "weak") { _ in
      Instance("weak", serial: builds.next())
    }
    let lazy = Provider(name: "lazy") { _ in Instance("lazy", serial: builds.next()) }
    let log = app.log
    let handler = Provider(scope: ReqScope(), name: "handler", onDiscard: log.record) { pod in
      let config = pod.resolve(app.config)
      let member = pod.resolve(family(7))
      let database = pod.resolve(app.database)
      let thrown = try? pod.resolve(throwing)
      let weakOne = pod.resolve(weak)
      let lazyOne = pod.resolve(lazy)
      let store = pod.resolve(app.store!)
      return Instance(
        "handler", serial: builds.next(),
        dependencies: [config, member, database, thrown!, weakOne, lazyOne, store])
    }
    _ = app.pod.resolve(family(7))
    _ = try app.pod.resolve(throwing)
    let keepWeak = app.pod.resolve(weak)
    let request = app.request()
    var current = request.resolve(handler)
    #expect(current.dependencies[4] === keepWeak)
    #expect(app.violations(app.pod, request) == [])
    func expectDiscarded(_ what: String, _ change: () -> Void) {
      change()
      let log = app.log.take()
      #expect(log.filter { $0 == current.description }.count == 1, "\(what): \(log)")
      let next = request.resolve(handler)
      #expect(next !== current, "\(what)")
      current = next
      #expect(app.violations(app.pod, request) == [], "\(what)")
    }
    expectDiscarded("config") { app.pod.clearCachedInstances(forScope: AppLevelScope()) }
    expectDiscarded("member") { app.pod.clearCachedInstance(of: family(7)) }
    expectDiscarded("database") { app.pod.clearCachedInstance(of: app.database) }
    expectDiscarded("throwing") { app.pod.clearCachedInstance(of: throwing) }
    expectDiscarded("lazy") { app.pod.clearCachedInstance(of: lazy) }
    expectDiscarded("store") { app.pod.clearCachedInstance(of: app.store!) }
    expectDiscarded("weak") { app.pod.clearCachedInstance(of: weak) }
    expectDiscarded("override") {
      app.pod.overrideProvider(app.config, withValue: Instance("o", serial: 0))
    }
    expectDiscarded("override removed") { app.pod.removeOverrideProvider(app.config) }
    _ = keepWeak
  }

  @Test("a build context kept past the build and used later records nothing stale")
  func keptContext() {
    let app = App(withStore: true)
    let kept = Shared<BuildContext?>(nil)
    let log = app.log
    let handler = Provider(scope: ReqScope(), name: "handler", onDiscard: log.record) { pod in
      kept.withLock { $0 = pod }
      return Instance("handler", serial: 0, dependencies: [pod.resolve(app.config)])
    }
    let request = app.request()
    let built = request.resolve(handler)
    #expect(app.readsUnrecorded(request))
    let context = kept.withLock { $0 }!
    // Read after the build through the kept context: the handler is not built from these.
    _ = context.resolve(app.database)
    _ = context.resolve(app.store!)
    #expect(app.violations(app.pod, request) == [])
    app.pod.clearCachedInstance(of: app.database)
    #expect(app.log.take().sorted() == ["database#2", "store#3"])
    #expect(request.resolve(handler) === built)
    app.pod.clearCachedInstances(forScope: AppLevelScope())
    #expect(app.log.take().sorted() == ["config#1", built.description].sorted())
    #expect(app.violations(app.pod, request) == [])
    kept.withLock { $0 = nil }
  }

  @Test("a request pod with its own value and an observer: app changes still reach it")
  func observedRequestWithOwnOverride() {
    let app = App(withStore: true)
    let requestData = Provider<Instance>(scope: ReqScope(), name: "data") { _ in
      Instance("default", serial: 0)
    }
    let handler = app.requestProvider("handler", reads: [requestData, app.config])
    let observer = EventRecorder()
    let request = Pod(parent: app.pod, scopes: [ReqScope()], observer: observer)
    let data = Instance("data", serial: 0)
    request.overrideProvider(requestData, withValue: data)
    let built = request.resolve(handler)
    #expect(built.dependencies[0] === data)
    app.pod.overrideProvider(app.config, withValue: Instance("o", serial: 0))
    #expect(app.log.take().sorted() == ["config#1", built.description].sorted())
    let again = request.resolve(handler)
    #expect(again.dependencies[1].label == "o")
    request.overrideProvider(app.config, withValue: Instance("mine", serial: 0))
    #expect(app.log.take() == [again.description])
    #expect(request.resolve(handler).dependencies[1].label == "mine")
    #expect(app.violations(app.pod, request) == [])
  }

  @Test("repeated reads of one app instance do not grow a request's instance without bound")
  func repeatedReadsDoNotGrowTheList() {
    let app = App(withStore: true)
    // Seventeen app instances read first: the build's list is past the length it searches.
    let many = app.cachedSingletons(17)
    let handler = Provider(scope: ReqScope(), name: "handler") { pod in
      for provider in many { _ = pod.resolve(provider) }
      for _ in 0..<1_000 { _ = pod.resolve(app.config) }
      return Instance("handler", serial: 0)
    }
    let request = app.request()
    _ = request.resolve(handler)
    let listed = request.engine.state.withLock { _ in
      request.engine.pod.slots[handler.info.key]?.entry?.dependencies.count ?? -1
    }
    // Through the app's lock, a repeat read by the same build is listed once.
    let exclusive = app.pod.resolve(
      Provider(name: "appHandler") { pod in
        for provider in many { _ = pod.resolve(provider) }
        for _ in 0..<1_000 { _ = pod.resolve(app.config) }
        return Instance("appHandler", serial: 0)
      })
    _ = exclusive
    #expect(listed <= 20, "listed \(listed) reads for 18 distinct instances")
    #expect(app.violations(app.pod, request) == [])
  }
}

/// A request-scoped handler whose builder reads the app's config on its own side, then waits
/// (the first time only) at a gate, then resolves `after` (if given).
private final class PausedHandler: Sendable {
  let entered = DispatchSemaphore(value: 0)
  let gate = DispatchSemaphore(value: 0)
  let handler: Provider<Instance>
  private let waits = Counter()

  init(_ app: App, after: Provider<Instance>? = nil) {
    let log = app.log
    let builds = app.builds
    let entered = entered
    let gate = gate
    let waits = waits
    handler = Provider(scope: ReqScope(), name: "handler", onDiscard: log.record) { pod in
      var dependencies = [pod.resolve(app.config)]
      if waits.next() == 1 {
        entered.signal()
        waitWithWatchdog(gate)
      }
      if let after { dependencies.append(pod.resolve(after)) }
      return Instance("handler", serial: builds.next(), dependencies: dependencies)
    }
  }

  /// Resolves the handler through `request` on a thread of its own, and waits until its build
  /// waits at the gate: the thread's result, and its end. Nil, with an issue recorded, if the
  /// build never got there.
  func startPaused(in request: Pod) -> (built: Shared<Instance?>, done: DispatchSemaphore)? {
    let built = Shared<Instance?>(nil)
    let handler = handler
    let done = startThread { built.withLock { $0 = request.resolve(handler) } }
    guard waitOrFail(entered, "the request's build") else { return nil }
    return (built, done)
  }
}

@Suite("Review: a request's unrecorded reads of the app, beside other threads")
struct UnrecordedReadsReviewConcurrencyTests {
  @Test("a marked build that then reads an uncached app singleton is found by a later clear")
  func markedThenExclusiveAfterUnrelatedChange() {
    let app = App(withStore: true)
    let builds = app.builds
    let lazy = Provider(name: "lazy") { _ in Instance("lazy", serial: builds.next()) }
    let paused = PausedHandler(app, after: lazy)
    let request = app.request()
    guard let run = paused.startPaused(in: request) else { return }
    #expect(app.readsUnrecorded(request))
    // An unrelated change while the build runs: the build goes on and is cached.
    app.pod.clearCachedInstance(of: app.store!)
    #expect(app.log.take() == ["store#3"])
    paused.gate.signal()
    guard waitOrFail(run.done, "the request's thread") else { return }
    let handler = run.built.withLock { $0 }!
    #expect(request.resolve(paused.handler) === handler)
    #expect(app.violations(app.pod, request) == [])
    app.pod.clearCachedInstances(forScope: AppLevelScope())
    #expect(app.log.take().sorted() == ["config#1", handler.description].sorted())
    let again = request.resolve(paused.handler)
    #expect(again !== handler)
    app.pod.clearCachedInstance(of: lazy)
    #expect(app.log.take() == [again.description])
    #expect(app.violations(app.pod, request) == [])
  }

  @Test("an app clear while a marked build waits, then an exclusive read: nothing stale cached")
  func clearWhileMarkedThenExclusive() {
    let app = App(withStore: true)
    let builds = app.builds
    let lazy = Provider(name: "lazy") { _ in Instance("lazy", serial: builds.next()) }
    let paused = PausedHandler(app, after: lazy)
    let request = app.request()
    guard let run = paused.startPaused(in: request) else { return }
    app.pod.clearCachedInstances(forScope: AppLevelScope())
    #expect(app.log.take() == ["config#1"])
    #expect(app.violations(app.pod, request) == [])
    paused.gate.signal()
    guard waitOrFail(run.done, "the request's thread") else { return }
    let stale = run.built.withLock { $0 }!
    let config = app.pod.resolve(app.config)
    let fresh = request.resolve(paused.handler)
    #expect(fresh !== stale)
    #expect(fresh.dependencies[0] === config)
    #expect(app.violations(app.pod, request) == [])
    app.pod.clearCachedInstance(of: lazy)
    #expect(app.log.take() == [fresh.description])
  }

  @Test("an override in the request pod while its marked build waits keeps the result out")
  func requestOverrideWhileMarkedBuildWaits() {
    let app = App(withStore: true)
    let paused = PausedHandler(app)
    let request = app.request()
    guard let run = paused.startPaused(in: request) else { return }
    #expect(app.readsUnrecorded(request))
    let mine = Instance("mine", serial: 0)
    request.overrideProvider(app.config, withValue: mine)
    paused.gate.signal()
    guard waitOrFail(run.done, "the request's thread") else { return }
    #expect(request.resolve(paused.handler).dependencies[0] === mine)
    #expect(app.log.take() == [])
    #expect(app.violations(app.pod, request) == [])
    // Its own value gone, the request reads the app's again.
    let current = request.resolve(paused.handler)
    request.removeOverrideProvider(app.config)
    #expect(app.log.take() == [current.description])
    #expect(request.resolve(paused.handler).dependencies[0] === app.pod.resolve(app.config))
    #expect(app.violations(app.pod, request) == [])
  }

  @Test("a request pod shut down while its marked build waits: no hook twice, app still clean")
  func shutdownWhileMarkedBuildWaits() async throws {
    let app = App(withStore: true)
    let paused = PausedHandler(app)
    let request = app.request()
    let service = app.requestProvider("service", reads: [app.database])
    let serviceInstance = request.resolve(service)
    guard let run = paused.startPaused(in: request) else { return }
    let shutdown = Task.detached { try await request.shutdown() }
    // Released whatever the shutdown does first: it may wait for the build, or not.
    paused.gate.signal()
    try await shutdown.value
    guard waitOrFail(run.done, "the request's thread") else { return }
    let log = app.log.take()
    #expect(log.filter { $0 == serviceInstance.description }.count == 1, "\(log)")
    #expect(app.violations(app.pod) == [])
    app.pod.clearCachedInstances(forScope: AppLevelScope())
    app.pod.clearCachedInstance(of: app.database)
    let handler = run.built.withLock { $0 }!
    let after = app.log.take()
    #expect(!after.contains(serviceInstance.description), "\(after)")
    #expect(after.filter { $0 == handler.description }.count <= 1, "\(after)")
    #expect(app.violations(app.pod) == [])
  }

  @Test(
    "requests on eight threads beside app overrides and clears: nothing stale, hooks once",
    arguments: [false, true])
  func stressNothingStale(freshPods: Bool) {
    let app = App(withStore: true)
    // Every config is an override with its generation as serial, published once it returns.
    let generation = Shared(1)
    app.pod.overrideProvider(app.config, withValue: Instance("cfg", serial: 1))
    let service = app.requestProvider("service", reads: [app.config, app.store!])
    let handler = app.requestProvider("handler", reads: [service, app.database, app.config])
    let stop = Shared(false)
    let changes = startThread {
      var round = 0
      while !stop.withLock({ $0 }) {
        round += 1
        switch round % 4 {
        case 0: app.pod.clearCachedInstance(of: app.database)
        case 1: app.pod.clearCachedInstance(of: app.store!)
        case 2: _ = app.pod.resolve(app.store!)
        default:
          let next = generation.withLock { $0 } + 1
          app.pod.overrideProvider(app.config, withValue: Instance("cfg", serial: next))
          generation.withLock { $0 = next }
        }
      }
    }
    let stale = Shared<[String]>([])
    let cached = Shared<Set<String>>([])
    let mine = Instance("mine", serial: -1)
    onThreads(8) { thread in
      var request = app.request()
      for iteration in 0..<400 {
        if freshPods || iteration % 50 == 0 { request = app.request() }
        let seen = generation.withLock { $0 }
        let built = request.resolve(handler)
        let config = built.dependencies[2]
        let nested = built.dependencies[0].dependencies[0]
        if (config !== mine && config.serial < seen) || (nested !== mine && nested.serial < seen) {
          stale.withLock { $0.append("\(built) read \(config)/\(nested) after \(seen)") }
        }
        if request.resolve(handler) === built {
          cached.withLock { _ = $0.insert(built.description) }
        }
        // Now and then a request overrides an app singleton of its own, and takes it back.
        if thread % 2 == 0, iteration % 37 == 0 {
          request.overrideProvider(app.config, withValue: mine)
          if request.resolve(handler).dependencies[2] !== mine {
            stale.withLock { $0.append("override in the request not seen") }
          }
          request.removeOverrideProvider(app.config)
        }
      }
    }
    stop.withLock { $0 = true }
    _ = waitOrFail(changes, "the changing thread")
    #expect(stale.withLock { $0 } == [])
    #expect(app.violations(app.pod) == [])
    let counts = Dictionary(app.log.entries.map { ($0, 1) }, uniquingKeysWith: +)
    #expect(counts.filter { $0.value > 1 } == [:])
    let handlers = cached.withLock { $0 }
    #expect(!handlers.isEmpty)
    #expect(handlers.filter { counts[$0] != 1 } == [])
  }
}

@Suite("Review: a request's unrecorded reads of the app, as pods go")
struct UnrecordedReadsReviewLifetimeTests {
  @Test("an override in the request of what an app singleton was built from reaches its handler")
  func requestOverridesWhatTheAppSingletonReads() {
    let app = App(withStore: true)
    let handler = app.requestProvider("handler", reads: [app.store!, app.config])
    let request = app.request()
    let built = request.resolve(handler)
    #expect(app.readsUnrecorded(request))
    let mine = Instance("mine", serial: 0)
    request.overrideProvider(app.database, withValue: mine)
    #expect(app.log.take() == [built.description])
    let again = request.resolve(handler)
    #expect(again.dependencies[0].dependencies[0] === mine)
    #expect(app.pod.resolve(app.store!) === built.dependencies[0])
    #expect(app.violations(app.pod, request) == [])
  }

  @Test("the dependency graph shows a request's unrecorded reads of the app")
  func graphShowsUnrecordedReads() {
    let app = App(withStore: true)
    let handler = app.requestProvider("handler", reads: [app.config, app.store!])
    let request = app.request()
    _ = request.resolve(handler)
    #expect(app.readsUnrecorded(request))
    let graph = request.dependencyGraph()
    let edges = Set(graph.edges.map { "\($0.dependent.provider)->\($0.dependency.provider)" })
    #expect(edges.isSuperset(of: ["handler->config", "handler->store"]), "\(edges)")
  }

  @Test(
    "a request pod going the exclusive way (published read, or a child) leaves the app clean",
    arguments: [false, true])
  func exclusiveRelease(withChild: Bool) {
    let app = App(withStore: true)
    let handler = app.requestProvider("handler", reads: [app.config, app.database])
    var request: Pod? = app.request()
    var child: Pod? = withChild ? Pod(parent: request!) : nil
    let built = request!.resolve(handler)
    // A second resolve through the pod publishes the instance: its release is then exclusive.
    #expect(request!.resolve(handler) === built)
    _ = child?.resolve(handler)
    #expect(app.readsUnrecorded(request!))
    child = nil
    request = nil
    #expect(app.log.take() == [built.description])
    #expect(app.violations(app.pod) == [])
    app.pod.clearCachedInstances(forScope: AppLevelScope())
    app.pod.clearCachedInstance(of: app.database)
    #expect(app.log.take().sorted() == ["config#1", "database#2", "store#3"])
    #expect(app.violations(app.pod) == [])
  }

  @Test("the app's shutdown with live marked requests runs each hook once, handlers first")
  func appShutdownWithMarkedRequests() async throws {
    let app = App(withStore: true)
    let service = app.requestProvider("service", reads: [app.database])
    let handler = app.requestProvider("handler", reads: [service, app.config, app.store!])
    let requests = (0..<4).map { _ in app.request() }
    let built = requests.map { $0.resolve(handler) }
    #expect(requests.allSatisfy(app.readsUnrecorded))
    try await app.pod.shutdown()
    let log = app.log.take()
    let counts = Dictionary(log.map { ($0, 1) }, uniquingKeysWith: +)
    #expect(counts.values.allSatisfy { $0 == 1 }, "\(log)")
    for handler in built {
      let mine = log.firstIndex(of: handler.description)
      let service = log.firstIndex(of: handler.dependencies[0].description)
      #expect(mine != nil && service != nil)
      #expect(mine! < service!, "\(log)")
      #expect(service! < log.firstIndex(of: "database#2")!, "\(log)")
      #expect(mine! < log.firstIndex(of: "config#1")!, "\(log)")
    }
    #expect(log.count == 3 + 2 * built.count)
  }

  @Test("a request build reading an app singleton in a loop past sixteen reads stays consistent")
  func longListsBesideClears() {
    let app = App(withStore: true)
    let many = app.cachedSingletons(20)
    let (log, builds) = (app.log, app.builds)
    let handler = Provider(scope: ReqScope(), name: "handler", onDiscard: log.record) { pod in
      var read = [pod.resolve(app.config)]
      for provider in many { read.append(pod.resolve(provider)) }
      for _ in 0..<50 { read.append(pod.resolve(app.config)) }
      read.append(pod.resolve(app.database))
      return Instance("handler", serial: builds.next(), dependencies: read)
    }
    let request = app.request()
    var built = request.resolve(handler)
    #expect(app.violations(app.pod, request) == [])
    for (index, provider) in many.enumerated() where index % 5 == 0 {
      app.pod.clearCachedInstance(of: provider)
      #expect(app.log.take() == [built.description])
      built = request.resolve(handler)
      #expect(app.violations(app.pod, request) == [])
    }
    app.pod.clearCachedInstances(forScope: AppLevelScope())
    #expect(app.log.take().sorted() == ["config#1", built.description].sorted())
    built = request.resolve(handler)
    app.pod.clearCachedInstance(of: app.database)
    #expect(app.log.take().sorted() == ["database#2", "store#3", built.description].sorted())
    #expect(app.violations(app.pod, request) == [])
  }
}
