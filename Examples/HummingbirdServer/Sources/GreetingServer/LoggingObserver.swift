import Logging
import ProviderPod

/// Writes what a pod does to a swift-log `Logger`: the app's pod to the app's logger, each
/// request's pod to the request's logger, so a request's builds and its disposals at the end
/// of the request carry the request's id.
///
/// Builds and disposals are logged at `debug`, reuses of cached instances (one per resolve)
/// at `trace`, and what is likely a mistake (a captive dependency, a provider made again, a
/// build that failed) at `warning` or `error`. Messages are only made when the level is on.
public struct LoggingObserver: PodObserver {
  let logger: Logger

  /// An observer that writes to `logger`.
  public init(logger: Logger) {
    self.logger = logger
  }

  /// Logs the event at its level.
  public func pod(_ pod: Pod, didReport event: PodEvent) {
    logger.log(level: Self.level(of: event), "\(event)")
  }

  static func level(of event: PodEvent) -> Logger.Level {
    switch event {
    case .reused: .trace
    case .built, .discarded, .overridden: .debug
    case .captiveDependency, .providerRecreated: .warning
    case .buildFailed(_, _, _, let retryingIn): retryingIn == nil ? .error : .warning
    @unknown default: .debug
    }
  }
}
