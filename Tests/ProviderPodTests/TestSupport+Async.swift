import Testing

// Waiting in async tests without sleeping: each wait ends as soon as what it waits for
// happens, and its limit is a watchdog, not a delay.

/// How long a hang watchdog waits before it calls a wait hung, in seconds: ten minutes, room to
/// spare. A watched wait normally ends at once; but in CI's thread-sanitizer run on two cores,
/// tests holding the threads of Swift's concurrency pool with synchronous work have kept an
/// async test's next step from running for over two minutes, and a one-minute watchdog, woken
/// first, called the wait hung.
let hangWatchdogSeconds = 600

/// Polls `condition`, yielding between looks; false if it never held (a watchdog, not a delay).
func eventually(
  isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
) async -> Bool {
  for _ in 0..<200_000 {
    if condition() { return true }
    await Task.yield()
  }
  return condition()
}

/// The stream's next element, or nil if none comes within `seconds`: for a test that checks
/// for nil itself, and stays short if the element never comes.
func next<Element: Sendable>(
  of stream: AsyncStream<Element>, within seconds: Int
) async -> Element? {
  await withTaskGroup(of: Element?.self) { group in
    group.addTask {
      var iterator = stream.makeAsyncIterator()
      return await iterator.next()
    }
    group.addTask {
      try? await Task.sleep(for: .seconds(seconds))
      return nil
    }
    let first = await group.next()!
    group.cancelAll()
    return first
  }
}

extension AsyncStream where Element: Sendable {
  /// The next element; fails the test if none comes (a watchdog, not a delay: the element
  /// normally comes at once).
  func next(_ what: Comment) async -> Element? {
    let element = await ProviderPodTests.next(of: self, within: hangWatchdogSeconds)
    if element == nil { Issue.record("timed out waiting for \(what)") }
    return element
  }
}
