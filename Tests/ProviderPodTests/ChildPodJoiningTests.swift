import Dispatch
import Testing

@testable import ProviderPod

// A child pod is listed among its parent's children at its first use, not when it is made:
// until then it holds nothing its parent's clears, overrides and shutdowns could reach, and one
// let go of unused leaves without taking the tree's lock. Whenever it joins, it must behave as
// if it had been listed all along.

@Suite("Child pods joining their tree at first use")
struct ChildPodJoiningTests {
  @Test("a child is listed in its parent from its first resolve on, and gone after it")
  func listedFromFirstUse() {
    let parent = Pod()
    let handler = instanceProvider("handler", scope: StepScope())
    do {
      let unused = Pod(parent: parent, scopes: [StepScope()])
      let used = Pod(parent: parent, scopes: [StepScope()])
      #expect(parent.childCount == 0)
      #expect(!unused.hasJoinedTree)
      _ = used.resolve(handler)
      #expect(parent.childCount == 1)
      #expect(used.hasJoinedTree)
      #expect(!unused.hasJoinedTree)
      #expect(parent.invariantViolations == [])
    }
    #expect(parent.childCount == 0)
    #expect(parent.invariantViolations == [])
  }

  @Test("children made and let go of unused around a parent's clear and override change nothing")
  func unusedChildrenAroundChanges() {
    let parent = Pod()
    let log = DisposalLog()
    let config = Provider(name: "config", onDiscard: log.record) { _ in
      Instance("config", serial: 0)
    }
    _ = parent.resolve(config)
    var children = (0..<3).map { _ in Pod(parent: parent, scopes: [StepScope()]) }
    parent.clearCachedInstance(of: config)
    #expect(log.take() == ["config#0"])
    parent.overrideProvider(config) { _ in Instance("config", serial: 1) }
    children.removeLast()
    #expect(parent.childCount == 0)
    // A child made before the override sees it at its first resolve.
    #expect(children[0].resolve(config).serial == 1)
    #expect(parent.childCount == 1)
    children = []
    #expect(parent.childCount == 0)
    #expect(parent.invariantViolations == [])
    #expect(log.take() == [])
  }

  @Test(
    "a grandchild's first resolve lists its unused parent too, and the root's discards reach it")
  func grandchildJoinsItsParent() {
    let root = Pod()
    let log = DisposalLog()
    let config = instanceProvider("config")
    let step = Provider(scope: StepScope(), name: "step", onDiscard: log.record) { context in
      Instance("step", serial: 0, dependencies: [context.resolve(config)])
    }
    do {
      let window = Pod(parent: root, scopes: [FlowScope()])
      let page = Pod(parent: window, scopes: [StepScope()])
      let first = page.resolve(step)
      #expect(root.childCount == 1)
      #expect(window.childCount == 1)
      #expect(first.dependencies[0] === root.resolve(config))
      #expect(root.invariantViolations == [])
      // The root's clear reaches what the grandchild built from its instance.
      root.clearCachedInstance(of: config)
      #expect(log.take() == ["step#0"])
      #expect(page.resolve(step) !== first)
    }
    #expect(log.take() == ["step#0"])
    #expect(root.childCount == 0)
    #expect(root.invariantViolations == [])
  }

  @Test(
    "a pod the app let go of before using it lives on through its child, joins with the child's first use, and leaves with it"
  )
  func unusedParentKeptByItsChild() {
    let root = Pod()
    let log = DisposalLog()
    let step = Provider(scope: StepScope(), name: "step", onDiscard: log.record) { _ in
      Instance("step", serial: 0)
    }
    do {
      var window: Pod? = Pod(parent: root, scopes: [StepScope()])
      let page = Pod(parent: window!)
      window = nil
      #expect(root.childCount == 0)
      // The page keeps its parent: the window's pod owns the scope, so the instance is the
      // window's, and the window is listed where the root's changes find it.
      _ = page.resolve(step)
      #expect(root.childCount == 1)
      #expect(page.parent?.childCount == 1)
      #expect(root.invariantViolations == [])
      #expect(log.take() == [])
    }
    #expect(root.childCount == 0)
    #expect(log.take() == ["step#0"])
    #expect(root.invariantViolations == [])
  }

  @Test("a child made before its parent's shutdown and first used after it stops the program")
  func firstUseAfterParentShutdownStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let session = Provider(scope: FlowScope(), name: "session") { _ in Resource("session") }
      let pod = Pod()
      let child = Pod(parent: pod, scopes: [FlowScope()])
      try? await pod.shutdown()
      _ = child.resolve(session)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("ProviderPod: session was resolved through a pod that was shut down"))
  }

  @Test("a grandchild whose parent was never used, first used after the root's shutdown, stops")
  func grandchildFirstUseAfterRootShutdownStops() async {
    await #expect(processExitsWith: .failure) {
      let always = Provider(scope: AlwaysCreateNewScope(), name: "always") { _ in 1 }
      let pod = Pod()
      let child = Pod(parent: pod)
      let grandchild = Pod(parent: child)
      try? await pod.shutdown()
      _ = grandchild.resolve(always)
    }
  }

  @Test("an async resolve through a child first used after its parent's shutdown throws")
  func asyncFirstUseAfterParentShutdownThrows() async throws {
    let database = AsyncProvider(name: "database") { _ in Resource("database") }
    let pod = Pod()
    let child = Pod(parent: pod, scopes: [FlowScope()])
    try await pod.shutdown()
    do {
      _ = try await child.resolve(database)
      Issue.record("resolved through a child of a shut-down pod")
    } catch let error as ResolveAfterShutdownError {
      #expect(error.provider == "database")
    }
    // Its own shutdown, after its parent's, finds that one and throws nothing.
    try await child.shutdown()
    #expect(pod.childCount == 0)
  }

  @Test("a sequence of an unused child's instances, first iterated after the child is gone, ends")
  func sequenceOutlivesUnusedChild() async {
    let session = instanceProvider("session", scope: FlowScope())
    let parent = Pod()
    var child: Pod? = Pod(parent: parent, scopes: [FlowScope()])
    let instances = child!.instances(of: session)
    child = nil
    var late = instances.makeAsyncIterator()
    #expect(await late.next() == nil)
    #expect(parent.childCount == 0)
    #expect(parent.invariantViolations == [])
  }

  @Test("request pods made, used or not, and let go of on several threads while the app changes")
  func requestPodsOnSeveralThreads() {
    let app = Pod()
    let built = Counter()
    let disposed = Counter()
    let repository = instanceProvider("repository")
    let mailer = instanceProvider("mailer")
    let config = instanceProvider("config")
    let handler = Provider(
      scope: StepScope(), name: "handler", onDiscard: { (_: Instance) in disposed.next() }
    ) { context in
      Instance(
        "handler", serial: built.next(),
        dependencies: [context.resolve(repository), context.resolve(mailer)])
    }
    DispatchQueue.concurrentPerform(iterations: 4) { worker in
      for round in 0..<400 {
        // The app's changes walk its children while they join and leave; none reaches what
        // a request built (a clear of a scope the requests own, an override of a provider
        // they do not use), so every handler cached is discarded once, by its pod's going.
        if worker == 0 {
          switch round % 3 {
          case 0: app.clearCachedInstances(forScope: StepScope())
          case 1: app.overrideProvider(config) { _ in Instance("config", serial: -1) }
          default: app.removeOverrideProvider(config)
          }
          continue
        }
        let request = Pod(parent: app, scopes: [StepScope()])
        guard (round + worker).isMultiple(of: 2) else { continue }
        let made = request.resolve(handler)
        #expect(made.dependencies.count == 2)
      }
    }
    #expect(built.value == 3 * 200)
    #expect(disposed.value == built.value)
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
  }
}
