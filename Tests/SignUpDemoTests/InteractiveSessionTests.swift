import ProviderPod
import Testing

@testable import SignUpDemo

/// What an interactive run printed and asked for.
struct Session {
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
func runInteractive(_ lines: [String], isTerminal: Bool = false) async -> Session {
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

  @Test("graph dot and graph mermaid print the renderings")
  func graphFormats() async {
    let session = await runInteractive(["trace off", "start", "graph dot", "graph mermaid"])
    #expect(session.output.contains("digraph ProviderPod {"))
    #expect(session.output.contains("flowchart LR"))
    #expect(session.output.contains("EmailStepViewModel"))
  }
}
