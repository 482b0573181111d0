/// How an ``AsyncProvider`` retries a build that throws: how many attempts, which errors, and
/// how long to wait in between.
///
/// ```swift
/// let configurationProvider = AsyncProvider(
///   retry: .exponentialBackoff(initialDelay: .milliseconds(200), maxAttempts: 4)
/// ) { pod in
///   try await pod.resolve(apiProvider).fetchConfiguration()
/// }
/// ```
///
/// The retries belong to the one shared build: every caller waiting for the instance waits for
/// them too, and gets the first success or the last error. The pod reports each failed attempt
/// to its observer as ``PodEvent/buildFailed(provider:attempt:error:retryingIn:)``.
///
/// - **Cancellation.** When every caller has left, the build is cancelled: the back-off sleep
///   ends at once and no further attempt is made.
/// - **Invalidation.** A clear, an override or a discarded dependency that invalidates the
///   build while it backs off starts it over: its callers wait for a new build, with a fresh
///   count of attempts, that sees the change. So does an attempt that throws after its build
///   was invalidated (a builder that calls ``BuildContext/checkStillWanted()``, say): the
///   callers did not ask for the change, so it is neither a failed attempt nor reported as one.
/// - **The pod going away** during a back-off ends the retries: the callers get the last error.
/// - **Overrides** use the provider's policy, as they use its scope: an override that throws
///   is retried too. A test that wants no waiting gives its pod a clock that does not wait
///   (`Pod(clock:)`, or the `clock:` of a test's isolation), overrides with a value, or
///   passes `sleep`.
public struct RetryPolicy: Sendable {
  /// How many attempts a build makes in all, the first one included; 1 means no retry.
  public let maxAttempts: Int
  private let initialDelay: Duration
  private let multiplier: Double
  private let maxDelay: Duration
  let shouldRetry: @Sendable (any Error) -> Bool
  /// Waits out a back-off; nil sleeps on the pod's clock.
  let sleep: (@Sendable (Duration) async throws -> Void)?

  /// One attempt: a build that throws fails at once. The default.
  public static let never = RetryPolicy(
    maxAttempts: 1, initialDelay: .zero, multiplier: 1, maxDelay: .zero,
    shouldRetry: { _ in false }, sleep: nil)

  /// Retries after a delay that starts at `initialDelay` and is multiplied by `multiplier`
  /// after each failed attempt, up to `maxDelay`.
  ///
  /// With the defaults, a build is tried 5 times, 200 ms, 400 ms, 800 ms and 1.6 s apart.
  ///
  /// ```swift
  /// let sessionProvider = AsyncProvider(
  ///   retry: .exponentialBackoff(maxAttempts: 3, retryIf: { $0 is URLError })
  /// ) { pod in
  ///   try await pod.resolve(authProvider).signIn()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - initialDelay: The wait after the first failed attempt.
  ///   - multiplier: How much longer each wait is than the one before; at least 1.
  ///   - maxDelay: The longest wait.
  ///   - maxAttempts: How many attempts in all, the first one included; at least 1.
  ///   - retryIf: Whether an error is worth another attempt. By default every error is,
  ///     except `CancellationError`. It runs outside the pod's lock.
  ///   - sleep: Waits out a back-off. By default the build's pod sleeps on its clock (see
  ///     ``Pod/init(overrides:observer:clock:)``), which a test can replace for the whole
  ///     pod. A function given here wins over the pod's clock: tests pass one that waits for a
  ///     gate, say. It must throw when its task is cancelled, as `Task.sleep` does, or a
  ///     back-off of a build nobody wants any more runs to its end.
  public static func exponentialBackoff(
    initialDelay: Duration = .milliseconds(200),
    multiplier: Double = 2,
    maxDelay: Duration = .seconds(30),
    maxAttempts: Int = 5,
    retryIf: @escaping @Sendable (any Error) -> Bool = { !($0 is CancellationError) },
    sleep: (@Sendable (Duration) async throws -> Void)? = nil
  ) -> RetryPolicy {
    precondition(maxAttempts >= 1, "ProviderPod: a retry policy needs at least one attempt")
    precondition(multiplier >= 1, "ProviderPod: a back-off multiplier must be at least 1")
    precondition(initialDelay >= .zero, "ProviderPod: a back-off delay cannot be negative")
    return RetryPolicy(
      maxAttempts: maxAttempts, initialDelay: initialDelay, multiplier: multiplier,
      maxDelay: max(maxDelay, .zero), shouldRetry: retryIf, sleep: sleep)
  }

  /// The wait after failed attempt number `attempt` (counting from 1), before the next one.
  ///
  /// ```swift
  /// RetryPolicy.exponentialBackoff().delay(afterAttempt: 3)  // 800 ms
  /// ```
  public func delay(afterAttempt attempt: Int) -> Duration {
    var delay = initialDelay
    for _ in 1..<max(attempt, 1) {
      // Stop multiplying once capped, so that no attempt count can overflow the duration.
      guard delay < maxDelay else { break }
      delay = delay * multiplier
    }
    return min(delay, maxDelay)
  }

  /// Thrown to the callers of a build that was invalidated while it backed off, or that threw
  /// once invalidated, so that they resolve again and wait for a build that sees the change.
  /// Carries the build's last error, which callers get instead once they have started over
  /// `limit` times in a row: a builder that keeps making its own build unwanted (one that
  /// clears its own scope, say) must not keep its callers waiting forever.
  struct StartOver: Error {
    let error: any Error

    static let limit = 16
  }
}
