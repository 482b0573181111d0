import Testing

@testable import ProviderPod

// An app's pod with a few singletons, and request pods whose providers build from them: the
// server's shape, shared by the tests of a request's reads of the app's instances.

/// The scope of the app's configuration, which tests clear.
struct AppConfigScope: ProviderScope {}
/// The scope each request pod owns.
struct AppRequestScope: ProviderScope {}

/// An app's pod whose singletons are cached and already read by a first request, so that
/// later requests read them from their builds on their side only (unless made without that
/// warm-up).
final class AppWithRequests: Sendable {
  let pod: Pod
  let log = DisposalLog()
  let builds = Counter()
  /// `config#1`, in `AppConfigScope`.
  let config: Provider<Instance>
  /// `database#2`, a singleton.
  let database: Provider<Instance>
  /// `store#3`, a singleton built from the database; nil unless asked for.
  let store: Provider<Instance>?

  /// - Parameters:
  ///   - pod: The app's pod (one kept in a global, say).
  ///   - warmUp: Whether to cache the singletons and read them from a first request.
  init(pod: Pod = Pod(), withStore: Bool = false, warmUp: Bool = true) {
    self.pod = pod
    let log = self.log
    let builds = self.builds
    config = Provider(scope: AppConfigScope(), name: "config", onDiscard: log.record) { _ in
      Instance("config", serial: builds.next())
    }
    database = Provider(name: "database", onDiscard: log.record) { _ in
      Instance("database", serial: builds.next())
    }
    let database = self.database
    store =
      withStore
      ? Provider(name: "store", onDiscard: log.record) { pod in
        Instance("store", serial: builds.next(), dependencies: [pod.resolve(database)])
      } : nil
    guard warmUp else { return }
    let reads = [config, database] + (store.map { [$0] } ?? [])
    for provider in reads { _ = pod.resolve(provider) }
    // A first request reads each through the app's lock, which lets later requests read them
    // on their side only; its pod goes at once.
    let first = Provider(scope: AppRequestScope(), name: "first") { pod in
      reads.map { pod.resolve($0) }.count
    }
    _ = Pod(parent: pod, scopes: [AppRequestScope()]).resolve(first)
  }

  func request() -> Pod { Pod(parent: pod, scopes: [AppRequestScope()]) }

  /// A request-scoped provider named `name`, whose instance is built from `reads`, in order.
  func requestProvider(_ name: String, reads: [Provider<Instance>]) -> Provider<Instance> {
    let log = self.log
    let builds = self.builds
    return Provider(scope: AppRequestScope(), name: name, onDiscard: log.record) { pod in
      Instance(name, serial: builds.next(), dependencies: reads.map { pod.resolve($0) })
    }
  }

  /// `count` more app singletons, `app0`, `app1`, ..., each cached in the app.
  func cachedSingletons(_ count: Int) -> [Provider<Instance>] {
    let builds = self.builds
    let singletons = (0..<count).map { index in
      Provider(name: "app\(index)") { _ in Instance("app\(index)", serial: builds.next()) }
    }
    for provider in singletons { _ = pod.resolve(provider) }
    return singletons
  }

  /// Whether `request` holds reads of the app's instances noted on its side only.
  func readsUnrecorded(_ request: Pod) -> Bool {
    request.engine.state.withLock { _ in request.engine.pod.hasUnrecordedReads }
  }

  func violations(_ pods: Pod...) -> [String] {
    pods.flatMap(\.invariantViolations)
  }
}
