import Testing

@testable import SignUpDemo

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

  @Test("--help fits an 80-column terminal")
  func helpFitsEightyColumns() async {
    let (_, transcript) = await run(["--help"])
    for line in transcript.output.split(separator: "\n") {
      #expect(line.displayWidth <= 80, "\(line)")
    }
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
