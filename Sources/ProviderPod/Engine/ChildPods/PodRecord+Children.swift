/// A pod's list of live children: each child links to its neighbours, under the tree's lock.
extension PodRecord {
  /// Puts this pod, which is not listed, at the head of its parent's children.
  /// The parent is read in place rather than bound (`guard let` would copy it, a write to its
  /// reference count, which every request writes when the parent is the app's pod).
  func addToParent() {
    guard parent != nil else { return }
    nextSibling = parent!.firstChild
    nextSibling?.previousSibling = self
    parent!.firstChild = self
  }

  /// Takes this pod out of its parent's children; nothing if it is not listed (a pod shut
  /// down, then going away).
  func removeFromParent() {
    guard parent != nil else { return }
    if let previous = previousSibling {
      previous.nextSibling = nextSibling
    } else if parent!.firstChild === self {
      parent!.firstChild = nextSibling
    } else {
      return
    }
    nextSibling?.previousSibling = previousSibling
    nextSibling = nil
    previousSibling = nil
  }

  /// The listed children, for walks down the tree.
  var children: [PodRecord] {
    var result: [PodRecord] = []
    var child = firstChild
    while let next = child {
      result.append(next)
      child = next.nextSibling
    }
    return result
  }
}
