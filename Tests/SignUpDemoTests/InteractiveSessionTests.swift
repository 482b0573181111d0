import ProviderPod
import Testing

@testable import SignUpDemo

/// Feeds lines to the interactive mode the way a pipe would.
private func runInteractive(
  _ lines: [String], isTerminal: Bool = false, prompts: Shared<Int>? = nil
) async -> (status: Int32, transcript: Transcript, unread: Int) {
  let transcript = Transcript()
  var input = lines[...]
  let status = await DemoCommandLine.run(
    arguments: ["--interactive"], transcript: transcript, isTerminal: isTerminal,
    readLine: { input.popFirst() },
    prompt: { _ in prompts?.increment() })
  return (status, transcript, input.count)
}

final class Shared<Value>: @unchecked Sendable {
  var value: Value
  init(_ value: Value) { self.value = value }
}

extension Shared where Value == Int {
  func increment() { value += 1 }
}

@Suite("Interactive session")
struct InteractiveSessionTests {
  @Test("a whole sign-up from a pipe: no prompts, exit 0 at end of input")
  func wholeSession() async {
    let prompts = Shared(0)
    let (status, transcript, _) = await runInteractive(
      [
        "start", "email ada@example.com", "back", "profile Ada Lovelace", "status", "graph",
        "finish", "status",
      ], prompts: prompts)
    #expect(status == 0)
    #expect(prompts.value == 0)
    #expect(transcript.errors.isEmpty)
    let output = transcript.output
    #expect(output.contains("✓ SignUpSession#1 now holds email ada@example.com"))
    #expect(output.contains("- discarded  ProfileStepViewModel#1"))
    #expect(output.contains("✓ SignUpSession#1 now holds name Ada Lovelace"))
    #expect(
      output.contains(
        "ProfileStepViewModel#2 (ProfileStepScope) <- NameValidator#2, SignUpSession#1"))
    #expect(output.contains("status 201"))
    #expect(
      output.hasSuffix(
        "  cached instances: 3\n    AnalyticsLog#1           SingletonScope\n    AppConfiguration#1       SingletonScope\n    HTTPClient#1             SingletonScope"
      ))
  }

  @Test("at a terminal it greets and prompts before every line")
  func terminal() async {
    let prompts = Shared(0)
    let (status, transcript, _) = await runInteractive(
      ["help", "status"], isTerminal: true, prompts: prompts)
    #expect(status == 0)
    #expect(prompts.value == 3)  // two commands, then the end of input
    #expect(transcript.output.hasPrefix("ProviderPod sign-up demo."))
    #expect(transcript.output.contains("graph [dot|mermaid]"))
  }

  @Test("quit stops reading input")
  func quit() async {
    let (status, _, unread) = await runInteractive(["start", "quit", "finish"])
    #expect(status == 0)
    #expect(unread == 1)
  }

  @Test(
    "bad commands and arguments get one error line each and the session goes on",
    arguments: [
      ("bogus", "error: unknown command 'bogus': type 'help' for the list"),
      ("email", "error: email needs an address, e.g. 'email ada@example.com'"),
      ("profile   ", "error: profile needs a name, e.g. 'profile Ada Lovelace'"),
      ("trace maybe", "error: trace takes 'on' or 'off'"),
      ("graph png", "error: graph takes 'dot', 'mermaid' or nothing"),
      ("status now", "error: 'status' takes no argument"),
      ("email ada@example.com", "error: no sign-up in progress: type 'start' first"),
      ("back", "error: no sign-up in progress: type 'start' first"),
      ("finish", "error: no sign-up in progress: type 'start' first"),
      ("cancel", "error: no sign-up in progress"),
    ])
  func errors(line: String, message: String) async {
    let (status, transcript, _) = await runInteractive([line, "status"])
    #expect(status == 0)
    #expect(transcript.errors == message)
    #expect(transcript.output.contains("screen: no sign-up in progress"))
  }

  @Test("the flow refuses what a screen does not allow")
  func refusals() async {
    let (_, transcript, _) = await runInteractive([
      "start", "start", "back", "profile Ada", "finish", "email nope", "email a@b.co",
      "email again@b.co", "profile A", "finish", "cancel", "status",
    ])
    #expect(
      transcript.errors.split(separator: "\n") == [
        "error: a sign-up is already in progress: finish or cancel it first",
        "error: the email screen is the first one: use 'cancel' to leave the sign-up",
        "error: enter an email first: email <address>",
        "error: the sign-up needs an email and a name before it can finish",
        "error: you are on the profile screen: go 'back' first",
        "error: the sign-up needs an email and a name before it can finish",
      ])
    #expect(transcript.output.contains("✗ 'nope' is not an email address"))
    #expect(transcript.output.contains("✗ a name needs at least 2 characters"))
    #expect(transcript.output.contains("cancelling clears SignUpFlowScope"))
    #expect(transcript.output.contains("✓ SignUpSession#1 closed by onDiscard: form data erased"))
    #expect(transcript.output.contains("screen: no sign-up in progress"))
  }

  @Test("trace off hides the pod's events; comments and blank lines are ignored")
  func traceOff() async {
    let (_, transcript, _) = await runInteractive([
      "# a comment", "", "trace off", "start", "trace on", "cancel",
    ])
    #expect(!transcript.output.contains("+ built"))
    #expect(transcript.output.contains("- discarded  SignUpSession#1"))
    #expect(transcript.errors.isEmpty)
  }

  @Test("graph dot and graph mermaid print the renderings")
  func graphFormats() async {
    let (_, transcript, _) = await runInteractive([
      "trace off", "start", "graph dot", "graph mermaid",
    ])
    #expect(transcript.output.contains("digraph ProviderPod {"))
    #expect(transcript.output.contains("flowchart LR"))
    #expect(!transcript.output.contains("InstanceLabels"))
  }
}

@Suite("Command line")
struct CommandLineTests {
  private func run(_ arguments: [String]) async -> (Int32, Transcript) {
    let transcript = Transcript()
    let status = await DemoCommandLine.run(
      arguments: arguments, transcript: transcript, isTerminal: false, readLine: { nil })
    return (status, transcript)
  }

  @Test("--help explains both modes")
  func help() async {
    let (status, transcript) = await run(["--help"])
    #expect(status == 0)
    #expect(transcript.output.contains("--interactive"))
    #expect(transcript.output.contains("a scripted walk-through"))
  }

  @Test("unknown arguments are a usage error")
  func unknownArguments() async {
    let (status, transcript) = await run(["--fly"])
    #expect(status == 64)
    #expect(transcript.errors == "error: unknown arguments '--fly': see ExampleCLI --help")
  }

  @Test("--graph prints the graph of a sign-up in progress", arguments: ["text", "dot", "mermaid"])
  func graph(format: String) async {
    let (status, transcript) = await run(["--graph", format])
    #expect(status == 0)
    #expect(transcript.output.contains("ProfileStepViewModel"))
    #expect(transcript.errors.isEmpty)
  }

  @Test("no arguments runs the scripted tour")
  func tour() async {
    let (status, transcript) = await run([])
    #expect(status == 0)
    #expect(transcript.output.hasPrefix("ProviderPod demo: a sign-up flow"))
  }
}
