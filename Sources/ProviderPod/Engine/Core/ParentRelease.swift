internal import CProviderPod

/// How a pod going away lets go of its parent.
///
/// A child keeps its parent alive, so a pod's `deinit` releases its parent, whose `deinit` may
/// then release its own, and so on: a chain of pods thousands deep, each made from the one
/// before, would run one `deinit` inside another and overflow a thread's stack. So past a few
/// such `deinit`s nested on one thread, a parent is put off, and the release that the
/// putting-off `deinit` runs inside lets go of it next, and of what that puts off in turn, one
/// after the other at the same depth. Every parent so goes before the release that let go of
/// its child returns, as if nothing were put off: a pod that a cleanup hook lets go of, as
/// another pod's shutdown runs it, is gone, its own hooks run, when the hook's drop returns.
///
/// The parent is only ever released, never first tested for being released for good: a pod
/// held by nothing but its child can still be asked for by a context kept past one of its
/// builds (`BuildContext.pod`, through the pod's weak reference or address), so a test of its
/// reference count, then taking its parent out, let such a context get the pod back alive but
/// with no parent, the app's pod gone from under it.
///
/// **Unsafe code here, and the invariant it relies on.** The put-off parents are a
/// `PutOffParents` kept retained in a thread-local word (`pp_put_off_parents`): only its
/// thread touches it, it is made by the first parent put off, every parent put off is taken
/// out by the release it was put off inside, and the outermost release frees the list before
/// it returns, so no thread ends holding one (but one that ends from inside a cleanup hook,
/// with `pthread_exit`).
enum ParentRelease {
  /// How many pods' deinits may run one inside another on a thread, each releasing its parent,
  /// before a parent is put off: a few frames of stack each.
  static let deepestNesting = 8

  /// Lets go of `parent`, taken out of a pod going away: at once, unless deinits nest too
  /// deep on this thread already; then of every parent put off inside that release.
  static func letGo(of parent: consuming Pod) {
    let depth = pp_pod_release_depth()
    guard depth < deepestNesting else { return putOff(consume parent) }
    pp_set_pod_release_depth(depth + 1)
    let earlier = putOffCount()
    release(consume parent)
    while let next = takePutOff(above: earlier) { release(consume next) }
    pp_set_pod_release_depth(depth)
    if depth == 0 { freePutOffList() }
  }

  /// Where a parent's reference goes, and its `deinit` runs if it was the last. Not inlined
  /// nor optimized, so that the release stays inside this call: after the depth is raised,
  /// and before the caller looks for parents put off by the deinits it ran.
  @inline(never)
  @_optimize(none)
  private static func release(_ pod: consuming Pod) {}

  /// This thread's put-off parents, if any were put off since its outermost release began.
  @inline(__always)
  private static var putOffList: PutOffParents? {
    pp_put_off_parents().map { Unmanaged<PutOffParents>.fromOpaque($0).takeUnretainedValue() }
  }

  private static func putOff(_ pod: consuming Pod) {
    if let parents = putOffList {
      parents.pods.append(consume pod)
      return
    }
    let parents = PutOffParents()
    parents.pods.append(consume pod)
    pp_set_put_off_parents(Unmanaged.passRetained(parents).toOpaque())
  }

  /// How many parents are put off on this thread now.
  @inline(__always)
  private static func putOffCount() -> Int {
    putOffList?.pods.count ?? 0
  }

  /// The parent put off last, if more than `earlier` are put off: one put off inside the
  /// caller's release.
  @inline(__always)
  private static func takePutOff(above earlier: Int) -> Pod? {
    guard let parents = putOffList, parents.pods.count > earlier else { return nil }
    return parents.pods.popLast()
  }

  /// Frees the list, empty once the outermost release is done.
  private static func freePutOffList() {
    guard let word = pp_put_off_parents() else { return }
    pp_set_put_off_parents(nil)
    Unmanaged<PutOffParents>.fromOpaque(word).release()
  }
}

/// The parents put off on one thread (see `ParentRelease`).
final class PutOffParents {
  var pods: [Pod] = []
}
