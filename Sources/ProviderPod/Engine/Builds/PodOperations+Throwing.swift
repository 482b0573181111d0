/// The operations on a ``ThrowingProvider``: those of the provider of its outcome, with every
/// builder given the same treatment as its own (a failure is never cached).
extension PodOperations {
  func overrideProvider<Value>(
    _ provider: ThrowingProvider<Value>, scope: (any ProviderScope)?, isolation: (any Actor)?,
    with build: @escaping @Sendable (BuildContext) throws -> Value
  ) {
    overrideProvider(
      provider.provider, scope: scope, isolation: isolation,
      with: ThrowingProvider.uncachedOnFailure(build))
  }

  func overrideProvider<Value>(
    _ provider: ThrowingProvider<Value>, withValue value: Value, isolation: (any Actor)?
  ) {
    // A given value, not a builder: the pod did not make it, so it never disposes of it.
    overrideProvider(provider.provider, withValue: .success(value), isolation: isolation)
  }
}

extension PodEngine {
  /// Keeps a build that failed out of the cache: nobody joins it any more, threads waiting
  /// for it look again, and its caller gets the error. An observed pod reports the failure.
  func keepUncached(_ frame: Frame, failure: any Error) {
    var released: [AnyObject] = []
    let reported = state.withLock { state -> (pod: PodRecord, name: String)? in
      state.fail(frame, released: &released)
      guard let pod = frame.slot?.pod ?? frame.pod, let info = frame.info else { return nil }
      return (pod, info.name)
    }
    withExtendedLifetime(released) {}
    guard isObserved, let (pod, name) = reported else { return }
    report([
      ReportedEvent(
        pod: pod,
        event: .buildFailed(provider: name, attempt: 1, error: "\(failure)", retryingIn: nil))
    ])
  }
}
