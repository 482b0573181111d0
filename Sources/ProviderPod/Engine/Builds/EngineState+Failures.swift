/// A throwing provider's builder that threw, decided under the lock.
extension EngineState {
  /// Ends the caching of a build whose builder threw. A failure is not a change: a build still
  /// valid when it threw is marked failed, not invalidated, so its caller, which got the error
  /// and no value, may still cache what it made of it (a fallback). One that a change had
  /// already made stale is invalidated, and its caller with it when it finishes, as after any
  /// stale build: the failure may be the change's doing.
  mutating func fail(_ build: Frame, released: inout [AnyObject]) {
    guard build.phase == .running else { return }
    let failedWhileValid = !isStale(build)
    invalidate(build, released: &released)
    if failedWhileValid { build.fail() }
  }
}
