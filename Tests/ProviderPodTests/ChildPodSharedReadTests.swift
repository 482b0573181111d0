import Testing

@testable import ProviderPod

// A builder running in a child pod reads the parent's instances where they are: the child
// keeps no shortcut to them. Whatever it built from them must still follow every change to
// them, and the child must never hold one the parent has let go of.

@Suite("A child's builds reading the parent's instances")
struct ChildPodSharedReadTests {
  @Test(
    "what a child built from the parent's instance goes with it, and the child keeps none of it")
  func parentClearReachesChildBuild() {
    let app = Pod()
    let config = instanceProvider("config", scope: FlowScope())
    let handler = instanceProvider("handler", scope: StepScope(), dependencies: [config])
    let child = Pod(parent: app, scopes: [StepScope()])

    weak var oldConfig: Instance?
    weak var oldHandler: Instance?
    var firstSerial = 0
    do {
      let first = child.resolve(handler)
      #expect(first.dependencies[0] === app.resolve(config))
      #expect(child.resolve(handler) === first)
      oldConfig = first.dependencies[0]
      oldHandler = first
      firstSerial = first.dependencies[0].serial
    }
    #expect(app.invariantViolations == [])

    // StepScope is FlowScope's child, and the child pod does not own FlowScope: clearing it in
    // the parent reaches the child's handler through what it was built from.
    app.clearCachedInstances(forScope: FlowScope())
    #expect(oldConfig == nil)
    #expect(oldHandler == nil)
    let second = child.resolve(handler)
    #expect(second.dependencies[0] === app.resolve(config))
    #expect(second.dependencies[0].serial == firstSerial + 1)
    #expect(app.invariantViolations == [])
  }

  @Test("a child's builds read the parent's instance as often as they run, and share it")
  func repeatedBuildsShareOneInstance() {
    let app = Pod()
    let counter = Counter()
    let service = instanceProvider("service", counter: counter)
    let model = instanceProvider(
      "model", scope: AlwaysCreateNewScope(), dependencies: [service, service])
    let child = Pod(parent: app, scopes: [StepScope()])
    let models = (0..<50).map { _ in child.resolve(model) }
    let shared = app.resolve(service)
    #expect(models.allSatisfy { $0.dependencies.allSatisfy { $0 === shared } })
    #expect(counter.value == 1)
    // A resolve through the child itself finds the same instance.
    #expect(child.resolve(service) === shared)
    #expect(app.invariantViolations == [])
  }

  @Test("an override in the child replaces the parent's instance its builds had read")
  func childOverrideAfterSharedRead() {
    let app = Pod()
    let config = instanceProvider("config")
    let handler = instanceProvider("handler", scope: StepScope(), dependencies: [config])
    let child = Pod(parent: app, scopes: [StepScope()])
    let first = child.resolve(handler)
    #expect(first.dependencies[0] === app.resolve(config))

    child.overrideProvider(config) { _ in Instance("fake config", serial: 0) }
    let second = child.resolve(handler)
    #expect(second !== first)
    #expect(second.dependencies[0].label == "fake config")
    // The parent and its instance are untouched.
    #expect(app.resolve(config) === first.dependencies[0])
    #expect(app.invariantViolations == [])
  }

  @Test("a weak instance of the parent's that went away is built again for a child's build")
  func parentWeakInstanceGoneBeforeChildBuild() {
    let app = Pod()
    let counter = Counter()
    let session = instanceProvider("session", scope: WeakScope(), counter: counter)
    let model = instanceProvider("model", scope: AlwaysCreateNewScope(), dependencies: [session])
    let child = Pod(parent: app, scopes: [StepScope()])

    weak var firstSession: Instance?
    var firstSerial = 0
    do {
      let held = app.resolve(session)
      firstSession = held
      firstSerial = held.serial
      #expect(child.resolve(model).dependencies[0] === held)
    }
    #expect(firstSession == nil)
    let again = child.resolve(model)
    #expect(again.dependencies[0].serial == firstSerial + 1)
    #expect(counter.value == 2)
    #expect(app.invariantViolations == [])
  }

  @Test("a builder 2,000 pods deep finds the root's override, on a thread with a small stack")
  func deeplyNestedChildFindsRootOverride() {
    let config = Provider { _ in "the provider's own" }
    let reader = Provider(scope: AlwaysCreateNewScope()) { context in context.resolve(config) }
    let result = Shared<String?>(nil)
    // The chain is made and released on a thread with room for releasing it (each pod
    // releases its parent as it goes); only the resolve runs on the small stack.
    runUntilThreadEnds(stackSize: 64 << 20) {
      let root = Pod(overrides: [config.override { _ in "the root's override" }])
      var deepest = root
      for _ in 0..<2_000 { deepest = Pod(parent: deepest) }
      let pod = deepest
      runUntilThreadEnds(stackSize: 64 << 10) {
        result.withLock { $0 = pod.resolve(reader) }
      }
    }
    #expect(result.withLock { $0 } == "the root's override")
  }

  @Test("the parent reports reusing its instance for a child's build")
  func parentReportsReuse() {
    let recorder = EventRecorder()
    let app = Pod(observer: recorder)
    let config = instanceProvider("config")
    let handler = instanceProvider("handler", scope: StepScope(), dependencies: [config])
    _ = app.resolve(config)
    _ = recorder.take()
    let child = Pod(parent: app, scopes: [StepScope()])
    _ = child.resolve(handler)
    #expect(recorder.take().contains(.reused(provider: "config", scope: "SingletonScope")))
  }
}
