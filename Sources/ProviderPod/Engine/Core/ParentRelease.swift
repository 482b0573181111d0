internal import CProviderPod

/// How a pod going away lets go of its parent.
///
/// A child keeps its parent alive, so a pod's `deinit` releases its parent, whose `deinit` may
/// then release its own, and so on: a chain of pods thousands deep, each made from the one
/// before, would run one `deinit` inside another and overflow a thread's stack. So past a few
/// such `deinit`s nested on one thread, a parent is put off, and the outermost release lets go
/// of the put-off parents one after the other. Short of that depth nothing is put off: a pod
/// let go of by a cleanup hook that another pod's shutdown runs goes at once, its own hooks
/// run before the release returns (unless the hook itself runs that deep).
///
/// The parent is only ever released, never first tested for being released for good: a pod
/// held by nothing but its child can still be asked for by a context kept past one of its
/// builds (`BuildContext.pod`, through the pod's weak reference or address), so a test of its
/// reference count, then taking its parent out, let such a context get the pod back alive but
/// with no parent, the app's pod gone from under it.
///
/// **Unsafe code here, and the invariant it relies on.** The put-off parents are a
/// `PutOffParents` kept retained in a thread-local word (`pp_put_off_parents`): only its
/// thread touches it, it is made by the first parent put off, and the outermost release,
/// which every put-off release runs inside, takes every parent out and frees it before it
/// returns, so no thread ends holding one (but one that ends from inside a cleanup hook, with
/// `pthread_exit`).
enum ParentRelease {
  /// How many pods' deinits may run one inside another on a thread, each releasing its parent,
  /// before a parent is put off: a few frames of stack each.
  static let deepestNesting = 8

  /// Lets go of `parent`, taken out of a pod going away: at once, unless deinits nest too
  /// deep on this thread already; the outermost also lets go of every parent put off.
  static func letGo(of parent: consuming Pod) {
    let depth = pp_pod_release_depth()
    guard depth < deepestNesting else { return putOff(consume parent) }
    pp_set_pod_release_depth(depth + 1)
    release(consume parent)
    if depth == 0 {
      while let next = takePutOff() { release(consume next) }
    }
    pp_set_pod_release_depth(depth)
  }

  /// Where a parent's reference goes, and its `deinit` runs if it was the last. Not inlined
  /// nor optimized, so that the release stays inside this call: after the depth is raised,
  /// and before the caller looks for parents put off by the deinits it ran.
  @inline(never)
  @_optimize(none)
  private static func release(_ pod: consuming Pod) {}

  private static func putOff(_ pod: consuming Pod) {
    if let word = pp_put_off_parents() {
      Unmanaged<PutOffParents>.fromOpaque(word).takeUnretainedValue().pods.append(consume pod)
      return
    }
    let parents = PutOffParents()
    parents.pods.append(consume pod)
    pp_set_put_off_parents(Unmanaged.passRetained(parents).toOpaque())
  }

  /// The parent put off last; nil once there is none, the list freed.
  private static func takePutOff() -> Pod? {
    guard let word = pp_put_off_parents() else { return nil }
    let parents = Unmanaged<PutOffParents>.fromOpaque(word)
    if let next = parents.takeUnretainedValue().pods.popLast() { return next }
    pp_set_put_off_parents(nil)
    parents.release()
    return nil
  }
}

/// The parents put off on one thread (see `ParentRelease`).
final class PutOffParents {
  var pods: [Pod] = []
}
