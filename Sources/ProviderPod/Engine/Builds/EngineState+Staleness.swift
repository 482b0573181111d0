/// When a running build's result may no longer be cached.
extension EngineState {
  /// Marks a running build stale and forgets what it was built from so far: its result will
  /// not be cached, and a later discard of something it used must not reach the slot it was
  /// placed in, which may hold a newer instance by then (in a tree of pods, the parent's own).
  mutating func invalidate(_ build: Frame, released: inout [AnyObject]) {
    guard build.phase == .running else { return }
    build.invalidate()
    guard let slot = build.slot, !build.dependencies.isEmpty else { return }
    dropDependent(slot, from: build.dependencies, released: &released)
    build.dependencies.removeAll()
  }

  /// Whether a running build's result may no longer be cached: it was invalidated, or its
  /// scope was cleared after it began.
  @inline(__always)
  func isStale(_ frame: Frame) -> Bool { Self.isStale(frame) }

  static func isStale(_ frame: Frame) -> Bool {
    if frame.phase != .running { return frame.phase != .runningOnThread }
    guard let scope = frame.clearableScope, let pod = frame.slot?.pod else { return false }
    return (pod.scopeEpochs[scope] ?? 0) != frame.scopeEpoch
  }
}
