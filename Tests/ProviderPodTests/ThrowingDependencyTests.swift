import Testing

@testable import ProviderPod

private struct ConfigurationError: Error, Equatable {
  let attempt: Int
}

private struct Configuration: Sendable, Equatable {
  let region: String

  static let fallback = Configuration(region: "default")
}

/// What the fallback builders make: a class, so reuse is told from a rebuild.
private final class Client: Sendable {
  let configuration: Configuration
  let serial: Int

  init(configuration: Configuration, serial: Int) {
    self.configuration = configuration
    self.serial = serial
  }
}

/// A configuration file the tests fix: the builder fails until it is valid.
private final class ConfigurationFile: Sendable {
  let isValid = Shared(false)
  let builds = Counter()

  func provider() -> ThrowingProvider<Configuration> {
    ThrowingProvider(name: "configuration") { _ in
      let attempt = self.builds.next()
      guard self.isValid.withLock({ $0 }) else { throw ConfigurationError(attempt: attempt) }
      return Configuration(region: "eu")
    }
  }
}

@Suite("Builders that resolve a failing throwing provider", .timeLimit(.minutes(10)))
struct ThrowingDependencyTests {
  @Test(
    "an async build that resolves a failing throwing provider runs as its retry policy says",
    arguments: [1, 3], [false, true])
  func asyncCallerFollowsItsPolicy(maxAttempts: Int, observed: Bool) async {
    let file = ConfigurationFile()
    let configuration = file.provider()
    let loaderBuilds = Counter()
    let policy: RetryPolicy =
      maxAttempts == 1 ? .never : .exponentialBackoff(maxAttempts: maxAttempts, sleep: { _ in })
    let loader = AsyncProvider(name: "loader", retry: policy) { context in
      loaderBuilds.next()
      return try context.resolve(configuration)
    }
    let recorder = EventRecorder()
    let pod = observed ? Pod(observer: recorder) : Pod()
    await #expect(throws: ConfigurationError(attempt: maxAttempts)) {
      try await pod.resolve(loader)
    }
    #expect(loaderBuilds.value == maxAttempts)
    #expect(file.builds.value == maxAttempts)
    #expect(pod.invariantViolations == [])
    guard observed else { return }
    let failed = failures(in: recorder.events)
    #expect(
      failed.filter { $0.0 == "configuration" }.map(\.1) == Array(repeating: 1, count: maxAttempts))
    #expect(failed.filter { $0.0 == "loader" }.map(\.1) == Array(1...maxAttempts))
    #expect(failed.last.map { $0.0 == "loader" && $0.2 == nil } == true, "gives up at the last")
  }

  @Test("a builder that falls back when a dependency fails is cached, and disposed of once")
  func fallbackIsCached() {
    let file = ConfigurationFile()
    let configuration = file.provider()
    let builds = Counter()
    let disposed = Shared<[Int]>([])
    let client = Provider(
      scope: StepScope(), name: "client",
      onDiscard: { (client: Client) in disposed.withLock { $0.append(client.serial) } }
    ) { context in
      Client(
        configuration: (try? context.resolve(configuration)) ?? .fallback, serial: builds.next())
    }
    var pod: Pod? = Pod()
    let first = pod!.resolve(client)
    #expect(first.configuration == .fallback)
    for _ in 0..<3 { #expect(pod!.resolve(client) === first) }
    #expect(builds.value == 1)
    #expect(file.builds.value == 1, "the failing dependency is not tried again meanwhile")

    // It was built from nothing: the dependency failing cached nothing. It stays until its
    // scope is cleared, even once the dependency would succeed.
    file.isValid.withLock { $0 = true }
    #expect(pod!.resolve(client) === first)
    pod!.clearCachedInstances(forScope: StepScope())
    #expect(disposed.withLock { $0 } == [1])
    let second = pod!.resolve(client)
    #expect(second.configuration == Configuration(region: "eu"))
    #expect(pod!.invariantViolations == [])
    pod = nil
    #expect(disposed.withLock { $0 } == [1, 2])
  }

  @Test("a fallback is discarded when something it resolved successfully changes")
  func fallbackFollowsWhatItResolved() {
    let file = ConfigurationFile()
    let configuration = file.provider()
    let region = instanceProvider("region", scope: OtherStepScope())
    let builds = Counter()
    let client = Provider(scope: StepScope(), name: "client") { context in
      _ = context.resolve(region)
      return Client(
        configuration: (try? context.resolve(configuration)) ?? .fallback, serial: builds.next())
    }
    let pod = Pod()
    let first = pod.resolve(client)
    #expect(pod.resolve(client) === first)
    pod.clearCachedInstances(forScope: OtherStepScope())
    #expect(pod.resolve(client) !== first)
    #expect(builds.value == 2)
    #expect(pod.invariantViolations == [])
  }

  @Test("threads resolving a fallback share one build")
  func fallbackSharedByThreads() {
    let file = ConfigurationFile()
    let configuration = file.provider()
    let builds = Counter()
    let client = Provider(scope: StepScope(), name: "client") { context in
      Client(
        configuration: (try? context.resolve(configuration)) ?? .fallback, serial: builds.next())
    }
    let pod = Pod()
    onThreads(4) { _ in
      for _ in 0..<200 { _ = pod.resolve(client) }
    }
    #expect(builds.value == 1)
    #expect(pod.invariantViolations == [])
  }

  @Test("an async builder that falls back is cached too")
  func asyncFallbackIsCached() async throws {
    let file = ConfigurationFile()
    let configuration = file.provider()
    let builds = Counter()
    let client = AsyncProvider(scope: StepScope(), name: "client") { context in
      Client(
        configuration: (try? context.resolve(configuration)) ?? .fallback, serial: builds.next())
    }
    let pod = Pod()
    let first = try await pod.resolve(client)
    #expect(try await pod.resolve(client) === first)
    #expect(builds.value == 1)
    #expect(file.builds.value == 1)
    #expect(pod.invariantViolations == [])
  }

  @Test(
    "a fallback on a failure that a change made stale is not cached",
    arguments: ["what the failing build resolved", "the failing build's own scope"])
  func fallbackOnStaleFailure(cleared: String) {
    let attempts = Counter()
    let step = instanceProvider("step", scope: StepScope())
    let holder = PodHolder()
    // The first build fails after a clear of `cleared`: its caller fell back on a failure
    // that the change may have caused.
    let clearsWhatItResolved = cleared == "what the failing build resolved"
    let ownScope: any ProviderScope = clearsWhatItResolved ? SingletonScope() : StepScope()
    let configuration = ThrowingProvider(scope: ownScope, name: "configuration") {
      context -> Configuration in
      if clearsWhatItResolved { _ = context.resolve(step) }
      let attempt = attempts.next()
      if attempt == 1 { holder.pod.clearCachedInstances(forScope: StepScope()) }
      throw ConfigurationError(attempt: attempt)
    }
    let builds = Counter()
    let client = Provider(name: "client") { context in
      Client(
        configuration: (try? context.resolve(configuration)) ?? .fallback, serial: builds.next())
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let first = pod.resolve(client)
    let second = pod.resolve(client)
    #expect(second !== first, "the first fell back on a failure from before the clear")
    #expect(pod.resolve(client) === second, "the second on one from after it")
    #expect(builds.value == 2)
    #expect(pod.invariantViolations == [])
  }
}
