import Testing

@testable import ProviderPod

/// A sleep for retry policies that waits for the test instead of a clock: each call is
/// announced on `requests`, and returns when the test calls `wake()`, or throws
/// `CancellationError` when its task is cancelled, as `Task.sleep` does.
final class ManualSleep: Sendable {
  private struct State {
    var waiting: [Int: CheckedContinuation<Void, any Error>] = [:]
    var nextID = 0
    var cancellations = 0
  }

  private let state = Shared(State())
  let requests: AsyncStream<Duration>
  private let announce: AsyncStream<Duration>.Continuation

  init() { (requests, announce) = AsyncStream.makeStream() }

  /// Pass this as a policy's `sleep`.
  @Sendable func sleep(_ delay: Duration) async throws {
    let id = state.withLock { state in
      state.nextID += 1
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let cancelled = state.withLock { state in
          if Task.isCancelled {
            state.cancellations += 1
            return true
          }
          state.waiting[id] = continuation
          return false
        }
        if cancelled {
          continuation.resume(throwing: CancellationError())
        } else {
          announce.yield(delay)
        }
      }
    } onCancel: {
      let continuation = state.withLock { state in
        let continuation = state.waiting.removeValue(forKey: id)
        if continuation != nil { state.cancellations += 1 }
        return continuation
      }
      continuation?.resume(throwing: CancellationError())
    }
  }

  /// Ends every sleep in progress, as if its time had passed.
  func wake() {
    let waiting = state.withLock { state in
      defer { state.waiting = [:] }
      return state.waiting
    }
    for continuation in waiting.values { continuation.resume() }
  }

  /// How many sleeps ended because their task was cancelled.
  var cancellations: Int { state.withLock { $0.cancellations } }
}

/// Suspends until the task is cancelled, then throws `CancellationError`: a builder that
/// never finishes by itself.
func waitUntilCancelled() async throws {
  let (stream, continuation) = AsyncStream<Void>.makeStream()
  for await _ in stream {}
  // Kept until here: a stream whose continuation is gone could end without a cancellation.
  continuation.finish()
  throw CancellationError()
}

/// An error a test builder throws.
struct Flaky: Error, Equatable, CustomStringConvertible {
  let attempt: Int
  var description: String { "flaky #\(attempt)" }
}

/// The failed attempts an observer saw, as (provider, attempt, retrying in).
func failures(in events: [PodEvent]) -> [(String, Int, Duration?)] {
  events.compactMap { event in
    guard case .buildFailed(let provider, let attempt, _, let retryingIn) = event else {
      return nil
    }
    return (provider, attempt, retryingIn)
  }
}
