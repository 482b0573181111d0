/// A throwing provider's builder that threw, decided under the lock.
extension EngineState {
  /// Ends the caching of a build whose builder threw. A failure is not a change: a build still
  /// valid when it threw is marked failed, not invalidated, so its caller, which got the error
  /// and no value, may still cache what it made of it (a fallback). One that a change had
  /// already made stale is invalidated, with the builds that take its outcome, as after any
  /// stale build: the failure may be the change's doing.
  mutating func fail(_ build: Frame, released: inout [AnyObject]) {
    guard build.phase == .running else { return }
    guard !isStale(build) else { return invalidate(build, released: &released) }
    forgetDependencies(of: build, released: &released)
    build.fail()
  }
}
