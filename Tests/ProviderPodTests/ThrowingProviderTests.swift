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
}
