import Foundation

/// Where the demo writes: echoed to the terminal by the executable, kept for tests.
public final class Transcript: @unchecked Sendable {
  /// Which stream a line goes to.
  public enum Stream: Sendable { case output, error }

  private let lock = NSLock()
  private var lines: [(stream: Stream, text: String)] = []
  private let echo: Bool

  /// - Parameter echo: Also print each line to standard output or standard error at once.
  public init(echo: Bool = false) { self.echo = echo }

  /// Writes one line.
  public func write(_ text: String = "", to stream: Stream = .output) {
    lock.withLock { lines.append((stream, text)) }
    guard echo else { return }
    // Unbuffered writes, so output and errors interleave as they happened.
    let handle = stream == .output ? FileHandle.standardOutput : FileHandle.standardError
    handle.write(Data((text + "\n").utf8))
  }

  /// Everything written to standard output, one line each.
  public var output: String { text(of: .output) }
  /// Everything written to standard error, one line each.
  public var errors: String { text(of: .error) }

  private func text(of stream: Stream) -> String {
    lock.withLock { lines.filter { $0.stream == stream }.map(\.text).joined(separator: "\n") }
  }
}
