import Foundation
import SignUpDemo

// Everything testable lives in SignUpDemo; this only connects it to the process.
let terminal = TerminalLineReader()
let status = await DemoCommandLine.run(
  arguments: Array(CommandLine.arguments.dropFirst()),
  transcript: Transcript(echo: true),
  isTerminal: terminal != nil,
  readLine: { prompt in
    guard let prompt else { return readLine() }
    return terminal?.readLine(prompt: prompt)
  })
exit(status)
