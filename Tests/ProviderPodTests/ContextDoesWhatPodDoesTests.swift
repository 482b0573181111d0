import Testing

@testable import ProviderPod

@Suite("A context does what the pod does", .timeLimit(.minutes(10)))
struct ContextDoesWhatPodDoesTests {
  @Test("a main-actor builder overrides, removes the override of, and clears a main-actor provider")
  @MainActor
  func mainActorChanges() {
    let builds = Counter()
    let screen = MainActorProvider(name: "screen") { _ in
      Instance("screen", serial: builds.next())
    }
    let given = Instance("given", serial: 0)
    let overrideWithValue = MainActorProvider(scope: AlwaysCreateNewScope()) { pod in
      pod.overrideProvider(screen, withValue: given)
    }
    let overrideWithBuilder = MainActorProvider(scope: AlwaysCreateNewScope()) { pod in
      pod.overrideProvider(screen) { _ in Instance("fake", serial: -1) }
    }
    let removeOverride = MainActorProvider(scope: AlwaysCreateNewScope()) { pod in
      pod.removeOverrideProvider(screen)
    }
    let clear = MainActorProvider(scope: AlwaysCreateNewScope()) { pod in
      pod.clearCachedInstance(of: screen)
    }
    let pod = Pod()
    let original = pod.resolve(screen)

    pod.resolve(overrideWithValue)
    #expect(pod.resolve(screen) === given)
    pod.resolve(overrideWithBuilder)
    #expect(pod.resolve(screen).serial == -1)
    pod.resolve(removeOverride)
    let rebuilt = pod.resolve(screen)
    #expect(rebuilt !== original)
    #expect(rebuilt.label == "screen")
    #expect(pod.resolve(screen) === rebuilt)
    pod.resolve(clear)
    #expect(pod.resolve(screen) !== rebuilt)
    #expect(builds.value == 3)
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("a plain builder removes a main-actor override and clears a main-actor provider")
  @MainActor
  func mainActorChangesFromAPlainBuilder() {
    let screen = MainActorProvider(name: "screen") { _ in Instance("screen", serial: 0) }
    let reset = Provider(scope: AlwaysCreateNewScope()) { pod in
      pod.removeOverrideProvider(screen)
      pod.clearCachedInstance(of: screen)
    }
    let pod = Pod()
    pod.overrideProvider(screen, withValue: Instance("given", serial: 1))
    #expect(pod.resolve(screen).label == "given")
    pod.resolve(reset)
    #expect(pod.resolve(screen).label == "screen")
    let built = pod.resolve(screen)
    pod.resolve(reset)
    #expect(pod.resolve(screen) !== built)
  }

  @Test(
    "a builder that warms providers up through its context depends on each of them",
    arguments: ["plain", "async", "main-actor"])
  func warmUpIsRecorded(cleared: String) async throws {
    let builds = Counter()
    let plain = instanceProvider("plain", scope: StepScope(), counter: builds)
    let async = AsyncProvider(scope: OtherStepScope(), name: "async") { _ in
      Instance("async", serial: builds.next())
    }
    let onMain = MainActorProvider(scope: LeafScope(), name: "onMain") { _ in
      Instance("onMain", serial: builds.next())
    }
    let screen = AsyncProvider(name: "screen") { pod in
      // Handed to a task that inherits nothing from the build: only the context knows it.
      try await Task.detached { try await pod.warmUp(plain, async, onMain) }.value
      return Instance("screen", serial: 0)
    }
    let pod = Pod()
    let first = try await pod.resolve(screen)
    // Warmed up, so cached: resolving them builds nothing more.
    #expect(builds.value == 3)
    _ = pod.resolve(plain)
    _ = try await pod.resolve(async)
    _ = await MainActor.run { pod.resolve(onMain) }
    #expect(builds.value == 3)
    #expect(try await pod.resolve(screen) === first)

    switch cleared {
    case "plain": pod.clearCachedInstance(of: plain)
    case "async": pod.clearCachedInstance(of: async)
    default: pod.clearCachedInstance(of: onMain)
    }
    #expect(try await pod.resolve(screen) !== first)
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("a warm-up through a context fails as the pod's does")
  func warmUpFailure() async throws {
    struct Broken: Error {}
    let failing = AsyncProvider(name: "failing") { _ -> Int in throw Broken() }
    let screen = AsyncProvider(name: "screen") { pod in
      try await pod.warmUp([failing])
      return 0
    }
    let pod = Pod()
    await #expect {
      try await pod.resolve(screen)
    } throws: { error in
      (error as? WarmUpError)?.provider == "failing"
    }
  }

  @Test("a context's instances(of:) yields the pod's current instance, then the next one")
  func instancesOfAProvider() async throws {
    let session = instanceProvider("session", scope: FlowScope())
    let watch = Provider(name: "watch") { pod in pod.instances(of: session) }
    let pod = Pod()
    var iterator = pod.resolve(watch).makeAsyncIterator()
    let first = await iterator.next()!
    #expect(first === pod.resolve(session))
    pod.clearCachedInstances(forScope: FlowScope())
    let second = await iterator.next()!
    #expect(second !== first)
    #expect(second === pod.resolve(session))
  }

  @Test("a context's instances(of:) yields the async provider's instances")
  func instancesOfAnAsyncProvider() async throws {
    let builds = Counter()
    let session = AsyncProvider(scope: FlowScope(), name: "session") { _ in
      Instance("session", serial: builds.next())
    }
    let watch = Provider(name: "watch") { pod in pod.instances(of: session) }
    let pod = Pod()
    var iterator = pod.resolve(watch).makeAsyncIterator()
    let first = try await iterator.next()!
    #expect(try await first === pod.resolve(session))
    pod.clearCachedInstance(of: session)
    let second = try await iterator.next()!
    #expect(second.serial == 2)
    #expect(try await second === pod.resolve(session))
  }

  @Test("what a context's instances(of:) resolves is not recorded in the build")
  func instancesAreNotDependencies() async throws {
    let session = instanceProvider("session", scope: StepScope())
    let follower = AsyncProvider(name: "follower") { pod in
      var iterator = pod.instances(of: session).makeAsyncIterator()
      return Instance("follower", serial: 0, dependencies: [await iterator.next()!])
    }
    let pod = Pod()
    let first = try await pod.resolve(follower)
    #expect(first.dependencies[0] === pod.resolve(session))
    pod.clearCachedInstances(forScope: StepScope())
    #expect(try await pod.resolve(follower) === first)
  }
}
