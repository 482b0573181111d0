import ProviderPod
import Testing

// Every way to write a provider or an override of a Sendable value, now that a value that is
// not Sendable has initializers and overrides of its own: each must still compile, with no
// ambiguity, and mean what it meant. This file compiling is half of the test.

private final class Service: Sendable {
  let origin: String
  init(origin: String = "built") { self.origin = origin }
}

private func makeService(_: BuildContext) -> Service { Service(origin: "function") }

private func isSingleton(_ scope: any ProviderScope) -> Bool { scope is SingletonScope }
private func isAlwaysNew(_ scope: any ProviderScope) -> Bool { scope is AlwaysCreateNewScope }

/// A cached provider made in generic code that knows only that its value is Sendable.
private func cachedProvider<Value: Sendable>(
  _ make: @escaping @Sendable () -> Value
) -> Provider<Value> {
  Provider { _ in make() }
}

/// An always-new provider made in generic code, for any value.
private func alwaysNewProvider<Value>(
  _ make: @escaping @Sendable () -> Value
) -> Provider<Value> {
  Provider(scope: AlwaysCreateNewScope()) { _ in make() }
}

@Suite("Provider spellings")
struct ProviderSpellingTests {
  @Test("initializers of Sendable values keep their scope, name and hook")
  func initializers() {
    let discarded = Counter()
    let anyScope: any ProviderScope = AlwaysCreateNewScope()
    let plain = Provider { _ in Service() }
    let named = Provider(name: "named") { _ in Service() }
    let singleton = Provider(scope: SingletonScope()) { _ in Service() }
    let scoped = Provider(scope: StepScope(), onDiscard: { _ in discarded.next() }) { _ in
      Service()
    }
    let alwaysNew = Provider(scope: AlwaysCreateNewScope()) { _ in Service() }
    let alwaysNewNamed = Provider(scope: AlwaysCreateNewScope(), name: "alwaysNewNamed") { _ in
      Service()
    }
    let alwaysNewWithHook = Provider(
      scope: AlwaysCreateNewScope(), name: "hooked", onDiscard: { _ in discarded.next() }
    ) { _ in Service() }
    let throughExistential = Provider(scope: anyScope) { _ in Service() }
    let annotated: Provider<Service> = Provider(scope: AlwaysCreateNewScope()) { _ in .init() }
    let explicit = Provider<Service>(scope: AlwaysCreateNewScope()) { _ in .init() }
    let fromFunction = Provider(scope: AlwaysCreateNewScope(), makeService)
    let notTrailing = Provider(scope: AlwaysCreateNewScope(), name: "notTrailing", { _ in 1 })
    let genericCached = cachedProvider { Service() }
    let genericAlwaysNew = alwaysNewProvider { Service() }
    let unimplemented = Provider<Service>.unimplemented(scope: AlwaysCreateNewScope())

    #expect(isSingleton(plain.scope) && isSingleton(named.scope) && isSingleton(singleton.scope))
    #expect(named.name == "named")
    #expect(scoped.scope is StepScope)
    for scope in [
      alwaysNew.scope, alwaysNewNamed.scope, alwaysNewWithHook.scope, throughExistential.scope,
      annotated.scope, explicit.scope, fromFunction.scope, notTrailing.scope,
      genericAlwaysNew.scope, unimplemented.scope,
    ] {
      #expect(isAlwaysNew(scope))
    }
    #expect(isSingleton(genericCached.scope))
    #expect(alwaysNewNamed.name == "alwaysNewNamed")
    #expect(alwaysNewWithHook.name == "hooked")
    #expect(notTrailing.name == "notTrailing")

    let pod = Pod()
    #expect(pod.resolve(plain) === pod.resolve(plain))
    #expect(pod.resolve(genericCached) === pod.resolve(genericCached))
    #expect(pod.resolve(alwaysNew) !== pod.resolve(alwaysNew))
    #expect(pod.resolve(genericAlwaysNew) !== pod.resolve(genericAlwaysNew))
    #expect(pod.resolve(fromFunction).origin == "function")
    #expect(pod.resolve(notTrailing) == 1)
    _ = pod.resolve(scoped)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(discarded.value == 1)
    // An always-new Sendable provider overridden into a caching scope keeps its hook.
    pod.overrideProvider(alwaysNewWithHook, scope: StepScope()) { _ in Service() }
    _ = pod.resolve(alwaysNewWithHook)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(discarded.value == 2)
  }

  @Test("overrides of Sendable values keep their scope or take the one named")
  func overrides() {
    let provider = Provider { _ in Service() }
    let scopes = [
      provider.override { _ in Service(origin: "trailing") },
      provider.override(scope: nil) { _ in Service() },
      provider.override(with: makeService),
    ]
    for override in scopes {
      let pod = Pod(overrides: [override])
      #expect(pod.resolve(provider) === pod.resolve(provider))  // the provider's scope
    }
    let alwaysNew = Pod(overrides: [
      provider.override(scope: AlwaysCreateNewScope()) { _ in Service() }
    ])
    #expect(alwaysNew.resolve(provider) !== alwaysNew.resolve(provider))
    let given = Service(origin: "given")
    let valued = Pod(overrides: [provider.override(withValue: given)])
    #expect(valued.resolve(provider) === given)

    let pod = Pod()
    pod.overrideProvider(provider) { _ in Service(origin: "pod") }
    #expect(pod.resolve(provider) === pod.resolve(provider))
    pod.overrideProvider(provider, scope: nil) { _ in Service() }
    #expect(pod.resolve(provider) === pod.resolve(provider))
    pod.overrideProvider(provider, with: makeService)
    #expect(pod.resolve(provider).origin == "function")
    pod.overrideProvider(provider, scope: AlwaysCreateNewScope()) { _ in Service() }
    #expect(pod.resolve(provider) !== pod.resolve(provider))
    pod.overrideProvider(provider, withValue: given)
    #expect(pod.resolve(provider) === given)
  }

  @Test("overrides compile the same on the main actor and in an actor")
  @MainActor
  func overridesInIsolation() async {
    actor Installer {
      func install(_ provider: Provider<Service>, in pod: Pod) {
        pod.overrideProvider(provider) { _ in Service(origin: "actor") }
        pod.overrideProvider(provider, scope: SingletonScope()) { _ in Service(origin: "actor") }
      }
    }
    let provider = Provider { _ in Service() }
    let pod = Pod()
    pod.overrideProvider(provider) { _ in Service(origin: "main") }
    #expect(pod.resolve(provider).origin == "main")
    await Installer().install(provider, in: pod)
    #expect(pod.resolve(provider).origin == "actor")
  }

  @Test("a builder's overrides of Sendable values")
  func contextOverrides() {
    let provider = Provider { _ in Service() }
    let given = Service(origin: "given")
    let installer = Provider(scope: AlwaysCreateNewScope()) { pod in
      pod.overrideProvider(provider) { _ in Service(origin: "context") }
      pod.overrideProvider(provider, scope: nil) { _ in Service(origin: "context") }
      pod.overrideProvider(provider, with: makeService)
      pod.overrideProvider(provider, scope: AlwaysCreateNewScope()) { _ in Service() }
      pod.overrideProvider(provider, withValue: given)
      return true
    }
    let pod = Pod()
    #expect(pod.resolve(installer))
    #expect(pod.resolve(provider) === given)
  }

  @Test("families and throwing providers of Sendable values, every spelling")
  func familiesAndThrowing() throws {
    let discarded = Counter()
    let family = ProviderFamily { (_, id: Int) in Service(origin: "\(id)") }
    let alwaysNewFamily = ProviderFamily(scope: AlwaysCreateNewScope()) { (_, id: Int) in
      Service(origin: "\(id)")
    }
    let hookedFamily = ProviderFamily(
      scope: AlwaysCreateNewScope(), name: "hookedFamily", onDiscard: { _ in discarded.next() }
    ) { (_, id: Int) in Service(origin: "\(id)") }
    let throwing = ThrowingProvider { _ in Service() }
    let alwaysNewThrowing = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in Service() }
    let hookedThrowing = ThrowingProvider(
      scope: AlwaysCreateNewScope(), onDiscard: { _ in discarded.next() }
    ) { _ in Service() }
    #expect(isSingleton(family.scope) && isSingleton(throwing.scope))
    #expect(isAlwaysNew(alwaysNewFamily.scope) && isAlwaysNew(hookedFamily.scope))
    #expect(isAlwaysNew(alwaysNewThrowing.scope) && isAlwaysNew(hookedThrowing.scope))
    #expect(hookedFamily.name == "hookedFamily")

    let given = Service(origin: "given")
    let pod = Pod(overrides: [
      family.override { _, id in Service(origin: "override \(id)") },
      alwaysNewFamily.override(scope: SingletonScope()) { _, id in Service(origin: "\(id)") },
      throwing.override { _ in Service(origin: "throwing override") },
      alwaysNewThrowing.override(withValue: given),
      hookedThrowing.override(scope: StepScope()) { _ in Service() },
    ])
    #expect(pod.resolve(family(1)) === pod.resolve(family(1)))
    #expect(pod.resolve(family(1)).origin == "override 1")
    #expect(pod.resolve(alwaysNewFamily(2)) === pod.resolve(alwaysNewFamily(2)))
    #expect(try pod.resolve(throwing) === pod.resolve(throwing))
    #expect(try pod.resolve(alwaysNewThrowing) === given)
    _ = try pod.resolve(hookedThrowing)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(discarded.value == 1)

    pod.overrideProvider(family) { _, id in Service(origin: "pod \(id)") }
    pod.overrideProvider(family, scope: AlwaysCreateNewScope()) { _, id in Service() }
    #expect(pod.resolve(family(3)) !== pod.resolve(family(3)))
    pod.overrideProvider(throwing) { _ in Service(origin: "pod") }
    pod.overrideProvider(throwing, scope: nil) { _ in Service(origin: "pod") }
    pod.overrideProvider(throwing, withValue: given)
    #expect(try pod.resolve(throwing) === given)
  }
}
