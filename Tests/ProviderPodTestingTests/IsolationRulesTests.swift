import Dispatch
import ProviderPod
import ProviderPodTesting
import Testing

/// A pod of its own for these tests, so that they can look at what it caches while other
/// suites use `appPod`.
let rulesPod = Pod(overrides: [nameProvider.override(withValue: "from the global pod")])

struct RequestScope: ProviderScope {}
let requestIDProvider = Provider(scope: RequestScope(), name: "requestID") { _ in "no request" }
let asyncGreetingProvider = AsyncProvider(name: "asyncGreeting") { _ in "live" }
let throwingGreetingProvider = ThrowingProvider(name: "throwingGreeting") { _ in "live" }
let shoutProvider = ProviderFamily(name: "shout") { (_, word: String) in word.uppercased() }
let alwaysNewGreetingProvider = Provider(scope: AlwaysCreateNewScope(), name: "alwaysNew") { _ in
  "live"
}
@MainActor let mainActorGreetingProvider = MainActorProvider(name: "mainActorGreeting") { _ in
  "live"
}

@Suite struct IsolationRulesTests {
  @Test(
    .isolated(
      appPod,
      overrides: [
        asyncGreetingProvider.override(withValue: "test"),
        throwingGreetingProvider.override(withValue: "test"),
        shoutProvider.override { _, word in "test \(word)" },
        alwaysNewGreetingProvider.override { _ in "test" },
      ]))
  func everyKindOfProviderResolvesThroughTheTestsPod() async throws {
    #expect(try await appPod.resolve(asyncGreetingProvider) == "test")
    #expect(try appPod.resolve(throwingGreetingProvider) == "test")
    #expect(appPod.resolve(shoutProvider("hi")) == "test hi")
    #expect(appPod.resolve(alwaysNewGreetingProvider) == "test")
    appPod.overrideProvider(greetingProvider, withValue: "watched")
    var instances = appPod.instances(of: greetingProvider).makeAsyncIterator()
    #expect(await instances.next() == "watched")
  }

  @MainActor
  @Test(.isolated(appPod))
  func mainActorProvidersResolveThroughTheTestsPod() {
    appPod.overrideProvider(mainActorGreetingProvider, withValue: "test")
    #expect(appPod.resolve(mainActorGreetingProvider) == "test")
  }

  @Test func theTestsPodStartsWithTheGlobalPodsOverridesAndSharesNoInstance() throws {
    let global = rulesPod.resolve(messageProvider)
    rulesPod.withIsolation(overrides: [greetingProvider.override(withValue: "test")]) {
      testPod in
      #expect(rulesPod.resolve(nameProvider) == "from the global pod")
      #expect(rulesPod.resolve(messageProvider) == "test, from a singleton")
      #expect(rulesPod.dependencyGraph() == testPod.dependencyGraph())
      rulesPod.clearCachedInstance(of: messageProvider)
      rulesPod.overrideProvider(nameProvider, withValue: "test")
      #expect(rulesPod.resolve(nameProvider) == "test")
    }
    // Nothing the test built, overrode or cleared reached the global pod.
    #expect(rulesPod.resolve(messageProvider) == global)
    #expect(rulesPod.resolve(nameProvider) == "from the global pod")
  }

  @Test func aChildPodMadeFromTheGlobalPodInsideTheTestIsTheTestPodsChild() {
    let global = Pod()
    global.withIsolation(overrides: [greetingProvider.override(withValue: "test")]) { testPod in
      let request = Pod(
        parent: global, scopes: [RequestScope()],
        overrides: [requestIDProvider.override(withValue: "request 1")])
      #expect(request.parent === testPod)
      #expect(request.resolve(requestIDProvider) == "request 1")
      // Shared with the test's pod, where it is cached: not with the global pod.
      #expect(request.resolve(messageProvider) == "test, from a singleton")
      #expect(testPod.dependencyGraph().nodes.contains { $0.provider == "message" })
    }
    #expect(global.dependencyGraph().nodes.isEmpty)
    #expect(global.resolve(messageProvider) == "live, from a singleton")
  }

  @Test func aChildPodMadeBeforeTheIsolationFailsTheTestWithTheFix() {
    let global = Pod()
    let madeAtLaunch = Pod(parent: global, scopes: [RequestScope()])
    let madeAtLaunchToo = Pod(parent: madeAtLaunch)
    withKnownIssue {
      global.withTestIsolation(overrides: [greetingProvider.override(withValue: "test")]) { _ in
        _ = madeAtLaunch.resolve(messageProvider)
        _ = madeAtLaunch.resolve(greetingProvider)
        _ = madeAtLaunchToo.resolve(greetingProvider)
        // Made inside the test: a child of the test's pod, and nothing to report.
        _ = Pod(parent: global).resolve(greetingProvider)
      }
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text.contains("a child pod made before the test isolated")
        && text.contains("Make the child pod inside the test")
    }
  }

  @Test func aChildPodMadeBeforeTheIsolationIsReportedOncePerChild() {
    let global = Pod()
    let madeAtLaunch = Pod(parent: global)
    let reports = Reports()
    global.withIsolation(reportIssue: { reports.add($0) }) { _ in
      _ = madeAtLaunch.resolve(greetingProvider)
      _ = madeAtLaunch.resolve(nameProvider)
      _ = Pod(parent: madeAtLaunch).resolve(nameProvider)
      _ = Pod(parent: global).resolve(nameProvider)
    }
    #expect(reports.all.count == 2)
  }

  @Test func detachedTasksAndThreadsSeeTheGlobalPodAndCanBeHandedTheTestsPod() async {
    let global = Pod()
    await global.withIsolation(overrides: [greetingProvider.override(withValue: "test")]) {
      testPod in
      #expect(await Task.detached { global.resolve(greetingProvider) }.value == "live")
      let fromThread = await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
          continuation.resume(returning: global.resolve(greetingProvider))
        }
      }
      #expect(fromThread == "live")
      #expect(await Task.detached { testPod.resolve(greetingProvider) }.value == "test")
    }
  }

  @Test func aTaskThatOutlivesTheIsolationKeepsSeeingItsPod() async {
    let global = Pod()
    let (go, letGo) = AsyncStream<Void>.makeStream()
    let late = global.withIsolation(overrides: [greetingProvider.override(withValue: "test")]) {
      _ in
      Task {
        for await _ in go { break }
        return global.resolve(greetingProvider)
      }
    }
    letGo.yield()
    #expect(await late.value == "test")
    #expect(global.resolve(greetingProvider) == "live")
  }

  @Test(.isolated(appPod, overrides: [greetingProvider.override(withValue: "outer")]))
  func anIsolationInsideAnotherStartsFromTheOuterOne() {
    appPod.overrideProvider(nameProvider, withValue: "outer name")
    appPod.withIsolation(overrides: [greetingProvider.override(withValue: "inner")]) { _ in
      #expect(appPod.resolve(greetingProvider) == "inner")
      #expect(appPod.resolve(nameProvider) == "outer name")
      appPod.overrideProvider(nameProvider, withValue: "inner name")
    }
    #expect(appPod.resolve(greetingProvider) == "outer")
    #expect(appPod.resolve(nameProvider) == "outer name")
  }

  @Test func aBuilderResolvingThroughTheGlobalPodIsNestedInTheTestPodsBuild() {
    let global = Pod()
    let holder = Provider(name: "holder") { _ in global.resolve(greetingProvider) + "!" }
    global.withIsolation(overrides: [greetingProvider.override(withValue: "test")]) { testPod in
      #expect(global.resolve(holder) == "test!")
      // Recorded as built from the greeting: replacing it rebuilds the holder.
      global.overrideProvider(greetingProvider, withValue: "again")
      #expect(global.resolve(holder) == "again!")
    }
  }

  @Test func onlyARootPodCanBeIsolated() async {
    await #expect(processExitsWith: .failure) {
      let child = Pod(parent: Pod())
      child.withIsolation { _ in }
    }
  }
}

@Suite(.isolated(appPod, overrides: [greetingProvider.override(withValue: "suite")]))
struct SuiteIsolationTests {
  @Test func eachTestOfTheSuiteGetsItsOwnPodWithTheSuitesOverrides() {
    #expect(appPod.resolve(greetingProvider) == "suite")
    appPod.overrideProvider(nameProvider, withValue: "first")
    #expect(appPod.resolve(nameProvider) == "first")
  }

  @Test(arguments: ["a", "b", "c"])
  func eachCaseOfAParameterizedTestGetsItsOwnPod(name: String) {
    #expect(appPod.resolve(nameProvider) == "nobody")
    appPod.overrideProvider(nameProvider, withValue: name)
    #expect(appPod.resolve(nameProvider) == name)
  }

  @Test(.isolated(appPod, overrides: [nameProvider.override(withValue: "test")]))
  func aTestsTraitAddsToTheSuites() {
    #expect(appPod.resolve(greetingProvider) == "suite")
    #expect(appPod.resolve(nameProvider) == "test")
  }
}
