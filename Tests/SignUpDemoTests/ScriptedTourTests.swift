import Foundation
import Testing

@testable import SignUpDemo

@Suite("Scripted tour")
@MainActor
struct ScriptedTourTests {
  let transcript = Transcript()
  let succeeded: Bool

  init() async { succeeded = await ScriptedTour.run(transcript: transcript) }

  @Test("runs every step without a refusal or an error")
  func runsCleanly() {
    #expect(succeeded)
    #expect(transcript.errors.isEmpty)
  }

  @Test("no line is wider than an 80-column terminal, counting display width")
  func fitsEightyColumns() {
    let wide = transcript.output.split(separator: "\n").filter { $0.displayWidth > 80 }
    #expect(wide.isEmpty, "\(wide.count) lines:\n\(wide.joined(separator: "\n"))")
  }

  @Test("every step says why before it shows any code or what the pod did", arguments: 0...10)
  func whyFirst(number: Int) {
    let lines = section(number).split(separator: "\n").dropFirst()
    #expect(lines.first?.hasPrefix("  Why: ") == true)
    let firstAction = lines.firstIndex { $0.hasPrefix("  ▸") || $0.hasPrefix("    ") }
    let firstWhy = lines.firstIndex { $0.hasPrefix("  Why: ") }
    #expect(firstWhy != nil && (firstAction == nil || firstWhy! < firstAction!))
  }

  @Test("each step shows the call it makes")
  func showsCode() {
    #expect(section(1).contains("  ▸ pod.resolve(emailStepViewModelProvider)"))
    #expect(section(2).contains("  ▸ pod.resolve(emailAvailabilityProvider(\"ada@example.com\"))"))
    #expect(section(3).contains("  ▸ pod.clearCachedInstances(forScope: ProfileStepScope())"))
    #expect(section(5).contains("  ▸ pod.clearCachedInstances(forScope: SignUpFlowScope())"))
    #expect(section(7).contains("  ▸ let firstWindow = Pod(parent: pod, scopes: [WindowScope()])"))
    #expect(
      section(7).contains("  ▸ firstWindow.clearCachedInstances(forScope: SignUpFlowScope())"))
    #expect(
      section(8).contains(
        "  ▸ let testPod = Pod(overrides: [httpClientProvider.override(withValue: fake)])"))
    #expect(section(9).contains("  ▸ testPod.removeOverrideProvider(httpClientProvider)"))
    #expect(section(8).contains("  ▸ testPod.clearCachedInstances(forScope: SignUpFlowScope())"))
    #expect(!section(8).contains("▸ pod."))
  }

  @Test("what one call reused is one line, each instance named once")
  func reusedCondensed() {
    let lines = transcript.output.split(separator: "\n")
    let reused = lines.filter { $0.hasPrefix("    = reused") }
    #expect(!reused.isEmpty)
    for line in reused {
      let labels = line.dropFirst("    = reused     ".count).split(separator: ", ")
      #expect(Set(labels).count == labels.count, "\(line)")
    }
    for (line, next) in zip(lines, lines.dropFirst()) {
      #expect(!(line.hasPrefix("    = reused") && next.hasPrefix("    = reused")))
    }
    #expect(section(4).contains("    = reused     SignUpSession#1, AppConfiguration#1"))
  }

  @Test("going back discards the profile step only")
  func back() {
    let step3 = section(3)
    #expect(step3.contains("- discarded  ProfileStepViewModel#1   ProfileStepScope"))
    #expect(step3.contains("- discarded  NameValidator#1          ProfileStepScope"))
    #expect(!step3.contains("EmailStepViewModel#1"))
    #expect(step3.contains("back on the email screen: it still shows ada@example.com"))
    #expect(section(4).contains("+ built      ProfileStepViewModel#2"))
  }

  @Test("finishing clears the flow scope and both step scopes; the session's hook erases it")
  func finish() {
    let step5 = section(5)
    #expect(
      discards(in: step5) == [
        "EmailAvailability(ada@example.com)#1", "SignUpSession#1", "EmailStepViewModel#1",
        "EmailValidator#1", "NameValidator#2", "ProfileStepViewModel#2",
      ])
    let closed = step5.range(of: "✓ SignUpSession#1's onDiscard closed it")
    let lastDiscard = step5.range(of: "- discarded", options: .backwards)
    #expect(closed != nil && lastDiscard != nil && closed!.lowerBound > lastDiscard!.lowerBound)
  }

  @Test("every clear lists its discards in the same order")
  func discardOrder() {
    let unnumbered = { (labels: [String]) in
      labels.map { String($0.split(separator: "#")[0].split(separator: "(")[0]) }
    }
    let liveFinish = unnumbered(discards(in: section(5)))
    #expect(unnumbered(discards(in: section(7))) == liveFinish)
    #expect(unnumbered(discards(in: section(8))) == liveFinish)
    #expect(
      unnumbered(discards(in: section(3)))
        == liveFinish.filter { ["NameValidator", "ProfileStepViewModel"].contains($0) })
  }

  @Test("the second sign-up gets fresh flow instances and the same singletons")
  func secondSignUp() {
    #expect(section(6).contains("+ built      SignUpSession#2"))
    #expect(section(6).contains("editing SignUpSession#2 (empty)"))
    let livePod = (0...6).map(section).joined(separator: "\n")
    for singleton in ["AppConfiguration", "HTTPClient", "SignUpConfiguration", "SignUpService"] {
      #expect(!livePod.contains("\(singleton)#2"), "\(singleton)")
    }
  }

  @Test("two windows: a sign-up each, the app's singletons shared, finishing one leaves the other")
  func windows() {
    let step7 = section(7)
    #expect(step7.contains("    + built      SignUpSession#3          SignUpFlowScope  [window 1]"))
    #expect(step7.contains("    + built      SignUpSession#4          SignUpFlowScope  [window 2]"))
    #expect(
      step7.contains(
        "  ✓ a session per window: SignUpSession#3 and SignUpSession#4 are two instances"))
    #expect(step7.contains("    = reused     SignUpConfiguration#1 [app]"))
    #expect(
      step7.contains(
        "  ✓ one singleton for both: the app's SignUpConfiguration#1 is the same instance"))
    #expect(!step7.contains("✗"))
    // What the windows use of the app's is the app's: nothing app-wide is built again.
    for singleton in ["AppConfiguration", "HTTPClient", "SignUpConfiguration", "SignUpService"] {
      #expect(!step7.contains("+ built      \(singleton)"), "\(singleton)")
    }
    // Window 1's finish clears window 1's flow, and nothing of window 2's or the app's.
    guard let finish = step7.range(of: "  [window 1] > finish") else {
      Issue.record("window 1 does not finish")
      return
    }
    let afterFinish = String(step7[finish.lowerBound...])
    #expect(
      discards(in: afterFinish) == [
        "EmailAvailability(grace@example.com)#1", "SignUpSession#3", "EmailStepViewModel#3",
        "EmailValidator#3", "NameValidator#3", "ProfileStepViewModel#3",
      ])
    let discardLines = afterFinish.split(separator: "\n").filter { $0.contains("- discarded") }
    #expect(afterFinish.contains("    discarded because their scope was cleared\n    - discarded"))
    #expect(
      discardLines.allSatisfy {
        $0.hasSuffix(" [window 1]") || $0.hasPrefix("    - discarded  EmailAvailability(")
      })
    #expect(afterFinish.contains("    = reused     SignUpSession#4 [window 2]"))
    #expect(
      afterFinish.contains(
        "  ✓ window 2 is untouched:\n"
          + "    on the profile screen, editing SignUpSession#4 (holding alan@example.com)"))
  }

  @Test("lines say which pod did it only once the app's pod has children")
  func podTags() {
    let beforeWindows = (0...6).map(section).joined(separator: "\n")
    #expect(!beforeWindows.contains("[app]"))
    #expect(section(7).contains("    = reused     SignUpService#1 [app]"))
    // The test's pod is a tree of its own, with no children.
    #expect(!section(8).contains("[app]"))
  }

  @Test("the async configuration is loaded once for two screens asking at once")
  func asyncConfiguration() {
    let step0 = section(0)
    #expect(step0.contains("+ built      SignUpConfiguration#1"))
    #expect(step0.contains("home and banner hold the same SignUpConfiguration#1 (terms 2026-01)"))
    #expect(!step0.contains("both got"))
    #expect(section(5).contains("= reused     SignUpConfiguration#1"))
  }

  @Test("the configuration's first request is refused, and the load retries it once")
  func configurationRetries() {
    let step0 = section(0)
    let failed = step0.range(
      of:
        "    ✗ failed     SignUpConfiguration, attempt 1: the server answered 503;\n"
        + "                 retrying in 100 ms"
    )
    let built = step0.range(of: "+ built      SignUpConfiguration#1")
    #expect(failed != nil && built != nil && failed!.lowerBound < built!.lowerBound)
    #expect(!step0.contains("attempt 2"))
  }

  @Test("the test pod uses its fake; removing the override is reported as a removal")
  func testPod() {
    let step8 = section(8)
    #expect(step8.contains("    ~ override added  HTTPClient"))
    #expect(
      step8.contains("SignUpService#1 sent the sign-up through RecordingHTTPClient: status 201"))
    #expect(step8.contains("    POST /signup email=test@example.com name=Test User terms=2026-01"))
    let step9 = section(9)
    #expect(step9.contains("    ~ override removed  HTTPClient"))
    #expect(!transcript.output.contains("~ overridden"))
    #expect(
      step9.contains(
        "    discarded because its override changed\n"
          + "    - discarded  HTTPClient#1             SingletonScope\n"
          + "    discarded because they were built from discarded instances\n"))
    #expect(step9.contains("    - discarded  SignUpService#1          SingletonScope"))
    #expect(step9.contains("SignUpService#2 sends through DemoServerClient"))
  }

  @Test("ends with the live pod's dependency graph")
  func graph() {
    #expect(
      section(10).contains(
        "    EmailStepViewModel#2 (EmailStepScope) <- EmailValidator#2, SignUpSession#2"))
    #expect(section(10).contains("    SignUpService#1 (SingletonScope) <- HTTPClient#1"))
  }

  /// The labels of the discard lines in `text`, in order.
  private func discards(in text: String) -> [String] {
    text.split(separator: "\n").filter { $0.hasPrefix("    - discarded  ") }.map {
      String($0.dropFirst("    - discarded  ".count).split(separator: " ")[0])
    }
  }

  /// The output of step `number`, up to the next step.
  private func section(_ number: Int) -> String {
    let lines = transcript.output.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0.hasPrefix("\(number). ") }) else {
      Issue.record("no step \(number)")
      return ""
    }
    let end =
      lines[(start + 1)...].firstIndex { $0.hasPrefix("\(number + 1). ") || $0.hasPrefix("Try") }
      ?? lines.endIndex
    return lines[start..<end].joined(separator: "\n")
  }
}
