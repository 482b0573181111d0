extension BuildContext {
  /// Whether the pod will still cache this build's result.
  ///
  /// It turns false, and stays false, when a clear, an override or a discarded dependency
  /// invalidates the build, when every caller of a shared async build has left, when the pod
  /// goes away, and once the builder has returned. A long async builder asks between steps and
  /// stops early rather than finish work nobody will keep:
  ///
  /// ```swift
  /// let catalogProvider = AsyncProvider(scope: StoreScope()) { pod in
  ///   var catalog = Catalog()
  ///   for page in 1...20 {
  ///     guard pod.isStillWanted else { throw CancellationError() }
  ///     catalog.append(try await pod.resolve(apiProvider).catalogPage(page))
  ///   }
  ///   return catalog
  /// }
  /// ```
  ///
  /// A build that is not wanted any more may still finish: callers that waited for it get its
  /// value, uncached, and the next resolve builds again. Stopping early only saves the work,
  /// and fails no one: after a clear, an override or a discarded dependency, whatever the
  /// builder throws, the callers still waiting wait for a new build that sees the change.
  /// For a build of an ``AlwaysCreateNewScope`` provider, which nothing caches, it stays true
  /// while the builder runs, since its caller waits for the value.
  public var isStillWanted: Bool {
    engine.state.withLock {
      $0.noteUse(of: frame)
      return $0.standing(of: frame) == .wanted
    }
  }

  /// Throws `CancellationError` if the pod will no longer cache this build's result; see
  /// ``isStillWanted``. The build's callers never get that error for a change they did not
  /// ask for: they wait for a new build that sees it.
  ///
  /// ```swift
  /// let reportProvider = AsyncProvider { pod in
  ///   let rows = try await pod.resolve(databaseProvider).fetchRows()
  ///   try pod.checkStillWanted()  // a clear while fetching: skip the expensive part
  ///   return Report(rows: rows)
  /// }
  /// ```
  public func checkStillWanted() throws {
    if !isStillWanted { throw CancellationError() }
  }
}
