import ProviderPod

/// Reads the interactive mode's commands, one line at a time.
final class CommandInterpreter {
  /// What to do after a line.
  enum Outcome: Equatable, Sendable { case proceed, quit }

  static let help = """
    Commands:
      start               begin a sign-up (builds the flow's instances)
      email <address>     fill the email screen and continue
      profile <name>      fill the profile screen
      back                go back from the profile screen (clears ProfileStepScope)
      finish              submit the sign-up (clears SignUpFlowScope and both step scopes)
      cancel              abandon the sign-up (clears SignUpFlowScope)
      status              where you are and what the pod holds
      graph [dot|mermaid] the dependency graph (plain text by default)
      trace on|off        show or hide what the pod builds, reuses and discards
      help                this list
      quit                leave (end of input works too)
    """

  let flow: SignUpFlow
  private let trace: TraceObserver
  private let transcript: Transcript

  init(transcript: Transcript) {
    self.transcript = transcript
    trace = TraceObserver(transcript: transcript)
    flow = SignUpFlow(pod: Pod(observer: trace), transcript: transcript)
  }

  /// Runs one line of input.
  func handle(_ line: String) -> Outcome {
    let trimmed = line.trimmingWhitespace
    guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return .proceed }
    let words = trimmed.split(separator: " ", maxSplits: 1).map(String.init)
    let command = words[0].lowercased()
    let argument = words.count > 1 ? words[1].trimmingWhitespace : ""
    do {
      switch (command, argument) {
      case ("start", ""): try flow.start()
      case ("email", let address) where !address.isEmpty: try flow.enterEmail(address)
      case ("email", _): refuse("email needs an address, e.g. 'email ada@example.com'")
      case ("profile", let name) where !name.isEmpty: try flow.enterName(name)
      case ("profile", _): refuse("profile needs a name, e.g. 'profile Ada Lovelace'")
      case ("back", ""): try flow.back()
      case ("finish", ""): try flow.finish()
      case ("cancel", ""): try flow.cancel()
      case ("status", ""): flow.status()
      case ("graph", let format): showGraph(format)
      case ("trace", "on"): trace.isEnabled = true
      case ("trace", "off"): trace.isEnabled = false
      case ("trace", _): refuse("trace takes 'on' or 'off'")
      case ("help", ""): transcript.write(Self.help)
      case ("quit", ""), ("exit", ""): return .quit
      case ("start", _), ("back", _), ("finish", _), ("cancel", _), ("status", _), ("help", _),
        ("quit", _), ("exit", _):
        refuse("'\(command)' takes no argument")
      default:
        refuse("unknown command '\(command)': type 'help' for the list")
      }
    } catch {
      refuse(error.message)
    }
    return .proceed
  }

  private func showGraph(_ format: String) {
    let graph = flow.pod.dependencyGraph().withoutDemoPlumbing
    switch format {
    case "", "text":
      let lines = flow.pod.labeledGraphLines()
      transcript.write(
        lines.isEmpty ? "  (nothing cached)" : lines.map { "  " + $0 }.joined(separator: "\n"))
    case "dot": transcript.write(graph.dot(), to: .output)
    case "mermaid": transcript.write(graph.mermaid(), to: .output)
    default: refuse("graph takes 'dot', 'mermaid' or nothing")
    }
  }

  private func refuse(_ message: String) {
    transcript.write("error: \(message)", to: .error)
  }
}

extension String {
  var trimmingWhitespace: String {
    let characters = drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
    return String(characters)
  }
}
