import Foundation
import SignUpDemo

// Everything testable lives in SignUpDemo; this only connects it to the process.
let status = await DemoCommandLine.run(
  arguments: Array(CommandLine.arguments.dropFirst()),
  transcript: Transcript(echo: true),
  isTerminal: isatty(STDIN_FILENO) == 1,
  readLine: { readLine() },
  prompt: { FileHandle.standardOutput.write(Data($0.utf8)) })
exit(status)
