import Foundation
import Testing

@testable import SignUpDemo

@Suite("Scripted tour")
struct ScriptedTourTests {
  let transcript = Transcript()
  let succeeded: Bool

  init() async { succeeded = await ScriptedTour.run(transcript: transcript) }

  @Test("runs every step without a refusal or an error")
  func runsCleanly() {
    #expect(succeeded)
    #expect(transcript.errors.isEmpty)
  }

  @Test("going back discards the profile step and reuses the email step")
  func back() {
    let step3 = section(3)
    #expect(step3.contains("- discarded  ProfileStepViewModel#1   ProfileStepScope"))
    #expect(step3.contains("= reused     EmailStepViewModel#1"))
    #expect(!step3.contains("EmailStepViewModel#1     EmailStepScope  (its scope"))
    #expect(section(4).contains("+ built      ProfileStepViewModel#2"))
  }

  @Test("finishing clears the flow scope and both step scopes through the tree")
  func finish() {
    let step5 = section(5)
    for discarded in [
      "SignUpSession#1", "SignUpService#1", "EmailStepViewModel#1", "ProfileStepViewModel#2",
    ] {
      #expect(step5.contains("- discarded  \(discarded)"), "\(discarded)")
    }
    #expect(!step5.contains("- discarded  AppConfiguration"))
    // The session's onDiscard hook closed it once the clear was done.
    let closed = step5.range(of: "✓ SignUpSession#1 closed by onDiscard: form data erased")
    let lastDiscard = step5.range(of: "- discarded", options: .backwards)
    #expect(closed != nil && lastDiscard != nil && closed!.lowerBound > lastDiscard!.lowerBound)
  }

  @Test("the second sign-up gets fresh flow instances and the same singletons")
  func secondSignUp() {
    let step6 = section(6)
    #expect(step6.contains("+ built      SignUpSession#2"))
    #expect(step6.contains("= reused     AnalyticsLog#1"))
    #expect(!transcript.output.contains("AppConfiguration#2"))
    #expect(!transcript.output.contains("AnalyticsLog#2"))
  }

  @Test("the test pod uses its fake, and removing the override discards what was built from it")
  func testPod() {
    let step7 = section(7)
    #expect(step7.contains("~ overridden HTTPClient"))
    #expect(step7.contains("SignUpService#1 on the test pod talks to RecordingHTTPClient#1"))
    let step8 = section(8)
    #expect(
      step8.contains("- discarded  RecordingHTTPClient#1    SingletonScope  (its override changed)")
    )
    #expect(
      step8.contains(
        "- discarded  SignUpService#1          SignUpFlowScope  (it was built from a discarded instance)"
      ))
    #expect(step8.contains("with HTTPClient#1: status 201"))
  }

  @Test("the async configuration is loaded once for two screens asking at once")
  func asyncConfiguration() {
    let step0 = section(0)
    #expect(step0.contains("+ built      SignUpConfiguration#1"))
    #expect(step0.contains("both got SignUpConfiguration#1 and SignUpConfiguration#1"))
    #expect(!transcript.output.contains("SignUpConfiguration#2"))
  }

  @Test("ends with the live pod's dependency graph")
  func graph() {
    #expect(
      section(9).contains(
        "EmailStepViewModel#2 (EmailStepScope) <- AnalyticsLog#1, EmailValidator#2, SignUpSession#2"
      ))
  }

  /// The output of step `number`, up to the next step.
  private func section(_ number: Int) -> String {
    let lines = transcript.output.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0.hasPrefix("\(number). ") }) else {
      Issue.record("no step \(number)")
      return ""
    }
    let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("\(number + 1). ") } ?? lines.endIndex
    return lines[start..<end].joined(separator: "\n")
  }
}
