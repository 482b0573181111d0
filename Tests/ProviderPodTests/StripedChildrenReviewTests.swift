import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// A root pod lists its children in one list per stripe of the pods' shared-section locks, and
// a request's pod joins and leaves its stripe's list under the lock its shared sections hold.
// These tests use request pods the way a server does, on more threads than cores, beside
// everything the app's pod does, and check that every list ends consistent and empty, that
// nothing leaks and that every hook runs once.

private typealias RequestScope = AppRequestScope
private typealias AppScope = AppConfigScope

/// An app's pod kept in a global, as an app does.
private let stripedAppPod = Pod()
/// A global that a test swaps, as an app's `nonisolated(unsafe) var` would be.
nonisolated(unsafe) private var swappedAppPod = Pod()
/// Guards `swappedAppPod`: the app's own global, not the library, must not race.
private let swappedAppPodLock = NSLock()

/// An app pod, the app's instances a request's handler is built from, and the handler.
private struct Fixture {
  let shared: AppWithRequests
  /// Built from the app's `config` and `database`.
  let handler: Provider<Instance>
  /// A handler built from nothing of the app's.
  let plain: Provider<Instance>

  init(app: Pod = Pod(), warmUp: Bool = true) {
    shared = AppWithRequests(pod: app, warmUp: warmUp)
    handler = shared.requestProvider("handler", reads: [shared.config, shared.database])
    plain = shared.requestProvider("plain", reads: [])
  }

  var app: Pod { shared.pod }
  var log: DisposalLog { shared.log }
  var builds: Counter { shared.builds }
  var config: Provider<Instance> { shared.config }
  var database: Provider<Instance> { shared.database }
  func request() -> Pod { shared.request() }
}

/// How many times each description was logged, and those logged more than once.
private func repeats(_ entries: [String]) -> [String: Int] {
  Dictionary(entries.map { ($0, 1) }, uniquingKeysWith: +).filter { $0.value > 1 }
}

/// Runs `body` in a task and blocks the calling thread (one of the test's own, never a pool
/// thread) until it is done.
private func blockingOn(_ body: @escaping @Sendable () async -> Void) -> Bool {
  let done = DispatchSemaphore(value: 0)
  Task.detached {
    await body()
    done.signal()
  }
  // A hang watchdog with room to spare: the task needs a thread of the cooperative pool,
  // which other suites running beside this one may hold for many seconds (the full suite
  // held it past 20 s on two cores).
  return done.wait(timeout: .now() + .seconds(hangWatchdogSeconds)) == .success
}

// Serialized, and blocking no thread of the cooperative pool while it waits for a task: the
// pool has one thread per core, two here. These tests keep more threads than cores busy for
// seconds: run beside the other suites on two cores, they starved those suites' async tests
// past their watchdogs. So they run only when asked for by name, alone: `.ci/run` runs them
// in a step of their own.
@Suite(
  "A root's children listed by stripe", .serialized,
  .enabled(
    if: ProcessInfo.processInfo.environment["PROVIDERPOD_RUN_ALONE"] == "StripedChildrenReview",
    "runs alone: PROVIDERPOD_RUN_ALONE=StripedChildrenReview swift test --filter StripedChildrenReview"
  ))
struct StripedChildrenReviewTests {
  @Test("requests on twelve threads beside clears, overrides and request shutdowns")
  func requestsBesideAppChanges() {
    let fixture = Fixture()
    let stop = Shared(false)
    let replacement = Instance("replacement", serial: -1)
    let changes = startThread {
      var round = 0
      while !stop.withLock({ $0 }) {
        round += 1
        switch round % 4 {
        case 0: fixture.app.clearCachedInstances(forScope: AppScope())
        case 1: fixture.app.overrideProvider(fixture.database, withValue: replacement)
        case 2: fixture.app.removeOverrideProvider(fixture.database)
        default: fixture.app.clearCachedInstance(of: fixture.config)
        }
      }
    }
    let cached = Shared<[String]>([])
    let hung = Counter()
    onThreads(12) { thread in
      for index in 0..<150 {
        let request = fixture.request()
        let handler = request.resolve(index % 3 == 0 ? fixture.plain : fixture.handler)
        if request.resolve(index % 3 == 0 ? fixture.plain : fixture.handler) === handler {
          cached.withLock { $0.append(handler.description) }
        }
        if (index + thread) % 5 == 0 {
          if !blockingOn({ try? await request.shutdown() }) { hung.next() }
        }
      }
    }
    stop.withLock { $0 = true }
    #expect(waitOrFail(changes, "the thread changing the app"))
    #expect(hung.value == 0)
    #expect(fixture.app.childCount == 0)
    #expect(fixture.app.invariantViolations == [])
    let entries = fixture.log.entries
    #expect(repeats(entries) == [:])
    let logged = Set(entries)
    let handlers = cached.withLock { $0 }
    #expect(handlers.count > 100)
    #expect(handlers.filter { !logged.contains($0) } == [])
    #expect(blockingOn { try? await fixture.app.shutdown() })
    #expect(repeats(fixture.log.entries) == [:])
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("the app shut down while request pods go away on twelve threads")
  func appShutdownBesideRequests() {
    let fixture = Fixture()
    let cached = Shared<[String]>([])
    // Every thread makes its requests, then waits; the app's shutdown begins as they let go
    // of their pods, some of them shut down by their own thread first.
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let threads = (0..<12).map { thread in
      startThread {
        var requests: [Pod] = []
        for index in 0..<100 {
          let request = fixture.request()
          let handler = request.resolve(index % 2 == 0 ? fixture.plain : fixture.handler)
          if request.resolve(index % 2 == 0 ? fixture.plain : fixture.handler) === handler {
            cached.withLock { $0.append(handler.description) }
          }
          requests.append(request)
        }
        ready.signal()
        waitWithWatchdog(go)
        var index = 0
        while let request = requests.popLast() {
          index += 1
          if (index + thread) % 7 == 0 { _ = blockingOn { try? await request.shutdown() } }
        }
      }
    }
    for _ in 0..<12 { #expect(waitOrFail(ready, "a request thread")) }
    #expect(fixture.app.childCount == 1200)
    #expect(fixture.app.invariantViolations == [])
    for _ in 0..<12 { go.signal() }
    #expect(blockingOn { try? await fixture.app.shutdown() })
    for done in threads { #expect(waitForWorkOrFail(done, "a request thread")) }
    #expect(fixture.app.childCount == 0)
    #expect(fixture.app.invariantViolations == [])
    let entries = fixture.log.entries
    #expect(repeats(entries) == [:])
    let logged = Set(entries)
    #expect(cached.withLock { $0 }.filter { !logged.contains($0) } == [])
    #expect(logged.contains("config#1") && logged.contains("database#2"))
  }

  @Test("request pods of a global app pod, from threads and tasks")
  func globalAppPod() async {
    let fixture = Fixture(app: stripedAppPod)
    onThreads(8) { _ in
      for _ in 0..<100 {
        let request = fixture.request()
        _ = request.resolve(fixture.handler)
        _ = request.resolve(fixture.plain)
      }
    }
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<64 {
        group.addTask {
          let request = fixture.request()
          _ = request.resolve(fixture.handler)
          await Task.yield()
          _ = request.resolve(fixture.plain)
          if Bool.random() { try? await request.shutdown() }
        }
      }
    }
    #expect(stripedAppPod.childCount == 0)
    #expect(stripedAppPod.invariantViolations == [])
    #expect(repeats(fixture.log.entries) == [:])
    // Every request's handler and plain instance went with its pod, once.
    #expect(
      fixture.log.entries.filter { $0.hasPrefix("handler") || $0.hasPrefix("plain") }
        .count == fixture.builds.value - 2)
  }

  @Test("a global app pod replaced while its requests run on other threads")
  func swappedGlobalAppPod() {
    let log = DisposalLog()
    let plain = Provider(scope: RequestScope(), name: "plain", onDiscard: log.record) { _ in
      Instance("plain", serial: 0)
    }
    let olds = WeakList()
    onThreads(8) { thread in
      for index in 0..<100 {
        swappedAppPodLock.lock()
        if thread == 0, index % 10 == 0 {
          olds.add(swappedAppPod.engine.pod)
          swappedAppPod = Pod()
        }
        let app = swappedAppPod
        swappedAppPodLock.unlock()
        let request = Pod(parent: app, scopes: [RequestScope()])
        _ = request.resolve(plain)
      }
    }
    #expect(log.entries.count == 800)
    #expect(olds.liveCount == 0)
    #expect(swappedAppPod.childCount == 0)
  }

  @Test("pods of one stripe join and leave its list together, on eight threads")
  func sameStripeRequests() {
    let fixture = Fixture()
    // Made without joining: a pod joins at its first use.
    var byStripe: [Int: [Pod]] = [:]
    for _ in 0..<3000 {
      let pod = fixture.request()
      byStripe[pod.engine.pod.stripe, default: []].append(pod)
    }
    var crowded = Array(byStripe.values.filter { $0.count >= 8 }.prefix(4))
    #expect(crowded.count == 4)
    let pods = Shared(Array(crowded.joined()))
    let total = pods.withLock { $0.count }
    let records = WeakList()
    for pod in pods.withLock({ $0 }) { records.add(pod.engine.pod) }
    byStripe = [:]
    crowded = []
    let before = fixture.app.exclusiveSectionsEntered
    let handlers = Counter()
    onThreads(8) { _ in
      while let pod = pods.withLock({ $0.popLast() }) {
        _ = pod.resolve(fixture.plain)
        _ = pod.resolve(fixture.handler)
        handlers.next()
      }
    }
    // Every one joined and left its stripe's list in shared sections (a few may have gone
    // through the app's lock as another section was exclusive, none did here).
    #expect(fixture.app.exclusiveSectionsEntered - before < total)
    #expect(handlers.value == total)
    // Unlinked from their neighbours and from the list's head: nothing keeps them.
    #expect(records.liveCount == 0)
    #expect(fixture.app.childCount == 0)
    #expect(fixture.app.invariantViolations == [])
    #expect(repeats(fixture.log.entries) == [:])
  }

  @Test("pods of one stripe kept listed while others of it come and go, checked meanwhile")
  func sameStripeListCheckedWhileItChanges() {
    let fixture = Fixture()
    var byStripe: [Int: [Pod]] = [:]
    for _ in 0..<4000 {
      let pod = fixture.request()
      byStripe[pod.engine.pod.stripe, default: []].append(pod)
    }
    guard let stripe = byStripe.max(by: { $0.value.count < $1.value.count })?.key,
      var group = byStripe[stripe], group.count >= 10
    else {
      Issue.record("no stripe with ten pods")
      return
    }
    byStripe = [:]
    // Every other pod of the stripe stays, in the middle of the list, joined.
    let kept = group.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
    let coming = Shared(group.enumerated().filter { $0.offset % 2 == 1 }.map(\.element))
    group = []
    let keptHandlers = kept.map { $0.resolve(fixture.plain) }
    let stop = Shared(false)
    let violations = Shared<[String]>([])
    let checker = startThread {
      while !stop.withLock({ $0 }) {
        let found = fixture.app.invariantViolations
        if !found.isEmpty { violations.withLock { $0 += found } }
      }
    }
    onThreads(8) { _ in
      while let pod = coming.withLock({ $0.popLast() }) {
        _ = pod.resolve(fixture.handler)
        // Made again on this thread, with an address of this thread's: more of the stripe
        // now and then.
        for _ in 0..<40 {
          let other = fixture.request()
          guard other.engine.pod.stripe == stripe else { continue }
          _ = other.resolve(fixture.plain)
        }
      }
    }
    stop.withLock { $0 = true }
    #expect(waitOrFail(checker, "the checking thread"))
    #expect(violations.withLock { $0 } == [])
    #expect(fixture.app.childCount == kept.count)
    for (pod, handler) in zip(kept, keptHandlers) {
      #expect(pod.resolve(fixture.plain) === handler)
    }
    fixture.app.clearCachedInstances(forScope: AppScope())
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("grandchildren, an observed child and watchers beside requests in shared sections")
  func mixedChildren() {
    let fixture = Fixture()
    let recorder = EventRecorder()
    let observed = Pod(parent: fixture.app, scopes: [RequestScope()], observer: recorder)
    let observedHandler = observed.resolve(fixture.handler)
    let step = instanceProvider("step", scope: StepScope())
    let asyncHandler = AsyncProvider(scope: RequestScope(), name: "async handler") { pod in
      await Task.yield()
      return Instance("async", serial: 0, dependencies: [pod.resolve(fixture.database)])
    }
    let stop = Shared(false)
    // Watchers come and go on the app: while one is registered, requests take its lock.
    let watching = Task.detached {
      while !stop.withLock({ $0 }) {
        for await _ in fixture.app.instances(of: fixture.config) { break }
        await Task.yield()
      }
    }
    let grandchildren = Counter()
    onThreads(10) { thread in
      for index in 0..<80 {
        let request = fixture.request()
        _ = request.resolve(fixture.handler)
        switch (index + thread) % 4 {
        case 0:
          let grandchild = Pod(parent: request, scopes: [StepScope()])
          _ = grandchild.resolve(step)
          _ = grandchild.resolve(fixture.handler)
          if request.childCount == 1 { grandchildren.next() }
        case 1:
          // Lent to the task in a box this thread empties: the task's closure may be freed
          // after the wait returns, and must not keep the pod past this iteration.
          let lent = Shared<Pod?>(request)
          _ = blockingOn { _ = try? await lent.withLock({ $0 })?.resolve(asyncHandler) }
          lent.withLock { $0 = nil }
        case 2:
          _ = observed.resolve(fixture.handler)
          fixture.app.clearCachedInstance(of: fixture.config)
        default:
          _ = request.resolve(fixture.plain)
        }
      }
    }
    stop.withLock { $0 = true }
    #expect(blockingOn { await watching.value })
    #expect(grandchildren.value == 200)
    #expect(fixture.app.invariantViolations == [])
    #expect(fixture.app.childCount == 1)
    let events = recorder.events
    #expect(!events.isEmpty)
    _ = observedHandler
    #expect(blockingOn { try? await observed.shutdown() })
    #expect(fixture.app.childCount == 0)
    #expect(repeats(fixture.log.entries) == [:])
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("the app pod let go of while request contexts are kept, then the requests")
  func appGoesBeforeKeptContexts() {
    let log = DisposalLog()
    let keepers = Shared<[ContextKeeper]>([])
    weak var appRecord: PodRecord?
    weak var appPod: Pod?
    let requestRecords = WeakList()
    let database = Provider(name: "database", onDiscard: log.record) { _ in
      Instance("database", serial: 0)
    }
    let keeper = Provider(scope: RequestScope(), name: "keeper") { pod in
      _ = pod.resolve(database)
      return ContextKeeper(pod)
    }
    do {
      let app = Pod()
      appRecord = app.engine.pod
      appPod = app
      _ = app.resolve(database)
      _ = Pod(parent: app, scopes: [RequestScope()]).resolve(keeper)
      // Until the threads end: a thread's closure, which holds the app, goes with it.
      onThreadsUntilTheyEnd(8) { _ in
        for index in 0..<50 {
          let request = Pod(parent: app, scopes: [RequestScope()])
          let kept = request.resolve(keeper)
          if index % 5 == 0 {
            requestRecords.add(request.engine.pod)
            keepers.withLock { $0.append(kept) }
          }
        }
      }
      #expect(app.childCount == 0)
      #expect(app.invariantViolations == [])
    }
    // The app's pod went with the last request's; its record stays for the kept contexts.
    #expect(appPod == nil)
    #expect(appRecord != nil)
    #expect(log.entries == ["database#0"])
    // The contexts still resolve, from other threads, now that their pods and the app went.
    let resolved = Counter()
    onThreads(8) { thread in
      let mine = keepers.withLock { $0 }.enumerated().filter { $0.offset % 8 == thread }
      for (_, kept) in mine {
        _ = kept.context.resolve(database)
        resolved.next()
      }
    }
    #expect(resolved.value == 80)
    keepers.withLock { $0 = [] }
    #expect(requestRecords.liveCount == 0)
    #expect(appRecord == nil)
  }

  @Test("a root's first child joins through its lock, and roots without children stay bare")
  func firstChildMakesTheLists() {
    let fixture = Fixture(warmUp: false)
    #expect(fixture.app.engine.pod.stripedChildren == nil)
    _ = fixture.app.resolve(fixture.database)
    fixture.app.clearCachedInstances(forScope: AppScope())
    #expect(fixture.app.engine.pod.stripedChildren == nil)
    // A pod never used joins nothing.
    _ = fixture.request()
    #expect(fixture.app.engine.pod.stripedChildren == nil)
    let first = fixture.request()
    let before = fixture.app.exclusiveSectionsEntered
    let handler = first.resolve(fixture.plain)
    #expect(fixture.app.exclusiveSectionsEntered > before)
    #expect(fixture.app.engine.pod.stripedChildren != nil)
    #expect(fixture.app.childCount == 1)
    // Later children join in shared sections.
    let second = fixture.request()
    let again = fixture.app.exclusiveSectionsEntered
    _ = second.resolve(fixture.plain)
    #expect(fixture.app.exclusiveSectionsEntered == again)
    #expect(fixture.app.childCount == 2)
    #expect(first.resolve(fixture.plain) === handler)
    #expect(fixture.app.invariantViolations == [])
    // Many roots on many threads, each with a first child made beside the others'.
    onThreads(8) { _ in
      for _ in 0..<50 {
        let app = Pod()
        let request = Pod(parent: app, scopes: [RequestScope()])
        _ = request.resolve(fixture.plain)
        _ = Pod(parent: app, scopes: [RequestScope()]).resolve(fixture.plain)
        if app.childCount != 1 || app.invariantViolations != [] {
          Issue.record("a fresh root's lists are wrong")
        }
      }
    }
  }

  @Test("a request whose instances are linked to or counted in the app goes beside others")
  func requestsWithRecordsInRoot() {
    let fixture = Fixture()
    let logger = Provider(name: "logger") { _ in Instance("logger", serial: 0) }
    // Always new: built under the app's lock, recording its read of the logger on the app's
    // side, for a handler that also read the app's instances on its own side.
    let helper = Provider(scope: AlwaysCreateNewScope(), name: "helper") { pod in
      Instance("helper", serial: 0, dependencies: [pod.resolve(logger)])
    }
    let counted = Provider(scope: RequestScope(), name: "counted", onDiscard: fixture.log.record) {
      pod in
      Instance(
        "counted", serial: fixture.builds.next(),
        dependencies: [pod.resolve(fixture.config), pod.resolve(helper)])
    }
    _ = fixture.app.resolve(logger)
    let stop = Shared(false)
    let clears = startThread {
      while !stop.withLock({ $0 }) { fixture.app.clearCachedInstance(of: logger) }
    }
    let built = Counter()
    onThreads(10) { thread in
      for index in 0..<120 {
        let request = fixture.request()
        switch (index + thread) % 3 {
        // A link to the app's instance, resolved through the pod itself.
        case 0: _ = request.resolve(fixture.database)
        case 1: _ = request.resolve(counted)
        default: _ = request.resolve(fixture.handler)
        }
        built.next()
      }
    }
    stop.withLock { $0 = true }
    #expect(waitOrFail(clears, "the clearing thread"))
    #expect(built.value == 1200)
    #expect(fixture.app.childCount == 0)
    #expect(fixture.app.invariantViolations == [])
    #expect(repeats(fixture.log.entries) == [:])
    // The app's instances count no request that went: clearing them discards only them.
    _ = fixture.log.take()
    fixture.app.clearCachedInstance(of: fixture.database)
    fixture.app.clearCachedInstances(forScope: AppScope())
    #expect(fixture.log.take().sorted().map { $0.prefix(6) } == ["config", "databa"])
    #expect(fixture.app.invariantViolations == [])
  }

  @Test("a request's build still running as the app shuts down, then its pod goes")
  func buildRunningAcrossAppShutdown() async throws {
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let fixture = Fixture()
    let paused = Provider(scope: RequestScope(), name: "paused", onDiscard: fixture.log.record) {
      pod in
      _ = pod.resolve(fixture.database)
      entered.signal()
      waitWithWatchdog(gate)
      return Instance("paused", serial: 99)
    }
    let siblings = (0..<20).map { _ in fixture.request() }
    for sibling in siblings { _ = sibling.resolve(fixture.plain) }
    let done = startThread {
      let request = fixture.request()
      _ = request.resolve(paused)
    }
    #expect(waitOrFail(entered, "the paused build"))
    let shutdown = Task { try await fixture.app.shutdown() }
    // The shutdown reaches the request's pod while its build runs, then the build ends: the
    // gate opens once the shutdown has begun (a hang watchdog only bounds the wait).
    let began = ContinuousClock.now
    while fixture.app.engine.isAlive, began.duration(to: .now) < .seconds(hangWatchdogSeconds) {
      await Task.yield()
    }
    #expect(!fixture.app.engine.isAlive, "the app's shutdown did not begin")
    gate.signal()
    #expect(waitOrFail(done, "the request's thread"))
    try await shutdown.value
    #expect(fixture.app.childCount == 0)
    #expect(fixture.app.invariantViolations == [])
    #expect(repeats(fixture.log.entries) == [:])
    _ = siblings
  }
}
