import ProviderPod
import Testing

@testable import SignUpDemo

/// What the interactive mode tells its user beyond the flow itself: which pod the code it
/// shows calls, what closing a window ran, what a typo was probably meant to be, which
/// command piped input ran; and that all of it fits an 80-column terminal.
@Suite("Interactive feedback")
@MainActor
struct InteractiveFeedbackTests {
  /// Runs `lines` as piped input (or typed at a terminal); returns the transcript.
  private func run(_ lines: [String], isTerminal: Bool = false) async -> Transcript {
    let transcript = Transcript()
    var input = lines[...]
    _ = await DemoCommandLine.run(
      arguments: ["--interactive"], transcript: transcript, isTerminal: isTerminal,
      readLine: { _ in input.popFirst() })
    return transcript
  }

  @Test("code lines name the window's pod, which is a child of the app's")
  func podNames() async {
    let output = await run(["start", "window new", "start", "back", "cancel"]).output
    #expect(output.contains("  ▸ window1.resolve(emailStepViewModelProvider)"))
    #expect(output.contains("  ▸ let window2 = Pod(parent: appPod, scopes: [WindowScope()])"))
    #expect(output.contains("  ▸ window2.resolve(emailStepViewModelProvider)"))
    #expect(output.contains("  ▸ window2.clearCachedInstances(forScope: SignUpFlowScope())"))
    #expect(!output.contains("▸ pod."))
  }

  @Test("window close shows the window's onDiscard hooks running, as finish does")
  func closeRunsHooks() async {
    let transcript = await run([
      "window new", "start", "email grace@example.com", "profile Grace Hopper", "window close",
    ])
    let output = transcript.output
    guard let close = output.range(of: "closed window 2") else {
      Issue.record("window 2 was not closed")
      return
    }
    #expect(
      output[close.upperBound...].contains(
        "✓ SignUpSession#1's onDiscard closed it: its email and name are erased"))
    #expect(transcript.errors.isEmpty)
  }

  @Test(
    "a typo gets the nearest command; nothing near gets the list",
    arguments: [
      ("emial ada@example.com", "error: unknown command 'emial'; did you mean 'email'?"),
      ("hlep", "error: unknown command 'hlep'; did you mean 'help'?"),
      ("Statsu", "error: unknown command 'Statsu'; did you mean 'status'?"),
      ("windw new", "error: unknown command 'windw'; did you mean 'window'?"),
      ("fnish", "error: unknown command 'fnish'; did you mean 'finish'?"),
      ("bogus", "error: unknown command 'bogus': type 'help' for the list"),
      ("xyz", "error: unknown command 'xyz': type 'help' for the list"),
    ])
  func suggestions(line: String, message: String) async {
    #expect(await run([line]).errors == message)
  }

  @Test("piped commands are echoed after the prompt, so output can be matched to them")
  func pipedEcho() async {
    let lines = await run(["start", "  trace off  ", "window new", "status"]).output
      .split(separator: "\n")
    #expect(lines.first == "[window 1] > start")
    #expect(lines.contains("[window 1] > trace off"))
    #expect(lines.contains("[window 2] > status"))
    let atTerminal = await run(["start"], isTerminal: true).output
    #expect(!atTerminal.contains("> start"))
  }

  // At a terminal the greeting comes first, and the commands are not echoed.
  @Test(
    "a whole interactive session fits 80 columns, piped or at a terminal", arguments: [false, true])
  func fitsEightyColumns(isTerminal: Bool) async {
    let output = await run(
      [
        "start", "EMAIL Ada@Example.com", "back", "trace off", "profile Ada Lovelace", "trace on",
        "window new", "start", "email grace@example.com", "profile Grace Hopper", "windows",
        "window 1", "status", "graph", "finish", "status", "window 2", "status", "window close",
        "help",
      ], isTerminal: isTerminal
    ).output
    for line in output.split(separator: "\n") {
      #expect(line.displayWidth <= 80, "\(line)")
    }
  }
}
