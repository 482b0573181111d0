import ProviderPod
import Testing

private protocol Client: Sendable { var name: String { get } }
private struct LiveClient: Client { let name = "live" }
private struct FakeClient: Client { let name: String }

private let clientProvider = Provider<any Client>(name: "clientProvider") { _ in LiveClient() }
private let apiProvider = Provider(name: "apiProvider") { pod in
  "api(\(pod.resolve(clientProvider).name))"
}

@Suite("Overrides")
struct OverrideTests {
  @Test("an override replaces the builder for direct and nested resolves")
  func directAndNested() {
    let pod = Pod()
    pod.overrideProvider(clientProvider) { _ in FakeClient(name: "fake") }
    #expect(pod.resolve(clientProvider).name == "fake")
    #expect(pod.resolve(apiProvider) == "api(fake)")
  }

  @Test("Pod(overrides:) installs overrides, builder and value alike")
  func initialOverrides() {
    let pod = Pod(overrides: [
      clientProvider.override { _ in FakeClient(name: "built") },
      apiProvider.override(withValue: "fixed"),
    ])
    #expect(pod.resolve(clientProvider).name == "built")
    #expect(pod.resolve(apiProvider) == "fixed")
  }

  @Test("the later of two initial overrides of one provider wins")
  func laterInitialOverrideWins() {
    let pod = Pod(overrides: [
      clientProvider.override(withValue: FakeClient(name: "first")),
      clientProvider.override(withValue: FakeClient(name: "second")),
    ])
    #expect(pod.resolve(clientProvider).name == "second")
  }

  @Test("an override added after the original was cached takes effect at once")
  func overrideAfterCaching() {
    let pod = Pod()
    #expect(pod.resolve(apiProvider) == "api(live)")
    pod.overrideProvider(clientProvider, withValue: FakeClient(name: "late"))
    #expect(pod.resolve(apiProvider) == "api(late)")
  }

  @Test("removing an override brings back a fresh original, never the orphaned one")
  func removalDoesNotResurrect() {
    let counter = Counter()
    let provider = instanceProvider("original", counter: counter)
    let pod = Pod()
    let original1 = pod.resolve(provider)
    pod.overrideProvider(provider) { _ in Instance("override", serial: 0) }
    #expect(pod.resolve(provider).label == "override")
    pod.removeOverrideProvider(provider)
    let original2 = pod.resolve(provider)
    #expect(original2.label == "original")
    #expect(original2 !== original1)
    #expect(counter.value == 2)
  }

  @Test("replacing an override discards the previous override's instance")
  func replaceOverride() {
    let provider = instanceProvider("original")
    let pod = Pod()
    pod.overrideProvider(provider) { _ in Instance("first", serial: 1) }
    #expect(pod.resolve(provider).label == "first")
    pod.overrideProvider(provider) { _ in Instance("second", serial: 2) }
    #expect(pod.resolve(provider).label == "second")
  }

  @Test("removing an override that does not exist changes nothing")
  func removeMissingOverride() {
    let provider = instanceProvider("kept")
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let kept = pod.resolve(provider)
    _ = recorder.take()
    pod.removeOverrideProvider(provider)
    #expect(recorder.take().isEmpty)
    #expect(pod.resolve(provider) === kept)
  }

  @Test("an override uses the provider's scope unless it names its own")
  func overrideScope() {
    let provider = instanceProvider("scoped", scope: StepScope())
    let pod = Pod()
    let counter = Counter()
    pod.overrideProvider(provider) { _ in Instance("inherits", serial: counter.next()) }
    let first = pod.resolve(provider)
    #expect(pod.resolve(provider) === first)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(provider) !== first)

    pod.overrideProvider(provider, scope: AlwaysCreateNewScope()) { _ in
      Instance("fresh", serial: counter.next())
    }
    #expect(pod.resolve(provider) !== pod.resolve(provider))

    pod.overrideProvider(provider, scope: UnrelatedScope()) { _ in
      Instance("own", serial: counter.next())
    }
    let own = pod.resolve(provider)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(provider) === own)
    pod.clearCachedInstances(forScope: UnrelatedScope())
    #expect(pod.resolve(provider) !== own)
  }

  @Test("a value override is cached in the provider's scope and discards dependents on clear")
  func valueOverrideScope() {
    let scoped = instanceProvider("scoped", scope: StepScope())
    let dependent = instanceProvider("dependent", dependencies: [scoped])
    let value = Instance("value", serial: 0)
    let pod = Pod(overrides: [scoped.override(withValue: value)])
    let dependent1 = pod.resolve(dependent)
    #expect(dependent1.dependencies[0] === value)
    pod.clearCachedInstances(forScope: StepScope())
    let dependent2 = pod.resolve(dependent)
    #expect(dependent2 !== dependent1)
    #expect(dependent2.dependencies[0] === value)
  }

  @Test("overrides and instances are per pod")
  func twoPodsSideBySide() {
    let provider = instanceProvider("shared")
    let live = Pod()
    let test = Pod(overrides: [provider.override { _ in Instance("test", serial: 0) }])
    #expect(live.resolve(provider).label == "shared")
    #expect(test.resolve(provider).label == "test")
    live.overrideProvider(provider) { _ in Instance("liveOverride", serial: 0) }
    #expect(test.resolve(provider).label == "test")
    test.removeOverrideProvider(provider)
    #expect(live.resolve(provider).label == "liveOverride")
    #expect(test.resolve(provider).label == "shared")
  }

  @Test("a builder may install an override")
  func overrideInsideBuilder() {
    let target = instanceProvider("target")
    let installer = Provider(name: "installer") { pod in
      pod.overrideProvider(target) { _ in Instance("installed", serial: 0) }
      return 1
    }
    let pod = Pod()
    #expect(pod.resolve(installer) == 1)
    #expect(pod.resolve(target).label == "installed")
  }

  @Test("a builder that overrides what it just resolved is not cached with the stale value")
  func overrideOwnDependencyInsideBuilder() {
    let dependency = instanceProvider("dependency")
    let counter = Counter()
    let builder = Provider(name: "builder") { pod in
      let before = pod.resolve(dependency)
      if counter.next() == 1 {
        pod.overrideProvider(dependency) { _ in Instance("replaced", serial: 0) }
      }
      return before.label
    }
    let pod = Pod()
    #expect(pod.resolve(builder) == "dependency")
    // The first result was built from an instance discarded during the build: rebuilt.
    #expect(pod.resolve(builder) == "replaced")
    #expect(pod.resolve(builder) == "replaced")
    #expect(counter.value == 2)
  }
}
