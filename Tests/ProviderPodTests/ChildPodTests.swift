import Dispatch
import Foundation
import Testing

@testable import ProviderPod

/// A window's own scope, as an app with several windows would declare it.
private struct WindowScope: ProviderScope {
  var children: [any ProviderScope] { [StepScope()] }
}

/// A small app: an HTTP client, an API built from it, a per-window session, and analytics
/// built from the session.
private struct App {
  let clientBuilds = Counter()
  let apiBuilds = Counter()
  let sessionBuilds = Counter()
  let analyticsBuilds = Counter()
  let client: Provider<Instance>
  let api: Provider<Instance>
  let session: Provider<Instance>
  let analytics: Provider<Instance>
  let step: Provider<Instance>

  init() {
    client = instanceProvider("client", counter: clientBuilds)
    api = instanceProvider("api", counter: apiBuilds, dependencies: [client])
    session = instanceProvider(
      "session", scope: WindowScope(), counter: sessionBuilds, dependencies: [api])
    analytics = instanceProvider("analytics", counter: analyticsBuilds, dependencies: [session])
    step = instanceProvider("step", scope: StepScope(), dependencies: [session])
  }
}

@Suite("Child pods")
struct ChildPodTests {
  @Test("a child that overrides what the parent's instance was built from gets its own")
  func overrideBelowACachedInstance() {
    let app = App()
    let parent = Pod()
    let parentAPI = parent.resolve(app.api)
    let child = Pod(
      parent: parent,
      overrides: [app.client.override { _ in Instance("fake client", serial: 0) }])
    let sibling = Pod(parent: parent)

    let childAPI = child.resolve(app.api)
    #expect(childAPI !== parentAPI)
    #expect(childAPI.dependencies.first?.label == "fake client")
    #expect(sibling.resolve(app.api) === parentAPI)
    #expect(child.resolve(app.api) === childAPI)
    #expect(parent.resolve(app.api) === parentAPI)
    #expect(app.apiBuilds.value == 2)
    #expect(parent.invariantViolations == [])
  }

  @Test("what a child resolves first and that needs nothing of the child's is the parent's")
  func firstResolvedThroughAChild() {
    let app = App()
    let parent = Pod()
    let first = Pod(parent: parent, scopes: [WindowScope()])
    let second = Pod(parent: parent, scopes: [WindowScope()])

    let api = first.resolve(app.api)
    #expect(second.resolve(app.api) === api)
    #expect(parent.resolve(app.api) === api)
    #expect(app.apiBuilds.value == 1)
    #expect(app.clientBuilds.value == 1)
    #expect(parent.dependencyGraph().nodes.map(\.provider).sorted() == ["api", "client"])
    #expect(first.dependencyGraph().nodes == [])
    #expect(parent.invariantViolations == [])
  }

  @Test("two children resolving the same shared instance at once build it once")
  func concurrentSharedBuild() {
    let builds = Counter()
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let slow = Provider<Instance>(name: "slow") { _ in
      entered.signal()
      waitWithWatchdog(release)
      return Instance("slow", serial: builds.next())
    }
    let parent = Pod()
    let first = Pod(parent: parent)
    let second = Pod(parent: parent)
    let results = Shared<[Instance]>([])
    let firstDone = startThread {
      let instance = first.resolve(slow)
      results.withLock { $0.append(instance) }
    }
    guard waitOrFail(entered, "the first build") else { return }
    let secondDone = startThread {
      let instance = second.resolve(slow)
      results.withLock { $0.append(instance) }
    }
    // The second child waits for the build in progress rather than starting its own; the
    // gate stays closed until it is waiting, which the engine shows as a waiter.
    let waiting = parent.waitUntil { parent.hasWaiter(for: slow) }
    release.signal()
    guard waitOrFail(firstDone, "the first child"), waitOrFail(secondDone, "the second child")
    else { return }
    #expect(waiting)
    #expect(builds.value == 1)
    let instances = results.withLock { $0 }
    #expect(instances.count == 2)
    #expect(instances.first === instances.last)
    #expect(parent.resolve(slow) === instances.first)
  }

  @Test("an instance built from a window's own instance stays in that window")
  func builtFromAnOwnedScope() {
    let app = App()
    let parent = Pod()
    let first = Pod(parent: parent, scopes: [WindowScope()])
    let second = Pod(parent: parent, scopes: [WindowScope()])

    let firstAnalytics = first.resolve(app.analytics)
    let secondAnalytics = second.resolve(app.analytics)
    #expect(firstAnalytics !== secondAnalytics)
    #expect(firstAnalytics.dependencies.first === first.resolve(app.session))
    #expect(secondAnalytics.dependencies.first === second.resolve(app.session))
    // Both sessions were built from the one shared API.
    #expect(app.apiBuilds.value == 1)
    #expect(first.resolve(app.session).dependencies.first === parent.resolve(app.api))
    // The parent's own session and analytics are its own too.
    #expect(parent.resolve(app.analytics) !== firstAnalytics)
    #expect(app.sessionBuilds.value == 3)
    #expect(
      first.dependencyGraph().nodes.map(\.provider).sorted() == ["analytics", "api", "session"])
    #expect(parent.invariantViolations == [])
  }

  @Test("an instance built through a child from an always-new provider is the parent's")
  func alwaysNewDependencyThroughAChild() {
    let fresh = Provider<Instance>(scope: AlwaysCreateNewScope(), name: "fresh") { _ in
      Instance("fresh", serial: 0)
    }
    let builds = Counter()
    let cached = Provider<Instance>(name: "cached") { pod in
      Instance("cached", serial: builds.next(), dependencies: [pod.resolve(fresh)])
    }
    let parent = Pod()
    let child = Pod(parent: parent)

    let shared = child.resolve(cached)
    #expect(parent.resolve(cached) === shared)
    #expect(builds.value == 1)
    #expect(parent.invariantViolations == [])
    // What was built with the parent's builder of `fresh` goes when it is cleared there.
    parent.clearCachedInstance(of: fresh)
    #expect(child.resolve(cached) !== shared)
    #expect(parent.invariantViolations == [])
  }

  @Test("an instance built in a child keeps what it was built from that is never cached")
  func alwaysNewDependencyOfAChildsInstance() {
    let app = App()
    let fresh = Provider<Instance>(scope: AlwaysCreateNewScope(), name: "fresh") { _ in
      Instance("fresh", serial: 0)
    }
    let viewModel = Provider<Instance>(name: "view model") { pod in
      Instance(
        "view model", serial: 0, dependencies: [pod.resolve(fresh), pod.resolve(app.session)])
    }
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [WindowScope()])

    let own = child.resolve(viewModel)
    #expect(parent.invariantViolations == [])
    #expect(child.resolve(viewModel) === own)
    // The child built it with the parent's builder of `fresh`: clearing that reaches it.
    parent.clearCachedInstance(of: fresh)
    #expect(child.resolve(viewModel) !== own)
    #expect(parent.invariantViolations == [])
  }

  @Test("a provider the parent overrides to be always new is not in the scope a child owns")
  func overriddenToAlwaysNew() {
    let windowValue = Provider<Instance>(scope: WindowScope(), name: "window value") { _ in
      Instance("window value", serial: 0)
    }
    let builds = Counter()
    let cached = Provider<Instance>(name: "cached") { pod in
      Instance("cached", serial: builds.next(), dependencies: [pod.resolve(windowValue)])
    }
    let parent = Pod()
    parent.overrideProvider(windowValue, scope: AlwaysCreateNewScope()) { _ in
      Instance("always new", serial: 0)
    }
    let child = Pod(parent: parent, scopes: [WindowScope()])

    let shared = parent.resolve(cached)
    #expect(child.resolve(cached) === shared)
    #expect(child.resolve(cached) === shared)
    #expect(builds.value == 1)
    #expect(parent.invariantViolations == [])
  }

  @Test("a child's own override of a family member, or of the family, outlasts the parent's")
  func memberAndFamilyOverridesAcrossPods() {
    let builds = Counter()
    let family = ProviderFamily<Int, Instance>(name: "member") { _, id in
      Instance("member \(id)", serial: builds.next())
    }
    let parent = Pod()
    let memberOverriding = Pod(
      parent: parent,
      overrides: [family(1).override { _ in Instance("child's 1", serial: builds.next()) }])
    let familyOverriding = Pod(
      parent: parent,
      overrides: [family.override { _, id in Instance("child's \(id)", serial: builds.next()) }])
    let ownMember = memberOverriding.resolve(family(1))
    let ownFamilyMember = familyOverriding.resolve(family(1))

    // The child's override of the member is nearer than the parent's of the family.
    parent.overrideProvider(family) { _, id in Instance("parent's \(id)", serial: 0) }
    #expect(memberOverriding.resolve(family(1)) === ownMember)
    #expect(memberOverriding.resolve(family(2)).label == "parent's 2")
    // The child's override of the family is nearer than the parent's of the member.
    parent.overrideProvider(family(1)) { _ in Instance("parent's own 1", serial: 0) }
    #expect(familyOverriding.resolve(family(1)) === ownFamilyMember)
    parent.removeOverrideProvider(family)
    #expect(memberOverriding.resolve(family(1)) === ownMember)
    #expect(parent.invariantViolations == [])
  }

  @Test("removing a child's override goes back to the parent's shared instances")
  func removingAChildOverride() {
    let app = App()
    let parent = Pod()
    let parentAPI = parent.resolve(app.api)
    let child = Pod(parent: parent)
    child.overrideProvider(app.client) { _ in Instance("fake client", serial: 0) }
    let childAPI = child.resolve(app.api)
    #expect(childAPI !== parentAPI)

    child.removeOverrideProvider(app.client)
    #expect(child.resolve(app.api) === parentAPI)
    // The link to the parent's API, and the empty slot its fake client was cached in.
    #expect(child.slotCount == 2)
    #expect(parent.invariantViolations == [])
  }

  @Test("an override added to a child later stops it sharing what was built from the provider")
  func childOverrideAddedLater() {
    let app = App()
    let parent = Pod()
    let child = Pod(parent: parent)
    let shared = child.resolve(app.api)
    #expect(parent.resolve(app.api) === shared)

    child.overrideProvider(app.client) { _ in Instance("fake client", serial: 0) }
    let own = child.resolve(app.api)
    #expect(own !== shared)
    #expect(own.dependencies.first?.label == "fake client")
    #expect(parent.resolve(app.api) === shared)
    #expect(parent.invariantViolations == [])
  }

  @Test("a parent override added later reaches what children built from the old instance")
  func parentOverrideAddedLater() {
    let app = App()
    let recorder = EventRecorder()
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [WindowScope()], observer: recorder)
    let oldSession = child.resolve(app.session)
    let oldAPI = parent.resolve(app.api)
    #expect(oldSession.dependencies.first === oldAPI)
    _ = recorder.take()

    parent.overrideProvider(app.client) { _ in Instance("fake client", serial: 0) }
    #expect(
      recorder.take() == [
        .discarded(provider: "session", scope: "WindowScope", reason: .dependencyDiscarded)
      ])
    let newSession = child.resolve(app.session)
    #expect(newSession !== oldSession)
    #expect(newSession.dependencies.first?.dependencies.first?.label == "fake client")
    #expect(parent.invariantViolations == [])
  }

  @Test("clearing a scope in the parent reaches children that do not own it, not those that do")
  func parentClearReachesChildren() {
    let app = App()
    let parent = Pod()
    let owner = Pod(parent: parent, scopes: [WindowScope()])
    let sharer = Pod(parent: parent)
    let ownSession = owner.resolve(app.session)
    let sharedSession = sharer.resolve(app.session)
    #expect(sharedSession === parent.resolve(app.session))
    let ownStep = owner.resolve(app.step)

    parent.clearCachedInstances(forScope: WindowScope())
    #expect(owner.resolve(app.session) === ownSession)
    #expect(owner.resolve(app.step) === ownStep)
    let rebuilt = sharer.resolve(app.session)
    #expect(rebuilt !== sharedSession)
    #expect(rebuilt === parent.resolve(app.session))
    #expect(parent.invariantViolations == [])
  }

  @Test("a child's clear leaves its parent and its siblings alone")
  func childClearStaysInTheChild() {
    let app = App()
    let parent = Pod()
    let first = Pod(parent: parent, scopes: [WindowScope()])
    let second = Pod(parent: parent, scopes: [WindowScope()])
    let parentSession = parent.resolve(app.session)
    let firstSession = first.resolve(app.session)
    let secondSession = second.resolve(app.session)
    let firstAnalytics = first.resolve(app.analytics)

    first.clearCachedInstances(forScope: WindowScope())
    #expect(first.resolve(app.session) !== firstSession)
    #expect(first.resolve(app.analytics) !== firstAnalytics)
    #expect(second.resolve(app.session) === secondSession)
    #expect(parent.resolve(app.session) === parentSession)
    #expect(app.apiBuilds.value == 1)
    #expect(parent.invariantViolations == [])
  }

  @Test("a released child disposes of its instances once, reports nothing, and leaves nothing")
  func releasingAChild() {
    let log = DisposalLog()
    let recorder = EventRecorder()
    let parentBuilds = Counter()
    let shared = Provider(name: "shared", onDiscard: log.record) { _ in
      Instance("shared", serial: parentBuilds.next())
    }
    let own = Provider(
      scope: WindowScope(), name: "own", onDiscard: log.record
    ) { pod in
      Instance("own", serial: 0, dependencies: [pod.resolve(shared)])
    }
    let parent = Pod(observer: recorder)
    let parentSlots = parent.slotCount
    do {
      let child = Pod(parent: parent, scopes: [WindowScope()], observer: recorder)
      _ = child.resolve(own)
      #expect(parent.childCount == 1)
      _ = recorder.take()
    }
    #expect(log.take() == ["own#0"])
    #expect(recorder.take() == [])
    #expect(parent.childCount == 0)
    #expect(parent.slotCount == parentSlots + 1)  // the shared instance, and nothing else
    #expect(parent.invariantViolations == [])
    _ = parent.resolve(shared)
    #expect(parentBuilds.value == 1)
  }

  @Test("a child keeps its parent alive; the parent does not keep its children")
  func lifetimes() {
    weak var weakParent: Pod?
    weak var weakChild: Pod?
    var child: Pod?
    do {
      let parent = Pod()
      weakParent = parent
      child = Pod(parent: parent)
    }
    #expect(weakParent != nil)
    #expect(child?.parent === weakParent)
    weakChild = child
    child = nil
    #expect(weakChild == nil)
    #expect(weakParent == nil)
  }

  @Test("a parent's overrides apply in its children; a child's own override wins")
  func inheritedOverrides() {
    let app = App()
    let parent = Pod(overrides: [app.client.override { _ in Instance("parent fake", serial: 0) }])
    let inheriting = Pod(parent: parent)
    let overriding = Pod(
      parent: parent, overrides: [app.client.override { _ in Instance("child fake", serial: 0) }])
    let grandchild = Pod(parent: overriding)

    #expect(inheriting.resolve(app.client).label == "parent fake")
    #expect(inheriting.resolve(app.client) === parent.resolve(app.client))
    #expect(overriding.resolve(app.client).label == "child fake")
    #expect(grandchild.resolve(app.api).dependencies.first?.label == "child fake")
    #expect(grandchild.resolve(app.api) === overriding.resolve(app.api))
    #expect(overriding.resolve(app.api) !== parent.resolve(app.api))
    #expect(parent.invariantViolations == [])
  }

  @Test("grandchildren follow the same rules")
  func grandchildren() {
    let app = App()
    let root = Pod()
    let window = Pod(parent: root, scopes: [WindowScope()])
    let step = Pod(parent: window, scopes: [StepScope()])
    let otherStep = Pod(parent: window, scopes: [StepScope()])

    let session = step.resolve(app.session)
    #expect(session === window.resolve(app.session))
    #expect(session !== root.resolve(app.session))
    #expect(step.resolve(app.step) !== otherStep.resolve(app.step))
    #expect(step.resolve(app.step).dependencies.first === session)

    window.clearCachedInstances(forScope: WindowScope())
    #expect(step.resolve(app.session) !== session)
    #expect(step.resolve(app.session) === otherStep.resolve(app.session))
    #expect(app.apiBuilds.value == 1)
    #expect(root.invariantViolations == [])
  }

  @Test("a family member, an async provider and a main-actor provider follow the same rules")
  @MainActor
  func otherKindsOfProvider() async throws {
    let app = App()
    let profiles = ProviderFamily<Int, String>(scope: WindowScope(), name: "profile") { pod, id in
      "profile \(id) of session \(pod.resolve(app.session).serial)"
    }
    let config = AsyncProvider<String>(name: "config") { pod in
      "config for \(pod.resolve(app.api).label)"
    }
    let ownConfig = AsyncProvider<String>(scope: WindowScope(), name: "own config") { pod in
      "own config \(pod.resolve(app.session).serial)"
    }
    let viewModel = MainActorProvider<Instance>(name: "view model") { pod in
      Instance("view model", serial: 0, dependencies: [pod.resolve(app.session)])
    }
    let parent = Pod()
    let first = Pod(parent: parent, scopes: [WindowScope()])
    let second = Pod(parent: parent, scopes: [WindowScope()])

    #expect(first.resolve(profiles(1)) != second.resolve(profiles(1)))
    #expect(try await first.resolve(config) == "config for api")
    #expect(try await second.resolve(config) == "config for api")
    #expect(try await first.resolve(ownConfig) != second.resolve(ownConfig))
    #expect(first.resolve(viewModel) !== second.resolve(viewModel))
    #expect(first.resolve(viewModel).dependencies.first === first.resolve(app.session))
    #expect(app.apiBuilds.value == 1)
    #expect(parent.invariantViolations == [])
  }

  @Test("each pod reports what it caches; a shared instance built through a child is the parent's")
  func observersPerPod() {
    let app = App()
    let parentEvents = EventRecorder()
    let childEvents = EventRecorder()
    let parent = Pod(observer: parentEvents)
    let child = Pod(parent: parent, scopes: [WindowScope()], observer: childEvents)

    _ = child.resolve(app.session)
    #expect(
      parentEvents.take() == [
        .built(provider: "client", scope: "SingletonScope"),
        .built(provider: "api", scope: "SingletonScope"),
      ])
    #expect(childEvents.take() == [.built(provider: "session", scope: "WindowScope")])
    _ = child.resolve(app.api)
    #expect(parentEvents.take() == [.reused(provider: "api", scope: "SingletonScope")])
    #expect(childEvents.take() == [])
  }

  @Test("a child's graph shows its instances and the parent's they were built from")
  func childGraph() {
    let app = App()
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [WindowScope()])
    _ = child.resolve(app.analytics)
    let graph = child.dependencyGraph()
    let session = DependencyGraph.Node(provider: "session", scope: "WindowScope")
    let api = DependencyGraph.Node(provider: "api", scope: "SingletonScope")
    #expect(graph.dependencies(of: session) == [api])
    #expect(graph.nodes.contains(api))
    #expect(
      !graph.nodes.contains(DependencyGraph.Node(provider: "client", scope: "SingletonScope")))
  }

  @Test("hundreds of children made, used from several threads and released, as a server does")
  func childPerRequest() {
    let app = App()
    let parent = Pod()
    let requestBuilds = Counter()
    let request = Provider<Instance>(scope: WindowScope(), name: "request") { pod in
      Instance(
        "request", serial: requestBuilds.next(),
        dependencies: [pod.resolve(app.api), pod.resolve(app.client)])
    }
    let mismatches = Counter()
    onThreads(4) { _ in
      for _ in 0..<100 {
        let child = Pod(parent: parent, scopes: [WindowScope()])
        let first = child.resolve(request)
        if child.resolve(request) !== first { mismatches.next() }
        if first.dependencies.first !== parent.resolve(app.api) { mismatches.next() }
      }
    }
    #expect(mismatches.value == 0)
    #expect(requestBuilds.value == 400)
    #expect(app.apiBuilds.value == 1)
    #expect(app.clientBuilds.value == 1)
    #expect(parent.childCount == 0)
    #expect(parent.slotCount == 2)
    #expect(parent.invariantViolations == [])
  }
}

extension Pod {
  /// Whether a thread waits for the build of `provider` in progress in this pod.
  fileprivate func hasWaiter<Value>(for provider: Provider<Value>) -> Bool {
    let pod = engine.pod
    return engine.state.withLock { _ in pod.slots[provider.info.key]?.build?.waiters != nil }
  }

  /// Polls `condition` without sleeping past what a yield gives; false if it never held.
  fileprivate func waitUntil(_ condition: () -> Bool) -> Bool {
    for _ in 0..<10_000_000 {
      if condition() { return true }
      sched_yield()
    }
    return false
  }
}

@Suite("Child pods: sharing through always-new providers, removals and clears")
struct ChildPodEdgeTests {
  @Test("an always-new provider in between does not keep a child from sharing")
  func alwaysNewInBetween() {
    let formatterBuilds = Counter()
    let formatter = Provider<Instance>(scope: AlwaysCreateNewScope(), name: "formatter") { _ in
      Instance("formatter", serial: formatterBuilds.next())
    }
    let reports = instanceProvider("reports", dependencies: [formatter])
    let parent = Pod()
    let first = Pod(parent: parent)
    let second = Pod(parent: parent)
    let shared = first.resolve(reports)
    #expect(second.resolve(reports) === shared)
    #expect(parent.resolve(reports) === shared)

    // Overriding the always-new provider in the parent reaches what was built through it,
    // also through the children.
    parent.overrideProvider(formatter) { _ in Instance("fake formatter", serial: 0) }
    let rebuilt = first.resolve(reports)
    #expect(rebuilt !== shared)
    #expect(rebuilt.dependencies.first?.label == "fake formatter")
    #expect(second.resolve(reports) === rebuilt)

    // A child that overrides it builds its own.
    let overriding = Pod(
      parent: parent,
      overrides: [formatter.override { _ in Instance("child formatter", serial: 0) }])
    #expect(overriding.resolve(reports).dependencies.first?.label == "child formatter")
    #expect(parent.resolve(reports) === rebuilt)
    #expect(parent.invariantViolations == [])
  }

  @Test("removing a parent's override reaches what children built from it")
  func removingAParentOverride() {
    let window = WindowScopeForEdges()
    let client = instanceProvider("client")
    let session = instanceProvider("session", scope: window, dependencies: [client])
    let parent = Pod(overrides: [client.override { _ in Instance("fake client", serial: 0) }])
    let child = Pod(parent: parent, scopes: [window])
    #expect(child.resolve(session).dependencies.first?.label == "fake client")

    parent.removeOverrideProvider(client)
    #expect(child.resolve(session).dependencies.first?.label == "client")
    #expect(parent.invariantViolations == [])
  }

  @Test("clearing a shared instance through a child leaves the parent's instance alone")
  func clearingASharedInstanceThroughAChild() {
    let builds = Counter()
    let shared = instanceProvider("shared", counter: builds)
    let parent = Pod()
    let child = Pod(parent: parent)
    let instance = child.resolve(shared)
    child.clearCachedInstance(of: shared)
    #expect(parent.resolve(shared) === instance)
    #expect(child.resolve(shared) === instance)
    #expect(builds.value == 1)

    // Clearing it in the parent reaches the child.
    parent.clearCachedInstance(of: shared)
    let rebuilt = child.resolve(shared)
    #expect(rebuilt !== instance)
    #expect(parent.resolve(shared) === rebuilt)
    #expect(parent.invariantViolations == [])
  }

  @Test("several threads resolving a child's own instance at once build it once")
  func exactlyOnceInAChild() {
    let builds = Counter()
    let window = WindowScopeForEdges()
    let own = Provider<Instance>(scope: window, name: "own") { _ in
      Instance("own", serial: builds.next())
    }
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [window])
    let barrier = Barrier(4)
    let results = Shared<Set<ObjectIdentifier>>([])
    onThreads(4) { _ in
      barrier.arrive()
      let instance = child.resolve(own)
      results.withLock { _ = $0.insert(ObjectIdentifier(instance)) }
    }
    #expect(builds.value == 1)
    #expect(results.withLock { $0.count } == 1)
    #expect(parent.slotCount == 0)
  }
}

private struct WindowScopeForEdges: ProviderScope {}
