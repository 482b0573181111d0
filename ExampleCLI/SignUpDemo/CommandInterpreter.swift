import ProviderPod

/// Reads the interactive mode's commands, one line at a time.
@MainActor
final class CommandInterpreter {
  /// What to do after a line.
  enum Outcome: Equatable, Sendable { case proceed, quit }

  static let help = """
    Commands:
      start                 begin a sign-up (builds the flow's instances)
      email <address>       fill the email screen and continue
      profile <name>        fill the profile screen
      back                  back from the profile screen (clears ProfileStepScope)
      finish                submit the sign-up (clears SignUpFlowScope and below)
      cancel                abandon the sign-up (clears SignUpFlowScope)
      status                where you are; what the window's and the app's pods hold
      graph [dot|mermaid]   the window pod's dependency graph (text by default)
      window new            open a window (a child of the app's pod), go to it
      window <number>       switch to that window: the commands above act on it
      window, windows       list the windows; * marks the current one
      window close          close this window: its pod goes, with its instances
      trace on|off          show or hide the pod calls and what the pod did
      help                  this list
      quit                  leave (Ctrl-D or the end of input works too)
    """

  static let graphFormats = "text, dot or mermaid"

  /// What a typo is compared with, in the order of the help.
  static let commands = [
    "start", "email", "profile", "back", "finish", "cancel", "status", "graph", "window",
    "windows", "trace", "help", "quit", "exit",
  ]

  /// The app's pod and its windows.
  let app: WindowedApp
  private let transcript: Transcript

  /// The sign-up in the current window, which the commands act on.
  var flow: SignUpFlow { app.current.flow }

  /// What the terminal shows before each line: `[window 2] > `.
  var prompt: String { "[\(app.current.name)] > " }

  init(transcript: Transcript) {
    self.transcript = transcript
    app = WindowedApp(transcript: transcript)
  }

  /// Runs one line of input.
  func handle(_ line: String) async -> Outcome {
    let trimmed = line.withoutTerminalControls.trimmingWhitespace
    guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return .proceed }
    let words = trimmed.split(separator: " ", maxSplits: 1).map(String.init)
    // Commands match in any case; what is echoed back is what was typed.
    let typed = words[0]
    let command = typed.lowercased()
    let argument = words.count > 1 ? words[1].trimmingWhitespace : ""
    do {
      switch (command, argument) {
      case ("start", ""): try flow.start()
      case ("email", let address) where !address.isEmpty: try flow.enterEmail(address)
      case ("email", _): refuse("email needs an address, e.g. 'email ada@example.com'")
      case ("profile", let name) where !name.isEmpty: try flow.enterName(name)
      case ("profile", _): refuse("profile needs a name, e.g. 'profile Ada Lovelace'")
      case ("back", ""): try flow.back()
      case ("finish", ""): try await flow.finish()
      case ("cancel", ""): try flow.cancel()
      case ("status", ""): flow.status()
      case ("graph", let format): showGraph(format)
      case ("window", let argument) where argument.lowercased() == "new": app.openWindow()
      case ("window", let argument) where argument.lowercased() == "close":
        try await app.closeCurrentWindow()
      case ("window", ""), ("windows", ""): app.listWindows()
      case ("window", let number) where Int(number) != nil: try app.switchToWindow(Int(number)!)
      case ("window", _):
        refuse("window takes 'new', 'close' or a window's number, e.g. 'window 2'")
      case ("trace", let setting) where ["on", "off"].contains(setting.lowercased()):
        flow.trace.isEnabled = setting.lowercased() == "on"
        transcript.write(
          flow.trace.isEnabled
            ? "  trace on: each step shows its pod calls (▸) and what the pod did"
            : "  trace off: only the screens are shown")
      case ("trace", _): refuse("trace takes 'on' or 'off'")
      case ("help", ""): transcript.write(Self.help)
      case ("quit", ""), ("exit", ""): return .quit
      case ("start", _), ("back", _), ("finish", _), ("cancel", _), ("status", _), ("help", _),
        ("quit", _), ("exit", _), ("windows", _):
        refuse("'\(typed)' takes no argument")
      default:
        if let nearest = CommandSuggestion.nearest(to: command, among: Self.commands) {
          refuse("unknown command '\(typed)'; did you mean '\(nearest)'?")
        } else {
          refuse("unknown command '\(typed)': type 'help' for the list")
        }
      }
    } catch {
      refuse(error.message)
    }
    return .proceed
  }

  private func showGraph(_ format: String) {
    switch format.lowercased() {
    case "", "text":
      let lines = flow.trace.labeledGraphLines(of: flow.pod)
      transcript.write(
        lines.isEmpty
          ? "  (nothing cached)"
          : lines.map { ("  " + $0).fitted(indent: "        ") }.joined(separator: "\n"))
    case "dot": transcript.write(flow.pod.dependencyGraph().dot())
    case "mermaid": transcript.write(flow.pod.dependencyGraph().mermaid())
    default: refuse("unknown graph format '\(format)': use \(Self.graphFormats)")
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

  /// The text without terminal escape sequences (arrow keys typed where no line editor ran
  /// arrive as `ESC [ D`) or other control characters, so nothing echoed back can move the
  /// cursor. Tabs become spaces.
  var withoutTerminalControls: String {
    var scalars = String.UnicodeScalarView()
    var filter = EscapeSequenceFilter()
    for scalar in unicodeScalars {
      guard filter.accepts(scalar) else { continue }
      if scalar == "\t" {
        scalars.append(" ")
      } else if !scalar.properties.generalCategory.isControl {
        scalars.append(scalar)
      }
    }
    return String(scalars)
  }
}

extension Unicode.GeneralCategory {
  fileprivate var isControl: Bool { self == .control }
}
