extension Pod {
  /// Ends the pod's life on purpose: discards everything it and its child pods hold, and
  /// awaits every `onDiscard` hook, dependents first.
  ///
  /// ```swift
  /// try await appPod.shutdown(timeout: .seconds(10))
  /// ```
  ///
  /// An instance's cleanup starts once the cleanups of everything built from it have ended,
  /// in this pod or a child: the database closes after the sessions that use it. Cleanups
  /// with no such order between them run at the same time. Synchronous hooks run in the same
  /// order, a main-actor provider's on the main actor. Before its own, the shutdown waits for
  /// the async cleanups of its own instances and those of the pods below it (even ones already
  /// let go of) that clears, overrides, pods let go of and child pods' shutdowns started
  /// earlier; the app's pod (a pod with no parent)
  /// waits for all of its tree's. A request's pod does not wait for another request's
  /// cleanups: nothing it closes can be in use by them. Observers see each instance discarded
  /// with ``DiscardReason/podShutDown``.
  ///
  /// A child pod's shutdown takes the child's own instances and its children's; what it
  /// shares with its parent stays the parent's.
  ///
  /// From the moment it begins, the pod and its children build nothing: a resolve through one
  /// of them stops the program, an async one throws ``ResolveAfterShutdownError``. A build
  /// already running finishes for its caller and is not cached. A second call (on the pod or
  /// on a child) returns when the first one does, and throws nothing; made from inside one of
  /// the first call's cleanups, which the first call awaits, it returns at once. A shutdown
  /// called from a cleanup likewise does not wait for that cleanup to end.
  ///
  /// A cleanup that throws does not stop the others. If the task calling `shutdown` is
  /// cancelled, the cleanups running are cancelled too, the others still start in order, and
  /// `shutdown` still waits for them: a cancelled cleanup should release its resources
  /// quickly. See <doc:Lifetimes>.
  ///
  /// - Parameter timeout: How long to wait for the cleanups. When it passes, `shutdown`
  ///   cancels the cleanups still running and throws, naming those that had not finished;
  ///   they go on in the background, and those waiting for them still start in order,
  ///   already cancelled. A synchronous hook cannot be stopped: one that never returns holds
  ///   `shutdown` past the timeout. No limit if nil.
  /// - Throws: ``PodShutdownError``, listing every cleanup that threw and every one that had
  ///   not finished at the timeout.
  public func shutdown(timeout: Duration? = nil) async throws(PodShutdownError) {
    try await engine.shutdown(timeout: timeout)
  }
}
