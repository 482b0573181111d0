/// A hook that runs on the main actor: at once when the discard was made from the main actor,
/// scheduled onto it otherwise. Whether it was is known from the discarding caller's
/// `#isolation`, not from the thread: the main actor need not run on the process's main thread
/// (it does not under Swift Testing on Linux).
func onMainActor<Value>(
  _ hook: @escaping @MainActor @Sendable (Value) -> Void
) -> DisposalHook<Value> {
  .sync { value, isOnMainActor in
    // The value belongs to the main actor; it only passes through here on its way back.
    let box = UncheckedSendable(value: value)
    if isOnMainActor {
      MainActor.assumeIsolated { hook(box.value) }
    } else {
      Task { @MainActor in hook(box.value) }
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
