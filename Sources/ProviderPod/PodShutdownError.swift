/// What went wrong in ``Pod/shutdown(timeout:)``: the cleanups that threw, and those that had
/// not finished when it stopped waiting.
public struct PodShutdownError: Error, CustomStringConvertible {
  /// A cleanup that threw.
  public struct Failure: Sendable {
    /// The provider whose instance it was cleaning up.
    public let provider: String
    /// What the `onDiscard` hook threw.
    public let error: any Error
  }

  /// Every cleanup that threw, in the order they ended.
  public let failures: [Failure]
  /// The providers whose cleanup had not finished at the timeout: running then, or waiting for
  /// the cleanups of what was built from their instance.
  public let unfinished: [String]

  /// One line per cleanup that failed or did not finish.
  public var description: String {
    var lines = ["ProviderPod: the pod's shutdown did not complete cleanly:"]
    for failure in failures {
      lines.append("  \(failure.provider): onDiscard threw \(failure.error)")
    }
    for provider in unfinished {
      lines.append("  \(provider): onDiscard had not finished at the timeout")
    }
    return lines.joined(separator: "\n")
  }
}

/// What an async resolve throws when its pod, or an ancestor of it, has been shut down
/// (``Pod/shutdown(timeout:)``). A synchronous resolve stops the program instead.
public struct ResolveAfterShutdownError: Error, CustomStringConvertible {
  /// The provider that was resolved.
  public let provider: String
  /// What happened and what to do instead.
  public let description: String

  init(provider: String, message: String) {
    self.provider = provider
    self.description = message
  }
}
