import Foundation
import ProviderPod

/// Where the tool writes its answer.
public protocol Output: Sendable {
  func write(_ line: String)
}

struct StandardOutput: Output {
  func write(_ line: String) { print(line) }
}

/// The terminal: tests must give their own, or the test run's output fills with the tool's.
public let outputProvider = Provider<any Output>(name: "output") { pod in
  pod.requireReplacementInTests()
  return StandardOutput()
}

/// The hour of the day, from the real clock: tests must fix it, or they pass only at some
/// hours.
public let hourProvider = Provider<@Sendable () -> Int>(name: "hour") { pod in
  pod.requireReplacementInTests()
  return { Calendar.current.component(.hour, from: Date()) }
}

/// Picks the greeting for the hour.
public struct Greeter: Sendable {
  let hour: @Sendable () -> Int

  /// "Good morning, Ada!", or afternoon, or evening.
  public func greet(_ name: String) -> String {
    let hour = hour()
    let part = hour < 12 ? "morning" : hour < 18 ? "afternoon" : "evening"
    return "Good \(part), \(name)!"
  }
}

/// The greeter, on the hour of the day.
public let greeterProvider = Provider(name: "greeter") { pod in
  Greeter(hour: pod.resolve(hourProvider))
}
