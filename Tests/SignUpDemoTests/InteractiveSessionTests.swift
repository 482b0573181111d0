import ProviderPod
import Testing

@testable import SignUpDemo

/// What an interactive run printed and asked for.
private struct Session {
  let status: Int32
  let transcript: Transcript
  /// The prompt passed to each read, nil when input is not a terminal.
  let prompts: [String?]
  /// Lines never read.
  let unread: Int

  var output: String { transcript.output }
  var errors: String { transcript.errors }
  var outputLines: [Substring] { output.split(separator: "\n", omittingEmptySubsequences: false) }
}

/// Feeds lines to the interactive mode the way a pipe (or a terminal) would.
@MainActor
private func runInteractive(_ lines: [String], isTerminal: Bool = false) async -> Session {
  let transcript = Transcript()
  var input = lines[...]
  var prompts: [String?] = []
  let status = await DemoCommandLine.run(
    arguments: ["--interactive"], transcript: transcript, isTerminal: isTerminal,
    readLine: { prompt in
      prompts.append(prompt)
      return input.popFirst()
    })
  return Session(status: status, transcript: transcript, prompts: prompts, unread: input.count)
}

@Suite("Interactive session")
@MainActor
struct InteractiveSessionTests {
  @Test("a whole sign-up from a pipe: no prompts, exit 0 at end of input")
  func wholeSession() async {
    let session = await runInteractive([
      "start", "email ada@example.com", "back", "profile Ada Lovelace", "status", "graph",
      "finish", "status",
    ])
    #expect(session.status == 0)
    #expect(session.prompts.allSatisfy { $0 == nil })
    #expect(session.errors.isEmpty)
    let output = session.output
    #expect(output.contains("✓ SignUpSession#1 now holds email ada@example.com"))
    #expect(output.contains("- discarded  ProfileStepViewModel#1"))
    #expect(output.contains("✓ SignUpSession#1 now holds name Ada Lovelace"))
    #expect(
      output.contains(
        "ProfileStepViewModel#2 (ProfileStepScope) <- NameValidator#2, SignUpSession#1"))
    #expect(output.contains("through DemoServerClient: status 201"))
    #expect(
      output.contains("✓ SignUpSession#1's onDiscard closed it: its email and name are erased"))
    // After the sign-up only the app-wide instances are left.
    let status = session.outputLines.drop { !$0.hasPrefix("  screen: no sign-up") }
    #expect(
      Array(status) == [
        "  screen: no sign-up in progress",
        "  cached in [window 1]: 0",
        "  cached in [app], shared by every window: 4",
        "    AppConfiguration#1                       SingletonScope",
        "    HTTPClient#1                             SingletonScope",
        "    SignUpConfiguration#1                    SingletonScope",
        "    SignUpService#1                          SingletonScope",
      ])
  }

  @Test("at a terminal it greets, prompts before every read, and ends the line at Ctrl-D")
  func terminal() async {
    let session = await runInteractive(["help", "status"], isTerminal: true)
    #expect(session.status == 0)
    // Two commands, then the end of input.
    #expect(session.prompts == ["[window 1] > ", "[window 1] > ", "[window 1] > "])
    #expect(session.output.hasPrefix("ProviderPod sign-up demo."))
    #expect(session.output.contains("graph [dot|mermaid]"))
    #expect(session.output.contains("window new "))
    #expect(session.output.contains("window close "))
    // The end of input leaves the cursor after "> ": a newline puts the shell's prompt below.
    #expect(session.outputLines.last == "")
  }

  @Test("from a pipe the end of input adds no blank line")
  func pipeEnd() async {
    let session = await runInteractive(["status"])
    #expect(session.outputLines.last != "")
  }

  @Test("quit stops reading input")
  func quit() async {
    let session = await runInteractive(["start", "quit", "finish"])
    #expect(session.status == 0)
    #expect(session.unread == 1)
  }

  @Test("input is echoed as typed; commands match in any case")
  func echoAsTyped() async {
    let session = await runInteractive([
      "FOO", "Status Now", "START", "EMAIL Ada@Example.COM", "Graph PNG",
    ])
    #expect(
      session.errors.split(separator: "\n") == [
        "error: unknown command 'FOO': type 'help' for the list",
        "error: 'Status' takes no argument",
        "error: unknown graph format 'PNG': use text, dot or mermaid",
      ])
    #expect(session.output.contains("✓ SignUpSession#1 now holds email Ada@Example.COM"))
  }

  @Test("terminal escape sequences are dropped, so nothing echoed can move the cursor")
  func escapeSequences() async {
    // What arrow keys put in a line when no line editor runs: "stat", Left, Left, "us".
    let session = await runInteractive([
      "stat\u{1B}[D\u{1B}[Dus", "bo\u{1B}[1;5Cgus\u{1B}]0;title\u{07}\u{1B}OH\t",
    ])
    #expect(session.output.contains("  screen: no sign-up in progress"))
    #expect(session.errors == "error: unknown command 'bogus': type 'help' for the list")
    #expect(!session.output.contains("\u{1B}"))
  }

  @Test(
    "bad commands and arguments get one error line each and the session goes on",
    arguments: [
      ("bogus", "error: unknown command 'bogus': type 'help' for the list"),
      ("email", "error: email needs an address, e.g. 'email ada@example.com'"),
      ("profile   ", "error: profile needs a name, e.g. 'profile Ada Lovelace'"),
      ("trace maybe", "error: trace takes 'on' or 'off'"),
      ("graph png", "error: unknown graph format 'png': use text, dot or mermaid"),
      ("status now", "error: 'status' takes no argument"),
      ("email ada@example.com", "error: no sign-up in progress: type 'start' first"),
      ("back", "error: no sign-up in progress: type 'start' first"),
      ("finish", "error: no sign-up in progress: type 'start' first"),
      ("cancel", "error: no sign-up in progress"),
      ("window 2", "error: there is no window 2: only window 1 is open"),
      ("window close", "error: window 1 is the last window: 'quit' leaves the demo"),
      ("window fly", "error: window takes 'new', 'close' or a window's number, e.g. 'window 2'"),
      ("windows all", "error: 'windows' takes no argument"),
    ])
  func errors(line: String, message: String) async {
    let session = await runInteractive([line, "status"])
    #expect(session.status == 0)
    #expect(session.errors == message)
    #expect(session.output.contains("screen: no sign-up in progress"))
  }

  @Test("the flow refuses what a screen does not allow")
  func refusals() async {
    let session = await runInteractive([
      "start", "start", "back", "profile Ada", "finish", "email nope", "email a@b.co",
      "email again@b.co", "profile A", "finish", "cancel", "status",
    ])
    #expect(
      session.errors.split(separator: "\n") == [
        "error: a sign-up is already in progress: finish or cancel it first",
        "error: the email screen is the first one: use 'cancel' to leave the sign-up",
        "error: enter an email first: email <address>",
        "error: the sign-up needs an email and a name before it can finish",
        "error: you are on the profile screen: go 'back' first",
        "error: the sign-up needs an email and a name before it can finish",
      ])
    #expect(session.output.contains("✗ 'nope' is not an email address"))
    #expect(session.output.contains("✗ a name needs at least 2 characters"))
    #expect(session.output.contains("  sign-up cancelled"))
    #expect(session.output.contains("✓ SignUpSession#1's onDiscard closed it"))
    #expect(session.output.contains("screen: no sign-up in progress"))
  }

  @Test(
    "an address needs text before and after its last @ and no spaces; dotless domains are fine",
    arguments: [
      ("a@b", true), ("ada@example.com", true), ("postmaster@localhost", true),
      ("\"a@b\"@example.com", true), ("nope", false), ("@example.com", false), ("ada@", false),
      ("ada lovelace@example.com", false),
    ])
  func emailRule(address: String, accepted: Bool) async {
    let session = await runInteractive(["start", "email \(address)"])
    #expect(session.output.contains("✓ SignUpSession#1 now holds email \(address)") == accepted)
    #expect(session.output.contains("is not an email address") == !accepted)
  }

  @Test("an address the server knows is refused, and asked about once per sign-up")
  func takenAddress() async {
    let session = await runInteractive([
      "start", "email taken@example.com", "email taken@example.com",
    ])
    #expect(session.output.contains("✗ taken@example.com already has an account"))
    #expect(session.output.contains("+ built      EmailAvailability(taken@example.com)#1"))
    #expect(session.output.contains("= reused     EmailAvailability(taken@example.com)#1"))
    #expect(!session.output.contains("on the profile screen"))
  }

  @Test("trace on and off say what they did, and trace off hides the pod's calls and events")
  func traceOnOff() async {
    let session = await runInteractive([
      "# a comment", "", "trace off", "start", "email ada@example.com", "back", "trace on",
      "cancel",
    ])
    let output = session.output
    #expect(output.contains("  trace off: only the screens are shown"))
    #expect(output.contains("  trace on: each step shows its pod calls (▸)"))
    #expect(!output.contains("+ built"))
    #expect(!output.contains("▸ window1.clearCachedInstances(forScope: ProfileStepScope())"))
    #expect(output.contains("  back on the email screen: it still shows ada@example.com"))
    #expect(output.contains("▸ window1.clearCachedInstances(forScope: SignUpFlowScope())"))
    #expect(output.contains("- discarded  SignUpSession#1"))
    // Nothing announces output that trace off then hides.
    #expect(!session.outputLines.contains { $0.hasSuffix(":") })
    #expect(session.errors.isEmpty)
  }

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

  @Test("graph dot and graph mermaid print the renderings")
  func graphFormats() async {
    let session = await runInteractive(["trace off", "start", "graph dot", "graph mermaid"])
    #expect(session.output.contains("digraph ProviderPod {"))
    #expect(session.output.contains("flowchart LR"))
    #expect(session.output.contains("EmailStepViewModel"))
  }
}

@Suite("Command line")
@MainActor
struct CommandLineTests {
  private func run(_ arguments: [String]) async -> (Int32, Transcript) {
    let transcript = Transcript()
    let status = await DemoCommandLine.run(
      arguments: arguments, transcript: transcript, isTerminal: false, readLine: { _ in nil })
    return (status, transcript)
  }

  @Test("--help explains both modes")
  func help() async {
    let (status, transcript) = await run(["--help"])
    #expect(status == 0)
    #expect(transcript.output.contains("--interactive"))
    #expect(transcript.output.contains("a scripted walk-through"))
  }

  @Test(
    "unknown arguments are a usage error that says what would work",
    arguments: [
      (["--fly"], "error: unknown arguments '--fly': see ExampleCLI --help"),
      (["--graph"], "error: --graph needs a format: text, dot or mermaid"),
      (["--graph", "png"], "error: unknown graph format 'png': use text, dot or mermaid"),
    ])
  func unknownArguments(arguments: [String], message: String) async {
    let (status, transcript) = await run(arguments)
    #expect(status == 64)
    #expect(transcript.errors == message)
  }

  @Test("--graph prints the graph of a sign-up in progress", arguments: ["text", "dot", "mermaid"])
  func graph(format: String) async {
    let (status, transcript) = await run(["--graph", format])
    #expect(status == 0)
    #expect(transcript.output.contains("ProfileStepViewModel"))
    #expect(transcript.output.contains("EmailAvailability(ada@example.com)"))
    #expect(transcript.errors.isEmpty)
  }

  @Test("no arguments runs the scripted tour")
  func tour() async {
    let (status, transcript) = await run([])
    #expect(status == 0)
    #expect(transcript.output.hasPrefix("ProviderPod demo: a sign-up flow"))
  }
}
