/// A child pod joining its tree: it is made without the lock, and listed among its parent's
/// children by the first locked operation that may leave something in it.
extension EngineState {
  /// Lists `pod` among its parent's children, where clears, overrides and shutdowns of the
  /// parent find it, if it is not there yet, with any ancestor that is not either. Called by
  /// every locked operation that may leave something in the pod (a resolve, a change, a
  /// watcher, a shutdown) before it looks at the pod: a child is made without the lock, and
  /// joins its tree here, at its first use. Until then a walk from its parent would find
  /// nothing in it, and a child let go of unused leaves without taking the lock at all.
  @inline(__always)
  mutating func join(_ pod: PodRecord) {
    if !pod.isJoined { joinWithAncestors(pod) }
  }

  @inline(never)
  private mutating func joinWithAncestors(_ pod: PodRecord) {
    // Mostly a request's pod, whose parent (the app's) has long joined: no list to make.
    if pod.parent?.isJoined ?? true { return adopt(pod) }
    // Ancestors first, so that a shutdown that reached one of them reaches its children too.
    var pending: [PodRecord] = []
    var next: PodRecord? = pod
    while let current = next, !current.isJoined {
      pending.append(current)
      next = current.parent
    }
    for child in pending.reversed() { adopt(child) }
  }

  /// Lists a child pod among its parent's children. Not owned: the child removes itself when
  /// it goes away.
  private mutating func adopt(_ child: PodRecord) {
    child.isJoined = true
    // A child of a pod that was shut down is shut down as it joins, whether it was made
    // before the shutdown or after: it would share nothing.
    if let parent = child.parent, parent.shutdown != nil {
      child.shutdown = parent.shutdown
      child.isAlive = false
      return
    }
    // A root's children go in its lists by stripe, which its children's shared sections
    // join and leave (see `PodRecord+Children`); they are made here, under the tree's lock.
    if child.parent === root { root.makeStripedChildren() }
    child.addToParent()
  }
}
