/// A hook that runs on the main actor: at once when the discard was made from the main actor,
/// scheduled onto it otherwise. Whether it was is known from the discarding caller's
/// `#isolation`, not from the thread: the main actor need not run on the process's main thread
/// (it does not under Swift Testing on Linux).
func onMainActor<Value>(
  _ hook: @escaping @MainActor @Sendable (Value) -> Void
) -> DisposalHook<Value> {
  { value, isOnMainActor in
    // The value belongs to the main actor; it only passes through here on its way back.
    let box = UncheckedSendable(value: value)
    if isOnMainActor {
      MainActor.assumeIsolated { hook(box.value) }
    } else {
      Task { @MainActor in hook(box.value) }
    }
  }
}
