import ProviderPod
import Testing

@testable import SignUpDemo

/// Windows in the interactive mode: each a child pod of the app's, with a sign-up of its own.
@Suite("Interactive windows")
@MainActor
struct InteractiveWindowTests {
  @Test("two windows sign up at once, sharing the app's singletons; finishing one leaves the other")
  func twoWindows() async {
    let session = await runInteractive([
      "start", "email ada@example.com", "Window New", "start", "email grace@example.com",
      "profile Grace Hopper", "window 1", "profile Ada Lovelace", "finish", "window 2", "status",
      "windows",
    ])
    #expect(session.errors.isEmpty)
    let output = session.output
    #expect(
      output.contains("    + built      SignUpSession#1          SignUpFlowScope  [window 1]"))
    #expect(
      output.contains("    + built      SignUpSession#2          SignUpFlowScope  [window 2]"))
    // The HTTP client was first built through window 1, and is the app's.
    #expect(output.contains("    + built      HTTPClient#1             SingletonScope   [app]"))
    #expect(output.contains("    = reused     HTTPClient#1 [app]"))
    #expect(!output.contains("HTTPClient#2"))
    #expect(output.contains("  now in window 2: no sign-up in progress"))
    #expect(output.contains("✓ SignUpSession#2 now holds name Grace Hopper"))
    #expect(output.contains("✓ SignUpSession#1 now holds name Ada Lovelace"))
    #expect(output.contains("through DemoServerClient: status 201"))
    // Finishing in window 1 discarded window 1's instances only.
    let discards = session.outputLines.filter { $0.hasPrefix("    - discarded") }
    #expect(discards.count == 6)
    #expect(output.contains("    discarded because their scope was cleared\n    - discarded"))
    // A family member's label is too long for its column: its scope and pod go below.
    #expect(
      discards.allSatisfy {
        $0.hasSuffix(" [window 1]") || $0.hasPrefix("    - discarded  EmailAvailability(")
      })
    #expect(
      output.contains("\n" + String(repeating: " ", count: 42) + "SignUpFlowScope  [window 1]"))
    // Lines that hold what the user typed are broken to fit 80 columns.
    #expect(
      output.contains(
        "  now in window 2: on the profile screen, editing SignUpSession#2 (holding\n"
          + "    grace@example.com and Grace Hopper)"))
    let status = session.outputLines.drop { !$0.hasPrefix("  cached in [window 2]") }
    #expect(status.first == "  cached in [window 2]: 6")
    #expect(status.contains("    SignUpSession#2                          SignUpFlowScope"))
    #expect(status.contains("  cached in [app], shared by every window: 4"))
    #expect(
      Array(session.outputLines.suffix(3)) == [
        "    window 1  no sign-up in progress",
        "  * window 2  on the profile screen, editing SignUpSession#2 (holding",
        "              grace@example.com and Grace Hopper)",
      ])
  }

  @Test("at a terminal the prompt names the current window")
  func windowPrompt() async {
    let session = await runInteractive(
      ["window new", "window 1", "window 1", "window 2"], isTerminal: true)
    #expect(
      session.prompts == [
        "[window 1] > ", "[window 2] > ", "[window 1] > ", "[window 1] > ", "[window 2] > ",
      ])
    #expect(session.output.contains("  already in window 1: no sign-up in progress"))
    #expect(session.errors.isEmpty)
  }

  @Test("window close lets the window's pod go: its instances are disposed, the app's stay")
  func closeWindow() async {
    let transcript = Transcript()
    let interpreter = CommandInterpreter(transcript: transcript)
    for line in ["window new", "window new", "window 2", "start", "email grace@example.com"] {
      _ = await interpreter.handle(line)
    }
    weak let closedPod = interpreter.flow.pod
    let closedSession = interpreter.flow.pod.resolve(signUpSessionProvider)
    #expect(closedSession.email == "grace@example.com")
    _ = await interpreter.handle("window close")
    #expect(closedPod == nil)
    #expect(interpreter.app.windows.map(\.number) == [1, 3])
    #expect(interpreter.prompt == "[window 1] > ")
    #expect(
      interpreter.app.pod.dependencyGraph().nodes.map(\.provider) == [
        "AppConfiguration", "HTTPClient",
      ])
    // The pod went away outside any actor, so the session's main-actor hook was scheduled.
    for _ in 0..<100 where closedSession.email != nil { await Task.yield() }
    #expect(closedSession.email == nil)
    let output = transcript.output
    #expect(output.contains("  closed window 2: its pod goes away with the 6 instances it cached"))
    #expect(output.contains("    SignUpSession#1                          SignUpFlowScope"))
    #expect(output.contains("  now in window 1: no sign-up in progress"))
    // Closing the first window moves to the next one left; window numbers are not reused.
    _ = await interpreter.handle("window close")
    _ = await interpreter.handle("window new")
    #expect(interpreter.app.windows.map(\.number) == [3, 4])
    #expect(
      transcript.output.contains("closed window 1: its pod goes away with nothing of its own"))
    #expect(transcript.errors.isEmpty)
  }
}
