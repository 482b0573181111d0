/// Sees what a ``Pod`` does: what it built, reused and discarded, and why.
///
/// Events arrive on the thread that caused them, before the call that caused them returns,
/// and outside the pod's locks, so an observer may call back into the pod. Nothing is
/// printed unless an observer does it:
///
/// ```swift
/// struct PrintingObserver: PodObserver {
///   func pod(_ pod: Pod, didReport event: PodEvent) { print(event) }
/// }
/// let pod = Pod(observer: PrintingObserver())
/// ```
public protocol PodObserver: Sendable {
  /// Called once for each event, in the order the pod produced them.
  func pod(_ pod: Pod, didReport event: PodEvent)
}

/// Something a ``Pod`` did. Provider names are ``Provider/name``; scope names are the
/// scope's type name, such as `SingletonScope`.
///
/// More cases may be added in later minor versions: a `switch` that lists every case will need
/// them, so add a `default:` branch unless you want to be told.
public enum PodEvent: Sendable, Equatable {
  /// A builder ran (cached or not).
  case built(provider: String, scope: String)
  /// A cached instance was returned without running the builder.
  case reused(provider: String, scope: String)
  /// A cached instance was dropped; the next resolve builds a new one.
  case discarded(provider: String, scope: String, reason: DiscardReason)
  /// An override of the provider (or family) was added, replaced or removed.
  case overridden(provider: String)
  /// An instance that lives longer than one of its dependencies was cached: it holds the
  /// shorter-lived instance captive. The pod discards the holder whenever the dependency is
  /// discarded, but it usually means the holder belongs in the shorter scope.
  case captiveDependency(
    holder: String, holderScope: String, dependency: String, dependencyScope: String)
  /// The pod built a provider while it still holds the cached instance or the override of an
  /// earlier provider made by the same expression (`declaration`, as `File.swift:12:7`, and
  /// the same name and value type), and that earlier provider no longer exists. Almost always
  /// a provider declared as a computed property, `var service: Provider<Service> { ... }`:
  /// each access makes a new provider, so nothing is reused, overrides never apply, and each
  /// instance stays cached, out of reach, until the pod goes away. Declare it with `let`.
  ///
  /// Providers made by one function on purpose are not reported while they are kept, nor
  /// are a family's members. Only a pod with an observer looks.
  case providerRecreated(provider: String, declaration: String)
  /// An attempt to build an async provider threw. `attempt` counts from 1; `error` is the
  /// error's description; `retryingIn` is the back-off before the next attempt, or nil when
  /// the build gives up and its callers get the error (see ``RetryPolicy``).
  ///
  /// ```swift
  /// if case .buildFailed(let provider, _, let error, let retryingIn?) = event {
  ///   print("\(provider) failed (\(error)), retrying in \(retryingIn)")
  /// }
  /// ```
  case buildFailed(provider: String, attempt: Int, error: String, retryingIn: Duration?)
}

/// Why a cached instance was discarded.
///
/// More cases may be added in later minor versions: a `switch` that lists every case will need
/// them, so add a `default:` branch unless you want to be told.
public enum DiscardReason: Sendable, Equatable {
  /// Its scope, or a scope above it in the tree, was cleared.
  case scopeCleared
  /// Something it was built from was discarded.
  case dependencyDiscarded
  /// An override of its provider (or of its provider's family) was added, replaced or removed.
  case overrideChanged
  /// Its provider was cleared explicitly, with `Pod.clearCachedInstance(of:)` or
  /// `Pod.clearCachedInstances(of:)`.
  case providerCleared
  /// The pod it was cached in, or one above it, was shut down (`Pod.shutdown(timeout:)`).
  case podShutDown
}

extension PodEvent: CustomStringConvertible {
  /// A one-line account, such as `built Session (SignUp.swift:12) in SignUpScope`.
  public var description: String {
    switch self {
    case .built(let provider, let scope):
      return "built \(provider) in \(scope)"
    case .reused(let provider, let scope):
      return "reused \(provider) in \(scope)"
    case .discarded(let provider, let scope, let reason):
      return "discarded \(provider) in \(scope) (\(reason))"
    case .overridden(let provider):
      return "overridden \(provider)"
    case .captiveDependency(let holder, let holderScope, let dependency, let dependencyScope):
      return
        "captive dependency: \(holder) in \(holderScope) holds \(dependency) in \(dependencyScope)"
    case .providerRecreated(let provider, let declaration):
      return
        "provider recreated: \(provider) was made again at \(declaration), and the pod still "
        + "holds the instance or override of the one made before, which is gone; declared as "
        + "a computed property? Declare it with let"
    case .buildFailed(let provider, let attempt, let error, let retryingIn):
      let next = retryingIn.map { "retrying in \(Self.describe($0))" } ?? "giving up"
      return "build of \(provider) failed (attempt \(attempt)): \(error); \(next)"
    }
  }

  /// `400 ms`, `1.5 s`: how a log would say a back-off.
  static func describe(_ delay: Duration) -> String {
    let (seconds, attoseconds) = delay.components
    let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
    if milliseconds < 1000 { return "\(milliseconds) ms" }
    let tenths = milliseconds / 100
    return tenths % 10 == 0 ? "\(tenths / 10) s" : "\(tenths / 10).\(tenths % 10) s"
  }
}
