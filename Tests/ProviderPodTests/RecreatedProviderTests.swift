import Testing

@testable import ProviderPod

// The Factory habit this suite is about: providers declared as computed properties, so that
// every access makes a new provider, a new dependency with a cache of its own.
private let computedBuilds = Counter()
private let countedBuilds = Counter()
private enum Computed {
  // Where `service` makes its provider: the line, and the column of the call's arguments.
  static let line = #line + 3
  static let site = "\(fileName()):\(line):13"
  static var service: Provider<Instance> {
    Provider(name: "service") { _ in Instance("service", serial: computedBuilds.next()) }
  }
  static var counted: Provider<Instance> {
    Provider(name: "counted") { _ in Instance("counted", serial: countedBuilds.next()) }
  }
  static var unnamed: Provider<Instance> {
    Provider { _ in Instance("unnamed", serial: computedBuilds.next()) }
  }
  static var weakService: Provider<Instance> {
    Provider(scope: WeakScope(), name: "weakService") { _ in Instance("weak", serial: 0) }
  }
  static var newEachTime: Provider<Instance> {
    Provider(scope: AlwaysCreateNewScope(), name: "newEachTime") { _ in
      Instance("new", serial: computedBuilds.next())
    }
  }
  static var asyncService: AsyncProvider<Instance> {
    AsyncProvider(name: "asyncService") { _ in Instance("async", serial: computedBuilds.next()) }
  }
  static var users: ProviderFamily<Int, Instance> {
    ProviderFamily(name: "users") { _, id in Instance("user\(id)", serial: computedBuilds.next()) }
  }
  @MainActor static var screen: MainActorProvider<Instance> {
    MainActorProvider(name: "screen") { _ in Instance("screen", serial: 0) }
  }
}

/// The provider declared the right way.
private let letService = Provider(name: "letService") { _ in
  Instance("letService", serial: computedBuilds.next())
}

/// A function that makes providers on purpose: every one is declared at the same place, with
/// the same default name.
private func makeCounterProvider() -> Provider<Instance> {
  Provider { _ in Instance("counter", serial: computedBuilds.next()) }
}

/// An argument whose every value describes itself the same way, so that members of one family
/// share their name too.
private struct Opaque: Hashable, Sendable, CustomStringConvertible {
  let raw: Int
  var description: String { "opaque" }
}

private let opaqueMembers = ProviderFamily(scope: StepScope(), name: "opaque") {
  (_, id: Opaque) in Instance("opaque\(id.raw)", serial: computedBuilds.next())
}

private func isRecreation(_ event: PodEvent) -> Bool {
  if case .providerRecreated = event { return true }
  return false
}

@Suite("A provider made again: declared as a computed property")
struct RecreatedProviderTests {
  @Test("a computed provider resolved twice on an observed pod is reported, with its place")
  func computedPropertyReported() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let first = pod.resolve(Computed.service)
    let second = pod.resolve(Computed.service)
    #expect(first !== second)  // the mistake: nothing is reused
    #expect(
      recorder.take() == [
        .built(provider: "service", scope: "SingletonScope"),
        .built(provider: "service", scope: "SingletonScope"),
        .providerRecreated(
          provider: "service", declaration: Computed.site),
      ])
    _ = pod.resolve(Computed.service)
    #expect(recorder.take().filter(isRecreation).count == 1)  // each new one, once
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("an unnamed computed provider is reported under its default name")
  func unnamedComputedProvider() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    _ = pod.resolve(Computed.unnamed)
    _ = pod.resolve(Computed.unnamed)
    let reports = recorder.events.filter(isRecreation)
    #expect(reports.count == 1)
    guard case .providerRecreated(let provider, let declaration) = reports.first else { return }
    #expect(provider == Computed.unnamed.name)
    #expect(provider.hasPrefix("Instance (\(fileName()):"))
    #expect(declaration.hasPrefix("\(fileName()):"))
  }

  @Test("a provider declared with let is reused and never reported")
  func letProviderNotReported() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let first = pod.resolve(letService)
    #expect(pod.resolve(letService) === first)
    let local = Provider(name: "local") { _ in Instance("local", serial: 0) }
    _ = pod.resolve(local)
    _ = pod.resolve(local)
    #expect(
      recorder.events == [
        .built(provider: "letService", scope: "SingletonScope"),
        .reused(provider: "letService", scope: "SingletonScope"),
        .built(provider: "local", scope: "SingletonScope"),
        .reused(provider: "local", scope: "SingletonScope"),
      ])
  }

  @Test("providers one function makes on purpose are not reported while they are kept")
  func factoryProvidersKept() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let kept = (0..<3).map { _ in makeCounterProvider() }
    #expect(Set(kept.map(\.name)).count == 1)  // one declaration, one default name
    let instances = kept.map { pod.resolve($0) }
    let again = kept.map { pod.resolve($0) }
    #expect(zip(again, instances).allSatisfy { $0 === $1 })
    #expect(!recorder.events.contains(where: isRecreation))
    // Made, used and dropped, then made again: the same mistake in a function's clothes.
    _ = pod.resolve(makeCounterProvider())
    #expect(!recorder.events.contains(where: isRecreation))  // the one before is still kept
    _ = pod.resolve(makeCounterProvider())
    #expect(recorder.events.filter(isRecreation).count == 1)
    withExtendedLifetime(kept) {}
  }

  @Test("a family's members never report each other, even with equal names")
  func familyMembersNotReported() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    for id in 0..<50 {
      // Each call makes a new `Provider` for the member: it is the family that is kept.
      _ = pod.resolve(opaqueMembers(Opaque(raw: id)))
      _ = pod.resolve(opaqueMembers(Opaque(raw: id)))
    }
    #expect(opaqueMembers(Opaque(raw: 1)).name == opaqueMembers(Opaque(raw: 2)).name)
    pod.overrideProvider(opaqueMembers) { _, id in Instance("fake\(id.raw)", serial: 0) }
    pod.overrideProvider(opaqueMembers(Opaque(raw: 3))) { _ in Instance("fake", serial: 0) }
    for id in 0..<5 { _ = pod.resolve(opaqueMembers(Opaque(raw: id))) }
    #expect(recorder.events.filter { if case .built = $0 { true } else { false } }.count == 55)
    #expect(!recorder.events.contains(where: isRecreation))
  }

  @Test("a family declared as a computed property is reported")
  func computedFamilyReported() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let first = pod.resolve(Computed.users(7))
    #expect(pod.resolve(Computed.users(7)) !== first)
    #expect(
      recorder.events.filter(isRecreation).map(\.description).map { $0.contains("users(7)") }
        == [true])
  }

  @Test("an override of a computed provider never applies, and the first resolve says so")
  func overrideOfComputedProvider() {
    let recorder = EventRecorder()
    let pod = Pod(
      overrides: [Computed.service.override { _ in Instance("fake", serial: 0) }],
      observer: recorder)
    #expect(pod.resolve(Computed.service).label == "service")  // not the fake
    #expect(
      recorder.events == [
        .overridden(provider: "service"),
        .built(provider: "service", scope: "SingletonScope"),
        .providerRecreated(provider: "service", declaration: Computed.site),
      ])
    let family = Pod(
      overrides: [Computed.users.override { _, id in Instance("fake\(id)", serial: 0) }],
      observer: recorder)
    #expect(family.resolve(Computed.users(1)).label == "user1")
    #expect(recorder.events.filter(isRecreation).count == 2)
  }

  @Test("always-new providers build every time anyway: only a lost override is reported")
  func alwaysNewComputedProvider() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    _ = pod.resolve(Computed.newEachTime)
    _ = pod.resolve(Computed.newEachTime)
    #expect(!recorder.events.contains(where: isRecreation))
    pod.overrideProvider(Computed.newEachTime) { _ in Instance("fake", serial: 0) }
    #expect(pod.resolve(Computed.newEachTime).label == "new")
    #expect(recorder.events.filter(isRecreation).count == 1)
  }

  @Test("a weak instance of a computed provider is reported while it lives")
  func weakScopeComputedProvider() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let held = pod.resolve(Computed.weakService)
    #expect(pod.resolve(Computed.weakService) !== held)
    #expect(recorder.events.filter(isRecreation).count == 1)
    withExtendedLifetime(held) {}
    _ = recorder.take()
    // Nothing holds the instances any more: a rebuild would have happened with `let` too.
    _ = pod.resolve(Computed.weakService)
    #expect(!recorder.take().contains(where: isRecreation))
  }

  @Test("async providers declared as computed properties are reported")
  func computedAsyncProvider() async throws {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    weak var firstProvider: AsyncProvider<Instance>?
    do {
      let provider = Computed.asyncService
      firstProvider = provider
      _ = try await pod.resolve(provider)
    }
    // The build's task lets go of its provider just after handing the value back.
    var yields = 0
    while firstProvider != nil, yields < 100_000 {
      await Task.yield()
      yields += 1
    }
    #expect(firstProvider == nil)
    _ = try await pod.resolve(Computed.asyncService)
    #expect(recorder.events.filter(isRecreation).map(\.description).count == 1)
  }

  @Test("main-actor providers declared as computed properties are reported")
  @MainActor
  func computedMainActorProvider() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    _ = pod.resolve(Computed.screen)
    _ = pod.resolve(Computed.screen)
    #expect(recorder.events.filter(isRecreation).count == 1)
  }

  @Test("an unobserved pod keeps nothing extra and behaves as before")
  func unobservedPod() {
    let pod = Pod()
    let first = pod.resolve(Computed.counted)
    let second = pod.resolve(Computed.counted)
    #expect(first !== second)
    #expect(countedBuilds.value == 2)
    #expect(pod.lookalikeCount == 0)
    // Both instances stay cached, out of reach: the cost of the mistake.
    #expect(pod.slotCount == 2)
    #expect(pod.resolve(letService) === pod.resolve(letService))
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("an observed pod's record stays proportional to what it caches")
  func indexStaysBounded() {
    let family = ProviderFamily(scope: StepScope(), name: "bounded") { (_, id: Int) in
      Instance("bounded\(id)", serial: id)
    }
    let pod = Pod(observer: EventRecorder())
    for id in 0..<300 { _ = pod.resolve(family(id)) }
    pod.clearCachedInstances(forScope: StepScope())
    for id in 300..<600 { _ = pod.resolve(family(id)) }
    #expect(pod.lookalikeCount <= 2 * 300 + 64)
    pod.clearCachedInstances(forScope: StepScope())
    for id in 600..<2_000 { _ = pod.resolve(family(id)) }
    #expect(pod.lookalikeCount >= 1_400)  // every cached member, and at most as many gone
    #expect(pod.lookalikeCount <= 2 * 1_400 + 64)
  }

  @Test("the event describes the likely cause and the fix in one line")
  func describesCauseAndFix() {
    let event = PodEvent.providerRecreated(provider: "service", declaration: "App.swift:12:7")
    #expect(!event.description.contains("\n"))
    #expect(
      event.description.hasPrefix("provider recreated: service was made again at App.swift:12:7"))
    #expect(event.description.contains("computed property"))
    #expect(event.description.contains("let"))
  }
}
