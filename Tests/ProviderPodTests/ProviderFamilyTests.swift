import Testing

@testable import ProviderPod

private struct AccountID: Hashable, Sendable, CustomStringConvertible {
  let raw: Int
  var description: String { "\(raw)" }
}

private let userBuilds = Counter()
private let userProvider = ProviderFamily(scope: StepScope(), name: "userProvider") {
  (_, id: AccountID) in Instance("user\(id)", serial: userBuilds.next())
}

@Suite("Provider families")
struct ProviderFamilyTests {
  @Test("equal arguments give the same dependency, different ones separate dependencies")
  func identity() {
    let pod = Pod()
    let first = pod.resolve(userProvider(AccountID(raw: 1)))
    #expect(pod.resolve(userProvider(AccountID(raw: 1))) === first)
    #expect(pod.resolve(userProvider(AccountID(raw: 2))) !== first)
    #expect(pod.resolve(userProvider(AccountID(raw: 2))).label == "user2")
  }

  @Test("members are named after the family and the argument")
  func names() {
    #expect(userProvider(AccountID(raw: 42)).name == "userProvider(42)")
    #expect(userProvider.name == "userProvider")
    let unnamed = ProviderFamily { (_, n: Int) in n }
    let line = #line - 1
    #expect(unnamed(7).name == "Int(7) (\(fileName()):\(line))")
    #expect(unnamed.name == "Int (\(fileName()):\(line))")
  }

  @Test("members are cached in the family's scope")
  func scope() {
    let pod = Pod()
    let first = pod.resolve(userProvider(AccountID(raw: 3)))
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(userProvider(AccountID(raw: 3))) !== first)
  }

  @Test("a family override replaces every member's builder; removing it restores them")
  func familyOverride() {
    let pod = Pod()
    let original = pod.resolve(userProvider(AccountID(raw: 4)))
    pod.overrideProvider(userProvider) { _, id in Instance("fake\(id)", serial: 0) }
    #expect(pod.resolve(userProvider(AccountID(raw: 4))).label == "fake4")
    #expect(pod.resolve(userProvider(AccountID(raw: 5))).label == "fake5")
    pod.removeOverrideProvider(userProvider)
    let restored = pod.resolve(userProvider(AccountID(raw: 4)))
    #expect(restored.label == "user4")
    #expect(restored !== original)  // never the orphaned instance
  }

  @Test("a family override may name its own scope")
  func familyOverrideScope() {
    let pod = Pod()
    pod.overrideProvider(userProvider, scope: AlwaysCreateNewScope()) { _, id in
      Instance("fresh\(id)", serial: 0)
    }
    let member = userProvider(AccountID(raw: 6))
    #expect(pod.resolve(member) !== pod.resolve(member))
  }

  @Test("an override of one member wins over the family's")
  func memberOverrideWins() {
    let pod = Pod()
    pod.overrideProvider(userProvider) { _, id in Instance("family\(id)", serial: 0) }
    pod.overrideProvider(userProvider(AccountID(raw: 7))) { _ in Instance("member7", serial: 0) }
    #expect(pod.resolve(userProvider(AccountID(raw: 7))).label == "member7")
    #expect(pod.resolve(userProvider(AccountID(raw: 8))).label == "family8")
    pod.removeOverrideProvider(userProvider(AccountID(raw: 7)))
    #expect(pod.resolve(userProvider(AccountID(raw: 7))).label == "family7")
  }

  @Test("family.override makes an override for Pod(overrides:)")
  func initialOverride() {
    let pod = Pod(overrides: [
      userProvider.override { _, id in Instance("initial\(id)", serial: 0) },
      userProvider(AccountID(raw: 9)).override(withValue: Instance("nine", serial: 0)),
    ])
    #expect(pod.resolve(userProvider(AccountID(raw: 1))).label == "initial1")
    #expect(pod.resolve(userProvider(AccountID(raw: 9))).label == "nine")
  }

  @Test("members can depend on other providers and be depended on")
  func dependencies() {
    let config = instanceProvider("config", scope: FlowScope())
    let family = ProviderFamily(name: "profile") { (pod, id: Int) in
      Instance("profile\(id)", serial: 0, dependencies: [pod.resolve(config)])
    }
    let screen = Provider(name: "screen") { pod in
      Instance("screen", serial: 0, dependencies: [pod.resolve(family(1))])
    }
    let pod = Pod()
    let screen1 = pod.resolve(screen)
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(pod.resolve(screen) !== screen1)
  }

  @Test("a family used with many arguments does not grow once their scope is cleared")
  func membersAreNotHoarded() {
    let family = ProviderFamily(scope: StepScope()) { (_, id: Int) in id }
    let pod = Pod()
    for id in 0..<10_000 { _ = pod.resolve(family(id)) }
    #expect(family.liveMemberCount == 10_000)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(family.liveMemberCount == 0)
    for id in 0..<1_000 { _ = pod.resolve(family(10_000 + id)) }
    #expect(family.liveMemberCount == 1_000)
    // Equal arguments still find the same cached member after all that churn.
    #expect(pod.resolve(family(10_500)) == 10_500)
  }

  @Test("a dropped member's argument gets a fresh dependency with the same name")
  func memberComesBack() {
    let counter = Counter()
    let family = ProviderFamily(scope: StepScope(), name: "f") { (_, id: Int) in
      Instance("f\(id)", serial: counter.next())
    }
    let pod = Pod()
    let first = pod.resolve(family(1))
    pod.clearCachedInstances(forScope: StepScope())
    let second = pod.resolve(family(1))
    #expect(second !== first)
    #expect(family(1).name == "f(1)")
  }
}

@Suite("Clearing one provider")
struct ProviderClearTests {
  @Test("clearCachedInstance(of:) discards that instance and what was built from it, nothing else")
  func clearOne() {
    let session = instanceProvider("session", scope: FlowScope())
    let sibling = instanceProvider("sibling", scope: FlowScope())
    let form = instanceProvider("form", dependencies: [session])
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let (form1, sibling1) = (pod.resolve(form), pod.resolve(sibling))
    _ = recorder.take()
    pod.clearCachedInstance(of: session)
    #expect(
      recorder.take() == [
        .discarded(provider: "session", scope: "FlowScope", reason: .providerCleared),
        .discarded(provider: "form", scope: "SingletonScope", reason: .dependencyDiscarded),
      ])
    #expect(pod.resolve(form) !== form1)
    #expect(pod.resolve(sibling) === sibling1)
  }

  @Test("clearing an always-new provider discards what was built through it")
  func clearAlwaysNew() {
    let fresh = instanceProvider("fresh", scope: AlwaysCreateNewScope())
    let holder = instanceProvider("holder", dependencies: [fresh])
    let pod = Pod()
    let holder1 = pod.resolve(holder)
    pod.clearCachedInstance(of: fresh)
    #expect(pod.resolve(holder) !== holder1)
  }

  @Test("clearing a provider with nothing cached changes nothing")
  func clearNothing() {
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    pod.clearCachedInstance(of: instanceProvider("idle"))
    #expect(recorder.events.isEmpty)
  }

  @Test("clearCachedInstances(of: family) discards every member and what was built from them")
  func clearFamily() {
    let family = ProviderFamily(name: "member") { (_, id: Int) in Instance("m\(id)", serial: 0) }
    let holder = Provider(name: "holder") { pod in
      Instance("holder", serial: 0, dependencies: [pod.resolve(family(1))])
    }
    let other = instanceProvider("other")
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let (m2, holder1, other1) = (pod.resolve(family(2)), pod.resolve(holder), pod.resolve(other))
    _ = recorder.take()
    pod.clearCachedInstances(of: family)
    let discarded = recorder.take().compactMap { event -> String? in
      if case .discarded(let provider, _, _) = event { provider } else { nil }
    }
    #expect(discarded.sorted() == ["holder", "member(1)", "member(2)"])
    #expect(pod.resolve(family(2)) !== m2)
    #expect(pod.resolve(holder) !== holder1)
    #expect(pod.resolve(other) === other1)
  }
}
