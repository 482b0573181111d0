import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// A request's pod (a child of the app's pod that owns the request's scope) does its common
// work beside other requests', without the tree's exclusive lock: it builds in its own scope,
// reads the app's cached instances from those builds, caches what it built and goes away.
// Each test here is a way an app uses request pods that only the exclusive side used to see:
// changes in the app while a request's build runs, one request pod shared by threads, builders
// that reach the pod without their context, and request pods that go away at odd moments.

private struct RequestScope: ProviderScope {}
private struct AppScope: ProviderScope {}

/// Starts a request pod's first build of a handler made from `config` on a thread of its own,
/// runs `change` (given the request pod) while that build waits inside its builder, after it
/// read `config`, then lets the build end. Returns the request pod and the handler; nil, having
/// recorded the hang, if a thread never got there.
private func whileFirstRequestBuildRuns(
  in app: Pod, builtFrom config: Provider<Instance>, _ change: (Pod) -> Void
) -> (request: Pod, handler: Provider<Instance>)? {
  let entered = DispatchSemaphore(value: 0)
  let gate = DispatchSemaphore(value: 0)
  let builds = Counter()
  let handler = Provider<Instance>(scope: RequestScope(), name: "handler") { pod in
    let serial = builds.next()
    let config = pod.resolve(config)
    if serial == 1 {
      entered.signal()
      waitWithWatchdog(gate)
    }
    return Instance("handler", serial: serial, dependencies: [config])
  }
  let request = Pod(parent: app, scopes: [RequestScope()])
  let done = startThread { _ = request.resolve(handler) }
  guard waitOrFail(entered, "the request's build") else { return nil }
  change(request)
  gate.signal()
  guard waitOrFail(done, "the request's thread") else { return nil }
  return (request, handler)
}

/// An instance that counts its discards, for hooks that must run exactly once.
private final class Disposable: Sendable {
  let label: String
  let from: [Disposable]
  /// The request it was built for (see `RequestToken`), zero outside one.
  let request = RequestToken.current
  private let discards = Shared(0)

  init(_ label: String, from: [Disposable] = []) {
    self.label = label
    self.from = from
  }

  func discarded() { discards.withLock { $0 += 1 } }
  var discardCount: Int { discards.withLock { $0 } }
}

/// Which request a thread is serving, for builders to stamp on what they build.
private enum RequestToken {
  @TaskLocal static var current = 0
}

/// Every instance a test built, to check at the end that each hook ran once.
private final class Ledger: Sendable {
  private let all = Shared<[Disposable]>([])

  func add(_ instance: Disposable) -> Disposable {
    all.withLock { $0.append(instance) }
    return instance
  }

  var instances: [Disposable] { all.withLock { $0 } }

  /// The instances whose hook ran more than once, by label.
  var disposedTwice: [String] {
    instances.filter { $0.discardCount > 1 }.map { "\($0.label): \($0.discardCount)" }
  }

  /// The instances whose hook ran other than once, by label.
  var notDisposedOnce: [String] {
    instances.filter { $0.discardCount != 1 }.map { "\($0.label): \($0.discardCount)" }
  }
}

/// A warmable provider of the user's own, which warms up by resolving through the pod.
private struct WarmedThroughPod: WarmableProvider {
  let provider: Provider<Instance>
  var name: String { provider.name }
  func warmUp(in pod: Pod) async throws { _ = pod.resolve(provider) }
}

/// The app's pod of the stress-like tests, in a global as an app keeps it.
private let sharedSectionApp = PodHolder()

@Suite("Request pods working beside each other")
struct SharedSectionTests {
  @Test("two threads resolving one request-scoped provider through one request pod build it once")
  func oneBuildForTwoThreads() {
    let app = Pod()
    let builds = Counter()
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let handler = Provider<Instance>(scope: RequestScope(), name: "handler") { _ in
      let serial = builds.next()
      if serial == 1 {
        entered.signal()
        waitWithWatchdog(gate)
      }
      return Instance("handler", serial: serial)
    }
    let request = Pod(parent: app, scopes: [RequestScope()])
    let got = Shared<[Instance]>([])
    // Resolved outside `got`'s lock: the first build blocks inside its resolve.
    let first = startThread {
      let instance = request.resolve(handler)
      got.withLock { $0.append(instance) }
    }
    guard waitOrFail(entered, "the first build") else { return }
    let second = startThread {
      let instance = request.resolve(handler)
      got.withLock { $0.append(instance) }
    }
    #expect(request.waitUntil { request.hasWaiter(for: handler) })
    gate.signal()
    guard waitOrFail(first, "the first thread"), waitOrFail(second, "the second thread") else {
      return
    }
    #expect(builds.value == 1)
    let instances = got.withLock { $0 }
    #expect(instances.count == 2 && instances.allSatisfy { $0 === instances[0] })
    #expect(app.invariantViolations == [])
  }

  @Test("a clear of an app scope while a request's build runs keeps its result out of the cache")
  func appClearDuringRequestBuild() {
    let app = Pod()
    let configBuilds = Counter()
    let config = Provider<Instance>(scope: AppScope(), name: "config") { _ in
      Instance("config", serial: configBuilds.next())
    }
    _ = app.resolve(config)
    let paused = whileFirstRequestBuildRuns(in: app, builtFrom: config) { _ in
      app.clearCachedInstances(forScope: AppScope())
    }
    guard let (request, handler) = paused else { return }
    // The clear returned before the build ended: the handler must come from the new config.
    let current = app.resolve(config)
    #expect(request.resolve(handler).dependencies.first === current)
    #expect(app.invariantViolations == [])
  }

  @Test("an override on the app's pod while a request's build runs reaches the next resolve")
  func appOverrideDuringRequestBuild() {
    let app = Pod()
    let config = instanceProvider("config")
    _ = app.resolve(config)
    let paused = whileFirstRequestBuildRuns(in: app, builtFrom: config) { _ in
      app.overrideProvider(config) { _ in Instance("fake config", serial: 0) }
    }
    guard let (request, handler) = paused else { return }
    #expect(request.resolve(handler).dependencies.first?.label == "fake config")
    app.removeOverrideProvider(config)
    #expect(request.resolve(handler).dependencies.first?.label == "config")
    #expect(app.invariantViolations == [])
  }

  @Test("an override on the request's pod while its build runs reaches the next resolve")
  func requestOverrideDuringRequestBuild() {
    let app = Pod()
    let config = instanceProvider("config")
    _ = app.resolve(config)
    let paused = whileFirstRequestBuildRuns(in: app, builtFrom: config) { request in
      request.overrideProvider(config) { _ in Instance("request's config", serial: 0) }
    }
    guard let (request, handler) = paused else { return }
    #expect(request.resolve(handler).dependencies.first?.label == "request's config")
    #expect(app.invariantViolations == [])
  }

  @Test("a clear of an app scope disposes of what request pods built from it, once each")
  func appClearReachesRequests() {
    let app = Pod()
    let ledger = Ledger()
    let config = Provider<Disposable>(
      scope: AppScope(), name: "config", onDiscard: { $0.discarded() }
    ) { _ in ledger.add(Disposable("config")) }
    let handler = Provider<Disposable>(
      scope: RequestScope(), name: "handler", onDiscard: { $0.discarded() }
    ) { pod in ledger.add(Disposable("handler", from: [pod.resolve(config)])) }
    var requests = (0..<4).map { _ in Pod(parent: app, scopes: [RequestScope()]) }
    let first = requests.map { $0.resolve(handler) }
    let oldConfig = app.resolve(config)
    #expect(first.allSatisfy { $0.from.first === oldConfig })
    app.clearCachedInstances(forScope: AppScope())
    #expect(first.allSatisfy { $0.discardCount == 1 })
    let second = requests.map { $0.resolve(handler) }
    let newConfig = app.resolve(config)
    #expect(second.allSatisfy { $0.from.first === newConfig && $0.discardCount == 0 })
    #expect(app.invariantViolations == [])
    requests.removeAll()
    app.clearCachedInstances(forScope: AppScope())
    #expect(app.invariantViolations == [])
    #expect(ledger.notDisposedOnce == [])
  }

  @Test("a request pod let go of while its build runs on another thread disposes once")
  func releasedWhileBuilding() {
    let app = Pod()
    let ledger = Ledger()
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let session = Provider<Disposable>(
      scope: RequestScope(), name: "session", onDiscard: { $0.discarded() }
    ) { _ in ledger.add(Disposable("session")) }
    let handler = Provider<Disposable>(
      scope: RequestScope(), name: "handler", onDiscard: { $0.discarded() }
    ) { pod in
      let session = pod.resolve(session)
      entered.signal()
      waitWithWatchdog(gate)
      return ledger.add(Disposable("handler", from: [session]))
    }
    let holder = PodHolder()
    holder.pod = Pod(parent: app, scopes: [RequestScope()])
    let request = Shared<Pod?>(holder.pod)
    let done = startThread {
      let pod = request.withLock { $0 }!
      _ = pod.resolve(handler)
    }
    guard waitOrFail(entered, "the request's build") else { return }
    // The building thread holds the pod only through its resolve: let go of every other
    // reference, so the pod goes away as the build ends.
    holder.pod = nil
    request.withLock { $0 = nil }
    gate.signal()
    guard waitOrFail(done, "the request's thread") else { return }
    #expect(app.invariantViolations == [])
    #expect(app.childCount == 0)
    // The session was cached, then disposed of with its pod; the handler, finished after
    // the pod went away, was never cached and so never the pod's to dispose of.
    let sessions = ledger.instances.filter { $0.label == "session" }
    #expect(sessions.count == 1 && sessions.allSatisfy { $0.discardCount == 1 })
    #expect(ledger.instances.filter { $0.label == "handler" }.allSatisfy { $0.discardCount <= 1 })
  }

  @Test("a request's build warming up through its pod on another task records what it resolves")
  func warmUpOnAnotherTaskFromARequestBuild() {
    let app = Pod()
    let config = instanceProvider("config", scope: AppScope())
    let builds = Counter()
    // The builder hands its context to a task and waits for it, as a builder may; the task
    // resolves through the request's pod itself. On an executor of its own: tests running at
    // the same time may block every thread of the shared pool.
    let executor = SerialTaskExecutor()
    let handler = Provider(scope: RequestScope(), name: "handler") { context in
      let done = DispatchSemaphore(value: 0)
      Task(executorPreference: executor) {
        try? await context.warmUp(WarmedThroughPod(provider: config))
        done.signal()
      }
      waitWithWatchdog(done)
      return Instance("handler", serial: builds.next())
    }
    _ = app.resolve(config)
    let request = Pod(parent: app, scopes: [RequestScope()])
    let first = Shared<Instance?>(nil)
    // On a thread of its own: the builder blocks, and the task needs a pool thread.
    runUntilThreadEnds { first.withLock { $0 = request.resolve(handler) } }
    app.clearCachedInstances(forScope: AppScope())
    #expect(
      request.resolve(handler) !== first.withLock { $0 },
      "the handler was built from the config, which was cleared")
    #expect(app.invariantViolations == [])
  }

  @Test("a request pod that overrides what an app singleton is built from gets its own")
  func requestOverridesWhatAnAppSingletonUses() {
    let app = Pod()
    let client = instanceProvider("client")
    let service = instanceProvider("service", dependencies: [client])
    let handler = instanceProvider("handler", scope: RequestScope(), dependencies: [service])
    let appService = app.resolve(service)
    for round in 0..<3 {
      let faked = round != 1
      let request = Pod(
        parent: app, scopes: [RequestScope()],
        overrides: faked ? [client.override { _ in Instance("fake client", serial: round) }] : [])
      let built = request.resolve(handler)
      let expected = faked ? "fake client" : "client"
      #expect(built.dependencies.first?.dependencies.first?.label == expected)
      #expect((built.dependencies.first === appService) == !faked)
      #expect(request.resolve(service).dependencies.first?.label == expected)
      #expect(app.invariantViolations == [])
    }
    #expect(app.resolve(service) === appService)
  }

  // A context kept past its build reaches the request pod's engine after the pod itself has
  // gone: its resolves look at the pod's overrides while the pod going away takes them out.
  // The thread sanitizer reports the two if they are not ordered.
  @Test("a kept context resolving while its request pod, which overrides, goes away")
  func keptContextWhileItsOverridingPodGoesAway() {
    let app = Pod()
    let config = instanceProvider("config")
    let session = instanceProvider("session", scope: RequestScope(), dependencies: [config])
    let kept = Shared<BuildContext?>(nil)
    let handler = Provider<Instance>(scope: RequestScope(), name: "handler") { context in
      kept.withLock { $0 = context }
      return Instance("handler", serial: 0, dependencies: [context.resolve(session)])
    }
    let rounds = underThreadSanitizer ? 100 : 300
    for round in 0..<rounds {
      let holder = PodHolder()
      holder.pod = Pod(
        parent: app, scopes: [RequestScope()],
        overrides: [config.override { _ in Instance("request's config", serial: round) }])
      _ = holder.pod.resolve(handler)
      let context = kept.withLock { $0 }!
      let started = DispatchSemaphore(value: 0)
      let stop = Shared(false)
      let resolving = startThread {
        started.signal()
        // No lock between resolves but the pod's own: what orders them with the pod going
        // away is the engine's.
        while true {
          // Once the pod has gone, its overrides go with it: either config will do.
          _ = context.resolve(session)
          if stop.withLock({ $0 }) { break }
        }
      }
      guard waitOrFail(started, "the resolving thread") else { return }
      holder.pod = nil
      stop.withLock { $0 = true }
      guard waitOrFail(resolving, "the resolving thread") else { return }
      kept.withLock { $0 = nil }
    }
    #expect(app.invariantViolations == [])
  }

  @Test("a builder that resolves through the request pod itself sees what its context sees")
  func builderThroughThePodItself() {
    let app = Pod()
    let config = instanceProvider("config")
    let session = instanceProvider("session", scope: RequestScope(), dependencies: [config])
    let holder = PodHolder()
    let handler = Provider<Instance>(scope: RequestScope(), name: "handler") { context in
      let fromPod = holder.pod.resolve(session)
      let fromContext = context.resolve(session)
      return Instance("handler", serial: 0, dependencies: [fromPod, fromContext])
    }
    for _ in 0..<3 {
      holder.pod = Pod(parent: app, scopes: [RequestScope()])
      let built = holder.pod.resolve(handler)
      #expect(built.dependencies[0] === built.dependencies[1])
      #expect(built.dependencies[0] === holder.pod.resolve(session))
      #expect(built.dependencies[0].dependencies.first === app.resolve(config))
      // A clear of the app's config must reach the handler built through the pod itself.
      app.clearCachedInstance(of: config)
      #expect(holder.pod.resolve(handler) !== built)
      #expect(app.invariantViolations == [])
    }
    holder.pod = nil
    #expect(app.invariantViolations == [])
  }

  @Test("a context kept past its request's build resolves later on another thread")
  func contextKeptPastItsBuild() {
    let app = Pod()
    let config = instanceProvider("config")
    let session = instanceProvider("session", scope: RequestScope(), dependencies: [config])
    let kept = Shared<BuildContext?>(nil)
    let handler = Provider<Instance>(scope: RequestScope(), name: "handler") { context in
      kept.withLock { $0 = context }
      return Instance("handler", serial: 0, dependencies: [context.resolve(session)])
    }
    var request: Pod? = Pod(parent: app, scopes: [RequestScope()])
    let built = request!.resolve(handler)
    let later = Shared<Instance?>(nil)
    let done = startThread {
      let context = kept.withLock { $0 }!
      later.withLock { $0 = context.resolve(session) }
    }
    guard waitOrFail(done, "the other thread") else { return }
    #expect(later.withLock { $0 } === built.dependencies.first)
    request = nil
    let gone = startThread {
      let context = kept.withLock { $0 }!
      _ = context.resolve(session)
    }
    guard waitOrFail(gone, "the other thread after the pod went away") else { return }
    kept.withLock { $0 = nil }
    #expect(app.invariantViolations == [])
  }

  @Test("a grandchild of a request pod builds in the request's scope, and both go away cleanly")
  func grandchildOfARequest() {
    struct StepScope: ProviderScope {}
    let app = Pod()
    let ledger = Ledger()
    let config = instanceProvider("config")
    let session = Provider<Disposable>(
      scope: RequestScope(), name: "session", onDiscard: { $0.discarded() }
    ) { pod in
      _ = pod.resolve(config)
      return ledger.add(Disposable("session"))
    }
    let step = Provider<Disposable>(
      scope: StepScope(), name: "step", onDiscard: { $0.discarded() }
    ) { pod in ledger.add(Disposable("step", from: [pod.resolve(session)])) }
    for order in 0..<4 {
      var request: Pod? = Pod(parent: app, scopes: [RequestScope()])
      if order & 1 == 0 { _ = request!.resolve(session) }
      var grandchild: Pod? = Pod(parent: request!, scopes: [StepScope()])
      let built = grandchild!.resolve(step)
      #expect(built.from.first === request!.resolve(session))
      if order & 2 == 0 { app.clearCachedInstance(of: config) }
      grandchild = nil
      request = nil
      #expect(app.invariantViolations == [])
    }
    #expect(ledger.notDisposedOnce == [])
  }

  @Test("an app shut down while its requests build disposes of what they cached, once each")
  func appShutDownWhileRequestsBuild() async throws {
    let app = Pod()
    let ledger = Ledger()
    let config = Provider<Disposable>(
      scope: AppScope(), name: "config", onDiscard: { $0.discarded() }
    ) {
      _ in ledger.add(Disposable("config"))
    }
    let session = Provider<Disposable>(
      scope: RequestScope(), name: "session", onDiscard: { $0.discarded() }
    ) { pod in ledger.add(Disposable("session", from: [pod.resolve(config)])) }
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let handler = Provider<Disposable>(
      scope: RequestScope(), name: "handler", onDiscard: { $0.discarded() }
    ) { pod in
      let session = pod.resolve(session)
      entered.signal()
      waitWithWatchdog(gate)
      return ledger.add(Disposable("handler", from: [session]))
    }
    let requestCount = 8
    let requests = Shared<[Pod?]>(
      (0..<requestCount).map { _ in Pod(parent: app, scopes: [RequestScope()]) })
    let sessions = requests.withLock { $0 }.map { $0!.resolve(session) }
    let threads = (0..<requestCount).map { index in
      startThread {
        let request = requests.withLock { $0[index] }!
        _ = request.resolve(handler)
      }
    }
    for _ in 0..<requestCount {
      guard waitOrFail(entered, "the requests' builds") else { return }
    }
    // On an executor of its own: tests running at the same time may block every thread of
    // the shared pool.
    let executor = SerialTaskExecutor()
    let shutdown = Task(executorPreference: executor) { try await app.shutdown() }
    #expect(app.waitUntil { app.engine.state.withLock { _ in app.engine.pod.shutdown != nil } })
    for _ in 0..<requestCount { gate.signal() }
    for done in threads { guard waitOrFail(done, "a request's thread") else { return } }
    try await shutdown.value
    requests.withLock { $0 = [] }
    #expect(sessions.allSatisfy { $0.discardCount == 1 })
    #expect(ledger.disposedTwice == [])
    #expect(app.invariantViolations == [])
  }

  @Test("weak, always-new, throwing and family providers inside request builds")
  func otherKindsInsideRequestBuilds() throws {
    struct Failure: Error {}
    let app = Pod()
    let ledger = Ledger()
    let fresh = Counter()
    let alwaysNew = Provider<Instance>(scope: AlwaysCreateNewScope(), name: "always new") { _ in
      Instance("new", serial: fresh.next())
    }
    let weak = Provider<Instance>(scope: WeakScope(), name: "weak") { _ in
      Instance("weak", serial: fresh.next())
    }
    // Fails at its first attempt in each request.
    let attempts = Shared(0)
    let flaky = ThrowingProvider<Instance>(scope: RequestScope(), name: "flaky") { _ in
      let attempt = attempts.withLock {
        $0 += 1
        return $0
      }
      if attempt == 1 { throw Failure() }
      return Instance("flaky", serial: 0)
    }
    let member = ProviderFamily<Int, Disposable>(
      scope: RequestScope(), name: "member", onDiscard: { $0.discarded() }
    ) { _, index in ledger.add(Disposable("member \(index)")) }
    let handler = Provider<Disposable>(
      scope: RequestScope(), name: "handler", onDiscard: { $0.discarded() }
    ) { pod in
      let first = pod.resolve(alwaysNew)
      let second = pod.resolve(alwaysNew)
      _ = pod.resolve(weak)
      let flakyResult = (try? pod.resolve(flaky)) ?? (try? pod.resolve(flaky))
      let members = [pod.resolve(member(1)), pod.resolve(member(2))]
      precondition(first !== second && flakyResult != nil)
      return ledger.add(Disposable("handler", from: members))
    }
    for _ in 0..<3 {
      attempts.withLock { $0 = 0 }
      var request: Pod? = Pod(parent: app, scopes: [RequestScope()])
      let built = request!.resolve(handler)
      #expect(request!.resolve(handler) === built)
      #expect(built.from[0] === request!.resolve(member(1)))
      #expect(try request!.resolve(flaky).label == "flaky")
      #expect(app.invariantViolations == [])
      request = nil
      #expect(built.discardCount == 1)
      #expect(built.from.allSatisfy { $0.discardCount == 1 })
    }
    #expect(ledger.notDisposedOnce == [])
    #expect(app.invariantViolations == [])
  }

  @Test("request pods on eight threads, beside app clears, overrides and new singletons")
  func requestsBesideAppChanges() {
    let app = Pod()
    sharedSectionApp.pod = app
    let ledger = Ledger()
    let configGeneration = Shared(0)
    // The app's scope, cleared by one thread; each build takes the generation it saw.
    let config = Provider<Instance>(scope: AppScope(), name: "config") { _ in
      Instance("config", serial: configGeneration.withLock { $0 })
    }
    let client = instanceProvider("client")
    let session = Provider<Disposable>(
      scope: RequestScope(), name: "session", onDiscard: { $0.discarded() }
    ) { pod in
      _ = pod.resolve(client)
      return ledger.add(Disposable("session"))
    }
    let handler = Provider<Disposable>(
      scope: RequestScope(), name: "handler", onDiscard: { $0.discarded() }
    ) { pod in
      let session = pod.resolve(session)
      let config = pod.resolve(config)
      return ledger.add(Disposable("handler \(config.serial)", from: [session]))
    }
    let problems = Shared<[String]>([])
    // Instances seen cached (a second resolve gave them again): each must be disposed of
    // exactly once, by a change in the app, a clear, or its pod going away.
    let cached = Shared<[Disposable]>([])
    let rounds = underThreadSanitizer ? 200 : 2_000
    onThreads(10) { index in
      for round in 0..<rounds {
        switch index {
        case 8:
          configGeneration.withLock { $0 += 1 }
          sharedSectionApp.pod.clearCachedInstances(forScope: AppScope())
        case 9:
          if round % 2 == 0 {
            sharedSectionApp.pod.overrideProvider(client) { _ in Instance("fake", serial: round) }
          } else {
            sharedSectionApp.pod.removeOverrideProvider(client)
          }
          // A singleton resolved for the first time, from the app.
          let fresh = instanceProvider("fresh \(round)")
          _ = sharedSectionApp.pod.resolve(fresh)
        default:
          let token = index * 1_000_000 + round + 1
          RequestToken.$current.withValue(token) { () -> Void in
            let request = Pod(parent: sharedSectionApp.pod, scopes: [RequestScope()])
            let built: Disposable = request.resolve(handler)
            if built.request != token || built.from.first?.request != token {
              problems.withLock { $0.append("a request got another request's instance") }
            }
            let again: Disposable = request.resolve(handler)
            if again === built { cached.withLock { $0.append(built) } }
            if round % 3 == 0 { request.clearCachedInstances(forScope: RequestScope()) }
          }
        }
      }
    }
    #expect(problems.withLock { $0 } == [])
    #expect(app.invariantViolations == [])
    #expect(ledger.disposedTwice == [])
    let notDisposed = cached.withLock { $0 }.filter { $0.discardCount != 1 }
    #expect(notDisposed.map(\.label) == [])
    sharedSectionApp.pod = nil
  }
}

extension Pod {
  /// Whether a thread waits for the build of `provider` in progress in this pod.
  fileprivate func hasWaiter<Value>(for provider: Provider<Value>) -> Bool {
    let pod = engine.pod
    return engine.state.withLock { _ in pod.slots[provider.info.key]?.build?.waiters != nil }
  }

  /// Polls `condition` until it holds or `hangWatchdogSeconds` have passed (a hang watchdog):
  /// each look takes the tree's lock, so looks are spaced, leaving the lock to the thread awaited.
  fileprivate func waitUntil(_ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: TimeInterval(hangWatchdogSeconds))
    while Date() < deadline {
      if condition() { return true }
      usleep(200)
    }
    return false
  }
}
