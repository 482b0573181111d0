extension RetryPolicy {
  /// Runs `attempt` until it succeeds, the policy gives up, or the build is no longer wanted,
  /// reporting each failure.
  func run<Value>(
    _ attempt: () async throws -> Value, in context: BuildContext
  ) async throws -> Value {
    let engine = context.engine
    let frame = context.frame
    var number = 1
    while true {
      let error: any Error
      do {
        return try await attempt()
      } catch let failure {
        error = failure
      }
      let standing = engine.state.withLock { $0.standing(of: frame) }
      // A builder that stopped after a change made it unwanted (as `checkStillWanted()`
      // does) did not fail, whatever it threw: its callers did not ask for that change, so
      // they start over, as after a back-off cut short, and wait for a build that sees it.
      if standing == .invalidated { throw StartOver(error: error) }
      let retryingIn =
        standing == .wanted && number < maxAttempts && shouldRetry(error)
        ? delay(afterAttempt: number) : nil
      // A builder that stopped because it was no longer wanted did not fail.
      if engine.isObserved, standing == .wanted || !(error is CancellationError) {
        engine.report([
          ReportedEvent(
            pod: frame.slot?.pod ?? engine.pod,
            event: .buildFailed(
              provider: frame.info?.name ?? "", attempt: number, error: "\(error)",
              retryingIn: retryingIn))
        ])
      }
      guard let retryingIn else { throw error }
      switch try await backOff(retryingIn, frame: frame, engine: engine) {
      case .wanted:
        number += 1
      case .invalidated:
        throw StartOver(error: error)
      case .abandoned:
        throw engine.isAlive ? CancellationError() : error
      }
    }
  }

  /// Waits out a back-off, or less if the build stops being wanted meanwhile: a change that
  /// invalidates it, every caller leaving, or the pod going away each end the sleep at once.
  private func backOff(
    _ delay: Duration, frame: Frame, engine: PodEngine
  ) async throws -> BuildStanding {
    // The pod's clock, unless the policy brings its own sleep: a test's pod may be given one
    // that needs no real waiting.
    let clock = engine.settings.clock
    let sleep = self.sleep ?? { try await clock.sleep(for: $0) }
    let sleeper = Task { try await sleep(delay) }
    let id = engine.state.withLock { $0.beginBackOff(of: frame, wake: { sleeper.cancel() }) }
    guard let id else {
      sleeper.cancel()
      return engine.state.withLock { $0.standing(of: frame) }
    }
    let slept = await withTaskCancellationHandler {
      await sleeper.result
    } onCancel: {
      sleeper.cancel()
    }
    let standing = engine.state.withLock { $0.endBackOff(id, of: frame) }
    // Still wanted, but the sleep itself failed: that is the build's error now.
    if standing == .wanted, case .failure(let error) = slept { throw error }
    return standing
  }
}
