import Foundation

/// What a test would write, here because the tour shows a test: an `HTTPClient` that answers
/// like a healthy server and records every request.
final class RecordingHTTPClient: HTTPClient, @unchecked Sendable {
  private let lock = NSLock()
  private var recorded: [String] = []

  /// Every request so far, as `POST /path body`.
  var requests: [String] { lock.withLock { recorded } }

  func post(_ path: String, body: String) -> Int {
    lock.withLock { recorded.append("POST \(path) \(body)".trimmingWhitespace) }
    return path == "/signup" ? 201 : 200
  }
}
