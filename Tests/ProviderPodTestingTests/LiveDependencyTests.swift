import Dispatch
import ProviderPod
import ProviderPodTesting
import Testing

protocol Payments: Sendable {
  var kind: String { get }
}
struct LivePayments: Payments { let kind = "live" }
struct FakePayments: Payments { let kind = "fake" }
struct UnimplementedPayments: Payments { let kind = "stand-in" }

let paymentsProvider = Provider<any Payments>(name: "payments") { pod in
  pod.requireReplacementInTests()
  return LivePayments()
}
let checkoutProvider = Provider(name: "checkout") { pod in
  "checkout with \(pod.resolve(paymentsProvider).kind) payments"
}
let guardedPaymentsProvider = Provider<any Payments>(name: "guardedPayments") { pod in
  if pod.requireReplacementInTests() { return UnimplementedPayments() }
  return LivePayments()
}
let accountPaymentsProvider = ProviderFamily<String, any Payments>(name: "accountPayments") {
  pod, _ in
  pod.requireReplacementInTests()
  return LivePayments()
}
struct Offline: Error {}
let remotePaymentsProvider = AsyncProvider<any Payments>(name: "remotePayments") { pod in
  if pod.requireReplacementInTests() { throw Offline() }
  return LivePayments()
}

/// Whether an issue names the provider and says how to replace it.
private func namesTheFix(_ issue: Issue, for provider: String) -> Bool {
  let text = issue.comments.map(\.rawValue).joined()
  return text.contains("\(provider) (LiveDependencyTests.swift:")
    && text.contains("must be replaced in tests") && text.contains(".override")
}

@Suite struct LiveDependencyTests {
  @Test(.isolated(appPod))
  func anUnreplacedLiveDependencyFailsTheTestAndTheProcessGoesOn() {
    var kind = ""
    withKnownIssue {
      kind = appPod.resolve(paymentsProvider).kind
    } matching: {
      namesTheFix($0, for: "payments")
    }
    // The builder went on: the live instance, as nothing else fits a value that is not optional.
    #expect(kind == "live")
  }

  @Test(.isolated(appPod))
  func theMessageNamesTheLiveProviderWhenAnotherNeedsIt() {
    withKnownIssue {
      _ = appPod.resolve(checkoutProvider)
    } matching: {
      namesTheFix($0, for: "payments")
    }
  }

  @Test(.isolated(appPod))
  func forAFamilyMemberTheMessageShowsAnOverrideThatTakesTheArgument() {
    withKnownIssue {
      _ = appPod.resolve(accountPaymentsProvider("ada"))
    } matching: {
      let text = $0.comments.map(\.rawValue).joined()
      return text.hasPrefix("ProviderPod: accountPayments(ada) (LiveDependencyTests.swift:")
        && text.contains("overrides: [family.override { _, argument in Fake() }]")
        && text.contains("appPod.overrideProvider(family) { _, argument in Fake() }")
    }
  }

  @Test(.isolated(appPod, overrides: [paymentsProvider.override { _ in FakePayments() }]))
  func aReplacedLiveDependencyPassesQuietly() {
    #expect(appPod.resolve(checkoutProvider) == "checkout with fake payments")
  }

  @Test(.isolated(appPod))
  func aReplacementInsideTheTestCountsToo() {
    appPod.overrideProvider(paymentsProvider, withValue: FakePayments())
    #expect(appPod.resolve(paymentsProvider).kind == "fake")
  }

  @Test(.isolated(appPod))
  func aBuilderCanReturnAStandInRatherThanReachTheLiveDependency() {
    withKnownIssue {
      #expect(appPod.resolve(guardedPaymentsProvider).kind == "stand-in")
    } matching: {
      namesTheFix($0, for: "guardedPayments")
    }
  }

  @Test(.isolated(appPod))
  func anAsyncBuilderCanThrowRatherThanReachTheLiveDependency() async {
    await withKnownIssue {
      await #expect(throws: Offline.self) { try await appPod.resolve(remotePaymentsProvider) }
    } matching: {
      namesTheFix($0, for: "remotePayments")
    }
  }

  @Test func outsideAnIsolationTheLiveDependencyIsBuiltQuietly() async throws {
    let pod = Pod()
    #expect(pod.resolve(paymentsProvider).kind == "live")
    #expect(pod.resolve(guardedPaymentsProvider).kind == "live")
    #expect(try await pod.resolve(remotePaymentsProvider).kind == "live")
  }

  @Test func anIsolationWithoutAReporterIgnoresTheRule() {
    Pod().withIsolation { pod in
      #expect(pod.resolve(guardedPaymentsProvider).kind == "live")
    }
  }

  @Test func theReporterGetsTheMessageInAPlainIsolation() {
    let reports = Reports()
    Pod().withIsolation(reportIssue: { reports.add($0) }) { pod in
      #expect(pod.resolve(guardedPaymentsProvider).kind == "stand-in")
      // Child pods of the isolation's pod follow the same rule.
      _ = Pod(parent: pod, scopes: [SingletonScope()]).resolve(paymentsProvider)
    }
    let messages = reports.all
    #expect(messages.count == 2)
    #expect(
      messages.first?.hasPrefix("ProviderPod: guardedPayments (LiveDependencyTests.swift:") == true)
  }
}

/// Messages collected from any thread.
final class Reports: Sendable {
  private let messages = Shared<[String]>([])

  func add(_ message: String) { messages.withLock { $0.append(message) } }
  var all: [String] { messages.withLock { $0 } }
}

@Suite struct TestIsolationFunctionTests {
  @Test func partOfATestCanIsolateThePodAndFailsForAnUnreplacedLiveDependency() {
    withKnownIssue {
      rulesPod.withTestIsolation(overrides: [greetingProvider.override(withValue: "part")]) {
        _ in
        #expect(rulesPod.resolve(greetingProvider) == "part")
        _ = rulesPod.resolve(paymentsProvider)
      }
    } matching: {
      namesTheFix($0, for: "payments")
    }
  }

  @Test func aLiveDependencyBuiltOnADetachedTaskFailsTheTestThatHandedItThePod() async {
    await withKnownIssue {
      await rulesPod.withTestIsolation { testPod in
        _ = await Task.detached { testPod.resolve(paymentsProvider) }.value
      }
    } matching: {
      namesTheFix($0, for: "payments")
    }
  }

  @Test func aReportOffTheIsolationsTasksWaitsForItToEnd() async {
    let reports = Reports()
    await Pod().withIsolation(reportIssue: { reports.add($0) }) { testPod in
      let fromThread = await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
          continuation.resume(returning: testPod.resolve(paymentsProvider).kind)
        }
      }
      #expect(fromThread == "live")
      #expect(reports.all.isEmpty)
    }
    #expect(reports.all.count == 1)
  }

  @Test func anAsyncPartOfATestToo() async {
    let fake = [paymentsProvider.override { _ in FakePayments() }]
    await rulesPod.withTestIsolation(overrides: fake) { _ in
      let checkout = await Task { rulesPod.resolve(checkoutProvider) }.value
      #expect(checkout == "checkout with fake payments")
    }
  }
}
