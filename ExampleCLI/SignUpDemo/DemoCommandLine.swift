import ProviderPod

/// The executable's entry point, testable: parses arguments and runs a mode.
public enum DemoCommandLine {
  static let usage = """
    USAGE: ExampleCLI [--interactive | --graph text|dot|mermaid | --help]

    A sign-up flow built on ProviderPod that shows scopes being reused and cleared.

      (no arguments)      a scripted walk-through: each step prints what the pod built,
                          reused and discarded, then the dependency graph
      --interactive       drive the flow yourself; type 'help' at the prompt. Reads commands
                          from standard input, so it also works from a pipe:
                            printf 'start\\nemail ada@example.com\\nstatus\\n' | ExampleCLI --interactive
      --graph FORMAT      print the dependency graph in the middle of a sign-up, as text,
                          Graphviz DOT or Mermaid:  ExampleCLI --graph dot | dot -Tsvg > graph.svg
      --help              this help
    """

  /// Runs the demo; returns the process exit status.
  ///
  /// - Parameters:
  ///   - arguments: The arguments after the program name.
  ///   - readLine: The next line of standard input, or nil at its end.
  ///   - isTerminal: Whether standard input is a terminal (prompts are shown only then).
  public static func run(
    arguments: [String], transcript: Transcript, isTerminal: Bool,
    readLine: () -> String?, prompt: (String) -> Void = { _ in }
  ) async -> Int32 {
    if arguments.isEmpty {
      return await ScriptedTour.run(transcript: transcript) ? 0 : 1
    }
    if arguments == ["--help"] || arguments == ["-h"] {
      transcript.write(usage)
      return 0
    }
    if arguments == ["--interactive"] || arguments == ["-i"] {
      let interpreter = CommandInterpreter(transcript: transcript)
      if isTerminal {
        transcript.write("ProviderPod sign-up demo. Type 'help' for the commands, 'quit' to leave.")
      }
      while true {
        if isTerminal { prompt("> ") }
        guard let line = readLine() else { return 0 }
        if interpreter.handle(line) == .quit { return 0 }
      }
    }
    if arguments.count == 2, arguments[0] == "--graph",
      ["text", "dot", "mermaid"].contains(arguments[1])
    {
      let format = arguments[1]
      let quiet = Transcript()
      let flow = SignUpFlow(pod: Pod(), transcript: quiet)
      do {
        try flow.start()
        try flow.enterEmail("ada@example.com")
      } catch {
        transcript.write("error: \(error.message)", to: .error)
        return 1
      }
      let graph = flow.pod.dependencyGraph().withoutDemoPlumbing
      switch format {
      case "dot": transcript.write(graph.dot())
      case "mermaid": transcript.write(graph.mermaid())
      default: transcript.write(flow.pod.labeledGraphLines().joined(separator: "\n"))
      }
      return 0
    }
    transcript.write(
      "error: unknown arguments '\(arguments.joined(separator: " "))': see ExampleCLI --help",
      to: .error)
    return 64
  }
}
