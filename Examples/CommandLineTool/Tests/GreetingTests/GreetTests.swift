import Foundation
import Greeting
import ProviderPod
import ProviderPodTesting
import Testing

/// Keeps what the command writes.
final class RecordedOutput: Output, @unchecked Sendable {
  private let lock = NSLock()
  private var written: [String] = []

  func write(_ line: String) {
    lock.lock()
    defer { lock.unlock() }
    written.append(line)
  }

  var lines: [String] {
    lock.lock()
    defer { lock.unlock() }
    return written
  }
}

/// Each test's pod builds its own recorder; the test reads it back through the app's pod.
let recordedOutput = outputProvider.override { _ in RecordedOutput() }

func written() -> [String] {
  (appPod.resolve(outputProvider) as? RecordedOutput)?.lines ?? []
}

// The two tests run at the same time, each with its own hour: neither sees the other's.
@Suite struct GreetTests {
  @Test(.isolated(appPod, overrides: [recordedOutput, hourProvider.override(withValue: { 8 })]))
  func greetsInTheMorning() async throws {
    let command = try Greet.parse(["Ada"])
    try await command.run()
    #expect(written() == ["Good morning, Ada!"])
  }

  @Test(.isolated(appPod, overrides: [recordedOutput, hourProvider.override(withValue: { 20 })]))
  func greetsInTheEvening() async throws {
    let command = try Greet.parse(["Grace"])
    try await command.run()
    #expect(written() == ["Good evening, Grace!"])
  }

  @Test(.isolated(appPod, overrides: [recordedOutput]))
  func aTestThatForgetsTheHourFailsWithTheFix() async throws {
    let command = try Greet.parse(["Ada"])
    try await withKnownIssue {
      try await command.run()
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("hour (Services.swift:") }
    }
  }
}
