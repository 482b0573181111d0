/// How a pod going away lets go of its parent.
///
/// A child keeps its parent alive, so a pod's `deinit` releases its parent, whose `deinit` may
/// then release its own, and so on: a chain of pods thousands deep, each made from the one
/// before, would run one `deinit` inside another and overflow a thread's stack. So a parent
/// released from inside another pod's `deinit` on the same thread is put off, and the
/// outermost release lets go of the put-off parents one after the other.
///
/// The parent is only ever released, never first tested for being released for good: a pod
/// held by nothing but its child can still be asked for by a context kept past one of its
/// builds (`BuildContext.pod`, through the pod's weak reference or address), so a test of its
/// reference count, then taking its parent out, let such a context get the pod back alive but
/// with no parent, the app's pod gone from under it.
enum ParentRelease {
  /// Lets go of `parent`, taken out of a pod going away, and of every parent put off meanwhile.
  static func letGo(of parent: consuming Pod) {
    let thread = ThreadRecord.current
    guard !thread.isReleasingParents else { return thread.putOffRelease(of: consume parent) }
    thread.isReleasingParents = true
    release(consume parent)
    while let next = thread.takePutOffParent() { release(consume next) }
    thread.isReleasingParents = false
  }

  /// Where a parent's reference goes, and its `deinit` runs if it was the last: a call of its
  /// own, so that the release happens before the caller looks for parents put off by it.
  @inline(never)
  private static func release(_ pod: consuming Pod) {}
}

/// The parents a pod's `deinit` put off on one thread (see `ParentRelease`), kept by the
/// thread's record.
final class PendingParents {
  var pods: [Pod] = []
}
