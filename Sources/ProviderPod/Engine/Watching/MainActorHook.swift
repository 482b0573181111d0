/// A hook that runs on the main actor: at once when the discard was made from the main actor,
/// scheduled onto it otherwise, and awaited there by a shutdown. Whether it was is known from
/// the discarding caller's `#isolation`, not from the thread: the main actor need not run on
/// the process's main thread (it does not under Swift Testing on Linux).
func onMainActor<Value>(
  _ hook: @escaping @MainActor @Sendable (Value) -> Void
) -> DisposalHook<Value> {
  .mainActor(hook)
}

extension DisposalHook {
  /// Runs the hook where a synchronous discard is made; an asynchronous hook is left to
  /// `run`.
  func runNow(_ value: Value, onMainActor isOnMainActor: Bool) {
    if let sync {
      sync(value, isOnMainActor)
    } else if let mainActor {
      // The value belongs to the main actor; it only passes through here on its way back.
      let box = UncheckedSendable(value: value)
      if isOnMainActor {
        MainActor.assumeIsolated { mainActor(box.value) }
      } else {
        Task { @MainActor in mainActor(box.value) }
      }
    }
  }

  /// Runs the hook, whatever its kind, and returns once it has run: how a shutdown awaits it.
  func run(_ value: Value) async throws {
    if let sync {
      sync(value, false)
    } else if let mainActor {
      let box = UncheckedSendable(value: value)
      await MainActor.run { mainActor(box.value) }
    } else if let async {
      try await async(value)
    }
  }
}

extension MainActorProvider {
  /// A plain builder that runs `build` on the main actor. The pod runs builders on the thread
  /// that resolves, and only `@MainActor` code can resolve this provider, so the assumption
  /// holds; the value belongs to the main actor and only passes through on its way back.
  static func isolated(
    _ build: @escaping @MainActor @Sendable (BuildContext) -> Value
  ) -> @Sendable (BuildContext) -> Value {
    { pod in MainActor.assumeIsolated { UncheckedSendable(value: build(pod)) }.value }
  }
}
