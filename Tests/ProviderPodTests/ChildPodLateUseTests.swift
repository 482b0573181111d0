import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// A child pod made long before its first use (at launch, say, or before its parent changed)
// must behave at that use exactly as one listed in its parent all along: its overrides given
// at creation, its observer, an isolation of its root and a shutdown of an ancestor all apply.

/// An object with an identity, for overrides given as values.
private final class Given: Sendable {}

@Suite("Child pods first used long after they were made")
struct ChildPodLateUseTests {
  @Test("overrides given at creation win at the first use, over the parent's added meanwhile")
  func overridesGivenAtCreation() {
    let parent = Pod()
    let client = instanceProvider("client")
    let user = Provider(name: "user") { context in
      Instance("user", serial: 0, dependencies: [context.resolve(client)])
    }
    let child = Pod(
      parent: parent, overrides: [client.override { _ in Instance("child-client", serial: 0) }])
    parent.overrideProvider(client) { _ in Instance("parent-client", serial: 0) }
    #expect(child.resolve(user).dependencies[0].label == "child-client")
    #expect(parent.resolve(user).dependencies[0].label == "parent-client")
    parent.removeOverrideProvider(client)
    #expect(child.resolve(user).dependencies[0].label == "child-client")
    #expect(parent.invariantViolations == [])
  }

  @Test("a value given to a child that is never used is let go of with the child")
  func unusedChildLetsGoOfGivenValue() {
    let parent = Pod()
    let given = Provider(name: "given") { _ in Given() }
    weak var value: Given?
    do {
      let made = Given()
      value = made
      let child = Pod(parent: parent, overrides: [given.override(withValue: made)])
      _ = child
    }
    #expect(value == nil)
    #expect(parent.childCount == 0)
  }

  @Test("a child's observer, given at creation, hears of its first builds and not of its going")
  func observerOfLateChild() {
    let parent = Pod()
    let recorder = EventRecorder()
    let step = instanceProvider("step", scope: StepScope())
    let shared = instanceProvider("shared")
    do {
      let child = Pod(parent: parent, scopes: [StepScope()], observer: recorder)
      parent.clearCachedInstances(forScope: StepScope())
      #expect(recorder.take().allSatisfy { if case .overridden = $0 { true } else { false } })
      _ = child.resolve(step)
      _ = child.resolve(shared)
      #expect(recorder.take() == [.built(provider: "step", scope: "StepScope")])
      _ = child.resolve(step)
      #expect(recorder.take() == [.reused(provider: "step", scope: "StepScope")])
    }
    #expect(recorder.take() == [])
  }

  @Test("a parent's observer hears of what a late child built and cached in the parent")
  func parentObserverOfLateChild() {
    let recorder = EventRecorder()
    let parent = Pod(observer: recorder)
    let shared = instanceProvider("shared")
    let child = Pod(parent: parent, scopes: [StepScope()])
    #expect(recorder.take() == [])
    _ = child.resolve(shared)
    #expect(recorder.take() == [.built(provider: "shared", scope: "SingletonScope")])
    parent.clearCachedInstance(of: shared)
    #expect(
      recorder.take() == [
        .discarded(provider: "shared", scope: "SingletonScope", reason: .providerCleared)
      ])
  }

  @Test("a child made before an isolation of its root and first used inside joins the root")
  func childMadeBeforeIsolation() {
    let root = Pod()
    let shared = instanceProvider("shared")
    let reports = Shared<[String]>([])
    let early = Pod(parent: root, scopes: [StepScope()])
    let outside = root.resolve(shared)
    root.withIsolation(reportIssue: { message in reports.withLock { $0.append(message) } }) {
      testPod in
      #expect(early.resolve(shared) === outside)
      #expect(root.childCount == 1)
      let inside = Pod(parent: root, scopes: [StepScope()])
      #expect(inside.resolve(shared) !== outside)
      #expect(testPod.childCount == 1)
      #expect(root.childCount == 1)
    }
    #expect(reports.withLock { $0.count } == 1)
    #expect(root.invariantViolations == [])
  }

  @Test("requests that await their own shutdown on many tasks, while the app clears, leave none")
  func requestsShutDownOnTasks() async throws {
    let app = Pod()
    let live = LiveCount()
    let disposed = Counter()
    let shared = Provider(name: "shared") { _ in Tracked(live, serial: 0) }
    let handler = Provider(
      scope: StepScope(), name: "handler", onDiscard: { (_: Tracked) in disposed.next() }
    ) { context in Tracked(live, serial: 1, dependencies: [context.resolve(shared)]) }
    let built = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          for round in 0..<100 {
            let request = Pod(parent: app, scopes: [StepScope()])
            if (round + task) % 3 != 0 {
              _ = request.resolve(handler)
              built.next()
            }
            if task == 0, round.isMultiple(of: 10) {
              app.clearCachedInstances(forScope: FlowScope())
            }
            try await request.shutdown()
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(disposed.value == built.value)
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
    app.clearCachedInstance(of: shared)
    #expect(live.value == 0)
  }

  @Test("children first used on threads while their parent shuts down: built ones go once each")
  func firstUseRacesParentShutdown() async throws {
    for _ in 0..<20 {
      let root = Pod()
      let parent = Pod(parent: root, scopes: [FlowScope()])
      let live = LiveCount()
      let disposals = DisposalCounts()
      let session = AsyncProvider(
        scope: StepScope(), name: "session", onDiscard: { disposals.record($0) }
      ) { _ in Tracked(live, serial: 0) }
      let children = Shared<[Pod]>(
        (0..<16).map { _ in Pod(parent: parent, scopes: [StepScope()]) })
      let records = WeakList()
      for child in children.withLock({ $0 }) { records.add(child.engine.pod) }
      let results = Shared<(built: Int, refused: Int)>((0, 0))
      try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<16 {
          group.addTask {
            let child = children.withLock { $0[index] }
            do {
              _ = try await child.resolve(session)
              results.withLock { $0.built += 1 }
            } catch is ResolveAfterShutdownError {
              results.withLock { $0.refused += 1 }
            }
          }
        }
        group.addTask { try await parent.shutdown() }
        try await group.waitForAll()
      }
      children.withLock { $0 = [] }
      let (built, refused) = results.withLock { $0 }
      #expect(built + refused == 16)
      #expect(disposals.duplicates == 0)
      // The recorder keeps every instance a hook was handed (those cached before the shutdown
      // reached their pod); every other one is freed once its build has ended, and an async
      // build's task lets go of its result only as it ends, after its caller has resumed.
      #expect(
        await eventually { live.value == disposals.distinct },
        "\(live.value) alive, \(disposals.distinct) disposed; \(built) built, \(refused) refused")
      #expect(await eventually { records.liveCount == 0 })
      #expect(root.childCount == 0)
      #expect(root.invariantViolations == [])
    }
  }

  @Test("a child never used, shut down after its parent was, waits for nothing and leaves none")
  func unusedChildShutDownAfterParent() async throws {
    let root = Pod()
    weak var record: PodRecord?
    do {
      let parent = Pod(parent: root, scopes: [FlowScope()])
      let child = Pod(parent: parent, scopes: [StepScope()])
      record = child.engine.pod
      try await parent.shutdown()
      try await child.shutdown()
      try await child.shutdown()
      #expect(parent.childCount == 0)
      #expect(child.dependencyGraph() == parent.dependencyGraph())
    }
    #expect(record == nil)
    #expect(root.childCount == 0)
    #expect(root.invariantViolations == [])
  }

  @Test("a child made and used inside a builder of its parent, and gone before it returns")
  func childInsideParentsBuilder() {
    let holder = PodHolder()
    holder.pod = Pod()
    let step = instanceProvider("step", scope: StepScope())
    let shared = instanceProvider("shared")
    let records = WeakList()
    let summary = Provider(name: "summary") { context in
      let request = Pod(parent: holder.pod, scopes: [StepScope()])
      records.add(request.engine.pod)
      // Nested in this build: what the child's instance was built from is recorded here too.
      let made = request.resolve(step)
      return Instance("summary", serial: 0, dependencies: [made, context.resolve(shared)])
    }
    let app = holder.pod!
    _ = app.resolve(summary)
    #expect(records.liveCount == 0)
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
    app.clearCachedInstance(of: shared)
    #expect(app.resolve(summary).dependencies.count == 2)
    #expect(app.invariantViolations == [])
  }

  @Test("a sequence of a child's instances made after its parent's shutdown ends at once")
  func sequenceMadeAfterParentShutdown() async throws {
    let session = instanceProvider("session", scope: FlowScope())
    let parent = Pod()
    let child = Pod(parent: parent, scopes: [FlowScope()])
    try await parent.shutdown()
    var instances = child.instances(of: session).makeAsyncIterator()
    #expect(await instances.next() == nil)
    #expect(parent.childCount == 0)
  }

  @Test("a sequence of a late child's instances sees its parent's overrides from the start")
  func sequenceOfLateChildSeesParentOverrides() async {
    let parent = Pod()
    let config = instanceProvider("config")
    let child = Pod(parent: parent, scopes: [StepScope()])
    parent.overrideProvider(config) { _ in Instance("first", serial: 0) }
    var instances = child.instances(of: config).makeAsyncIterator()
    #expect(await instances.next()?.label == "first")
    parent.overrideProvider(config) { _ in Instance("second", serial: 0) }
    #expect(await instances.next()?.label == "second")
  }

  @Test("family members a child owned go with it, while the parent clears the family")
  func familyMembersOfGoneChild() {
    let parent = Pod()
    let log = DisposalLog()
    let item = ProviderFamily<Int, Instance>(
      scope: StepScope(), name: "item", onDiscard: log.record
    ) { _, index in Instance("item", serial: index) }
    do {
      let children = (0..<3).map { _ in Pod(parent: parent, scopes: [StepScope()]) }
      for (offset, child) in children.enumerated() {
        for index in 0..<3 { _ = child.resolve(item(offset * 10 + index)) }
      }
      parent.clearCachedInstances(of: item)
      #expect(log.take() == [])
      children[1].clearCachedInstances(of: item)
      #expect(log.take().sorted() == ["item#10", "item#11", "item#12"])
    }
    #expect(log.take().count == 6)
    parent.clearCachedInstances(of: item)
    #expect(parent.childCount == 0)
    #expect(parent.invariantViolations == [])
  }
}
