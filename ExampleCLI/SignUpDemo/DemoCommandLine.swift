import ProviderPod

/// The executable's entry point, testable: parses arguments and runs a mode.
public enum DemoCommandLine {
  static let usage = """
    USAGE: ExampleCLI [--interactive | --graph text|dot|mermaid | --help]

    A sign-up flow built on ProviderPod that shows scopes being reused and cleared.

      (no arguments)    a scripted walk-through: each step says why, shows the app's
                        code and what the pod built, reused and discarded
      --interactive     drive the flow yourself, in one window or several; type
                        'help' at the prompt for the commands. Reads them from
                        standard input, so it also works from a pipe:

        printf 'start\\nemail ada@example.com\\nstatus\\n' | ExampleCLI --interactive

      --graph FORMAT    print the dependency graph in the middle of a sign-up, as
                        text, Graphviz DOT or Mermaid:

        ExampleCLI --graph dot | dot -Tsvg > graph.svg

      --help            this help
    """

  /// Runs the demo; returns the process exit status.
  ///
  /// - Parameters:
  ///   - arguments: The arguments after the program name.
  ///   - isTerminal: Whether standard input is a terminal: only then is there a greeting, a
  ///     prompt, and a newline after the last prompt when the input ends.
  ///   - readLine: Shows the prompt it is given (nil when input is not a terminal) and returns
  ///     the next line of input, or nil at its end.
  @MainActor
  public static func run(
    arguments: [String], transcript: Transcript, isTerminal: Bool,
    readLine: (_ prompt: String?) -> String?
  ) async -> Int32 {
    switch arguments {
    case []:
      return await ScriptedTour.run(transcript: transcript) ? 0 : 1
    case ["--help"], ["-h"]:
      transcript.write(usage)
      return 0
    case ["--interactive"], ["-i"]:
      let interpreter = CommandInterpreter(transcript: transcript)
      if isTerminal {
        transcript.write(
          "ProviderPod sign-up demo. Type 'help' for the commands, 'window new' for a\n"
            + "second window, 'quit' or Ctrl-D to leave.")
      }
      while true {
        guard let line = readLine(isTerminal ? interpreter.prompt : nil) else {
          // Ctrl-D leaves the cursor after the prompt: end that line for the shell's prompt.
          if isTerminal { transcript.write("") }
          return 0
        }
        // A terminal shows what was typed; piped input is not shown, so say which command
        // each piece of output answers.
        if !isTerminal {
          transcript.write(interpreter.prompt + line.withoutTerminalControls.trimmingWhitespace)
        }
        if await interpreter.handle(line) == .quit { return 0 }
      }
    case ["--graph"]:
      return usageError(
        "--graph needs a format: \(CommandInterpreter.graphFormats)", transcript: transcript)
    case _ where arguments.count == 2 && arguments[0] == "--graph":
      return showGraph(format: arguments[1], transcript: transcript)
    default:
      return usageError(
        "unknown arguments '\(arguments.joined(separator: " "))': see ExampleCLI --help",
        transcript: transcript)
    }

  }

  private static func usageError(_ message: String, transcript: Transcript) -> Int32 {
    transcript.write("error: \(message)", to: .error)
    return 64
  }

  @MainActor
  private static func showGraph(format: String, transcript: Transcript) -> Int32 {
    guard ["text", "dot", "mermaid"].contains(format) else {
      return usageError(
        "unknown graph format '\(format)': use \(CommandInterpreter.graphFormats)",
        transcript: transcript)
    }
    let flow = SignUpFlow(transcript: Transcript())
    flow.trace.isEnabled = false
    do {
      try flow.start()
      try flow.enterEmail("ada@example.com")
    } catch {
      transcript.write("error: \(error.message)", to: .error)
      return 1
    }
    let graph = flow.pod.dependencyGraph()
    switch format {
    case "dot": transcript.write(graph.dot())
    case "mermaid": transcript.write(graph.mermaid())
    default: transcript.write(flow.trace.labeledGraphLines(of: flow.pod).joined(separator: "\n"))
    }
    return 0
  }
}
