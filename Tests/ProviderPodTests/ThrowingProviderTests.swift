import Testing

@testable import ProviderPod

private struct ParseError: Error, Equatable {
  let attempt: Int
}

private struct Settings: Sendable, Equatable {
  let attempt: Int
}

/// A file whose contents the tests change: the builder fails until it is valid.
private final class SettingsFile: Sendable {
  let isValid = Shared(false)
  let attempts = Counter()
}

/// The ways to give a throwing provider a value instead of a builder.
enum GivenValueWay: String, CaseIterable, Sendable {
  case atCreation = "at the pod's creation"
  case throughThePod = "through the pod"
  case fromABuilder = "from a builder"
}

@Suite("Providers whose synchronous builder can fail")
struct ThrowingProviderTests {
  private func provider(
    reading file: SettingsFile, scope: any ProviderScope = SingletonScope()
  ) -> ThrowingProvider<Settings> {
    ThrowingProvider(scope: scope, name: "settings") { _ in
      let attempt = file.attempts.next()
      guard file.isValid.withLock({ $0 }) else { throw ParseError(attempt: attempt) }
      return Settings(attempt: attempt)
    }
  }

  @Test("a failure reaches the caller and is not cached; a success is")
  func failureNotCached() throws {
    let file = SettingsFile()
    let settings = provider(reading: file)
    let pod = Pod()
    #expect(throws: ParseError(attempt: 1)) { try pod.resolve(settings) }
    #expect(throws: ParseError(attempt: 2)) { try pod.resolve(settings) }
    file.isValid.withLock { $0 = true }
    let built = try pod.resolve(settings)
    #expect(built == Settings(attempt: 3))
    #expect(try pod.resolve(settings) == built)
    #expect(pod.invariantViolations == [])
  }

  @Test("a builder resolves it with try; what it was built from is recorded")
  func fromABuilder() throws {
    let file = SettingsFile()
    file.isValid.withLock { $0 = true }
    let settings = provider(reading: file, scope: StepScope())
    let server = Provider(name: "server") { pod in (try? pod.resolve(settings))?.attempt ?? -1 }
    let pod = Pod()
    #expect(pod.resolve(server) == 1)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(server) == 2, "discarded with the settings it was built from")
  }

  @Test("overrides, by builder and by value, and their removal")
  func overrides() throws {
    let file = SettingsFile()
    let settings = provider(reading: file)
    let pod = Pod(overrides: [settings.override(withValue: Settings(attempt: 42))])
    #expect(try pod.resolve(settings) == Settings(attempt: 42))
    pod.overrideProvider(settings) { _ in throw ParseError(attempt: -1) }
    #expect(throws: ParseError(attempt: -1)) { try pod.resolve(settings) }
    pod.removeOverrideProvider(settings)
    #expect(throws: ParseError.self) { try pod.resolve(settings) }
  }

  @Test("an observed pod reports the failure")
  func failureReported() {
    let observer = EventRecorder()
    let settings = provider(reading: SettingsFile())
    let pod = Pod(observer: observer)
    _ = try? pod.resolve(settings)
    let events = observer.events
    #expect(
      events.contains { if case .buildFailed("settings", 1, _, nil) = $0 { true } else { false } })
  }

  @Test("onDiscard runs for an instance that was built, never for a failure")
  func disposal() throws {
    let file = SettingsFile()
    let disposed = Shared<[Int]>([])
    let settings = ThrowingProvider(
      scope: StepScope(), name: "settings",
      onDiscard: { (value: Settings) in disposed.withLock { $0.append(value.attempt) } }
    ) { _ in
      let attempt = file.attempts.next()
      guard file.isValid.withLock({ $0 }) else { throw ParseError(attempt: attempt) }
      return Settings(attempt: attempt)
    }
    let pod = Pod()
    _ = try? pod.resolve(settings)
    file.isValid.withLock { $0 = true }
    _ = try pod.resolve(settings)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(disposed.withLock { $0 } == [2])
  }

  @Test("threads that wait for a failing build try again themselves, and one success is shared")
  func failingUnderContention() {
    let file = SettingsFile()
    let settings = provider(reading: file)
    let pod = Pod()
    let outcomes = Shared<[Int]>([])
    onThreads(4) { thread in
      for round in 0..<200 {
        if thread == 0, round == 100 { file.isValid.withLock { $0 = true } }
        let attempt = (try? pod.resolve(settings))?.attempt ?? -1
        outcomes.withLock { $0.append(attempt) }
      }
    }
    let successes = Set(outcomes.withLock { $0 }.filter { $0 >= 0 })
    #expect(successes.count == 1, "one instance once a build succeeded: \(successes)")
    #expect(pod.invariantViolations == [])
  }

  @Test(
    "a value given with withValue: is never disposed of: the pod did not make it",
    arguments: GivenValueWay.allCases)
  func givenValueNotDisposed(way: GivenValueWay) throws {
    let disposed = Shared<[Int]>([])
    let settings = ThrowingProvider(
      scope: StepScope(), name: "settings",
      onDiscard: { (value: Settings) in disposed.withLock { $0.append(value.attempt) } }
    ) { _ in Settings(attempt: 1) }
    let given = Settings(attempt: 42)
    var pod: Pod? =
      way == .atCreation ? Pod(overrides: [settings.override(withValue: given)]) : Pod()
    switch way {
    case .atCreation: break
    case .throughThePod: pod?.overrideProvider(settings, withValue: given)
    case .fromABuilder:
      let installer = Provider(scope: AlwaysCreateNewScope(), name: "installer") { context in
        context.overrideProvider(settings, withValue: given)
      }
      pod?.resolve(installer)
    }
    for _ in 0..<3 {
      #expect(try pod?.resolve(settings) == given)
      pod?.clearCachedInstances(forScope: StepScope())
    }
    #expect(try pod?.resolve(settings) == given)
    pod = nil
    #expect(disposed.withLock { $0 } == [], "\(way.rawValue)")

    // What the pod built itself is still disposed of.
    pod = Pod()
    #expect(try pod?.resolve(settings) == Settings(attempt: 1))
    pod = nil
    #expect(disposed.withLock { $0 } == [1])
  }

  @Test("in WeakScope a success that is a class instance is reused while held, never a failure")
  func weakScope() throws {
    let builds = Counter()
    let failing = Shared(true)
    let provider = ThrowingProvider(scope: WeakScope(), name: "weak") { _ in
      let serial = builds.next()
      if failing.withLock({ $0 }) { throw ParseError(attempt: serial) }
      return Instance("weak", serial: serial)
    }
    let dependent = Provider(scope: StepScope(), name: "dependent") { pod in
      (try? pod.resolve(provider))?.serial ?? -1
    }
    let pod = Pod()
    #expect(throws: ParseError(attempt: 1)) { try pod.resolve(provider) }
    #expect(throws: ParseError(attempt: 2)) { try pod.resolve(provider) }
    failing.withLock { $0 = false }
    var held: Instance? = try pod.resolve(provider)
    #expect(try pod.resolve(provider) === held)
    #expect(pod.resolve(dependent) == held?.serial)
    #expect(builds.value == 3)
    weak let observed = held
    held = nil
    #expect(observed == nil, "the pod does not keep it alive")
    #expect(try pod.resolve(provider).serial == 4)
    #expect(pod.invariantViolations == [])
  }

  @Test("in WeakScope an observed pod reuses a held success and reports it")
  func weakScopeObserved() throws {
    let builds = Counter()
    let provider = ThrowingProvider(scope: WeakScope(), name: "weak") { _ in
      Instance("weak", serial: builds.next())
    }
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    let held = try pod.resolve(provider)
    #expect(try pod.resolve(provider) === held)
    #expect(builds.value == 1)
    #expect(recorder.events.contains { if case .reused("weak", _) = $0 { true } else { false } })
  }
}
