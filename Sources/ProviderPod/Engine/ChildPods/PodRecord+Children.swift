internal import CProviderPod

/// A pod's list of live children: each child links to its neighbours, under the tree's lock.
/// A root lists its children in one list per lock of the pods' shared sections
/// (`stripedChildren`): a child's neighbours are then pods whose shared sections take the same
/// lock, so a request's pod joins and leaves in its own shared sections, beside other
/// requests', without a lock or a list head that every request writes.
///
/// **Unsafe code here, and the invariant it relies on.** The heads of a root's lists are a
/// typed pointer (`stripedChildren`, see `PodRecord.swift`): allocated by `makeStripedChildren`
/// under the tree's lock, before any child is listed in them, never moved, and freed only by
/// the root's `deinit`, when no child is listed (a listed child holds the root through its
/// `parent`). Each head is read and written only under the tree's lock, or in a shared section
/// under the lock of the stripe it belongs to, which every pod listed there takes. The heads
/// are a cache line apart (`headStride`), and only `head(of:in:)` finds one: packed, eight
/// stripes shared a line, and requests on different cores whose pods fell in two of them (a
/// thread's request pods come back at the same address, so in the same stripe, request after
/// request) moved that line between their cores at every join and leave.
extension PodRecord {
  /// How many lists a root keeps its children in: one per lock of the pods' shared sections.
  static let stripeCount = Int(pp_stripe_count)

  /// How far apart, in elements, the heads of a root's lists are: a cache line.
  static let headStride = 64 / MemoryLayout<PodRecord?>.stride

  /// The head of list `stripe` of a root's lists of children.
  @inline(__always)
  static func head(
    of stripe: Int, in heads: UnsafeMutablePointer<PodRecord?>
  ) -> UnsafeMutablePointer<PodRecord?> {
    heads + stripe &* headStride
  }

  /// The list of a root's children this pod goes in: its shared sections' lock's.
  @inline(__always)
  var stripe: Int { Int(pp_pod_stripe(UInt(bitPattern: ObjectIdentifier(self)))) }

  /// Gives a root its lists of children, if it has none yet. In an exclusive section, before
  /// its first child joins: shared sections only read whether it has them.
  func makeStripedChildren() {
    guard stripedChildren == nil else { return }
    let heads = UnsafeMutablePointer<PodRecord?>.allocate(
      capacity: Self.stripeCount * Self.headStride)
    heads.initialize(repeating: nil, count: Self.stripeCount * Self.headStride)
    stripedChildren = heads
  }

  /// Puts this pod, which is not listed, at the head of its parent's children (its stripe's
  /// list, in a root). In a root's child, under the lock of its shared sections or the tree's.
  /// The parent is read in place rather than bound (`guard let` would copy it, a write to its
  /// reference count, which every request writes when the parent is the app's pod).
  @inline(__always)
  func addToParent() {
    guard parent != nil else { return }
    if let heads = parent!.stripedChildren {
      let head = Self.head(of: stripe, in: heads)
      nextSibling = head.pointee
      nextSibling?.previousSibling = self
      head.pointee = self
      return
    }
    nextSibling = parent!.firstChild
    nextSibling?.previousSibling = self
    parent!.firstChild = self
  }

  /// Takes this pod out of its parent's children; nothing if it is not listed (a pod shut
  /// down, then going away). Under the same lock as `addToParent`.
  @inline(__always)
  func removeFromParent() {
    guard parent != nil else { return }
    if let previous = previousSibling {
      previous.nextSibling = nextSibling
    } else if let heads = parent!.stripedChildren, Self.head(of: stripe, in: heads).pointee === self
    {
      Self.head(of: stripe, in: heads).pointee = nextSibling
    } else if parent!.firstChild === self {
      parent!.firstChild = nextSibling
    } else {
      return
    }
    nextSibling?.previousSibling = previousSibling
    nextSibling = nil
    previousSibling = nil
  }

  /// The first child of each list this pod keeps its children in.
  var childListHeads: [PodRecord] {
    guard let heads = stripedChildren else { return firstChild.map { [$0] } ?? [] }
    var result: [PodRecord] = []
    if let first = firstChild { result.append(first) }
    for stripe in 0..<Self.stripeCount {
      if let head = Self.head(of: stripe, in: heads).pointee { result.append(head) }
    }
    return result
  }

  /// Whether any child is listed. Inlined up to a root's lists, which only a pod that has had
  /// children has: a clear of a pod without any tests two fields.
  @inline(__always)
  var hasChildren: Bool {
    if firstChild != nil { return true }
    guard let heads = stripedChildren else { return false }
    return Self.anyListed(in: heads)
  }

  private static func anyListed(in heads: UnsafeMutablePointer<PodRecord?>) -> Bool {
    for stripe in 0..<stripeCount where head(of: stripe, in: heads).pointee != nil { return true }
    return false
  }

  /// Calls `body` with each listed child, without making a list of them. `body` may unlink
  /// the child it is given.
  @inline(__always)
  func forEachChild(_ body: (PodRecord) -> Void) {
    var child = firstChild
    while let next = child {
      child = next.nextSibling
      body(next)
    }
    guard let heads = stripedChildren else { return }
    for stripe in 0..<Self.stripeCount {
      var child = Self.head(of: stripe, in: heads).pointee
      while let next = child {
        child = next.nextSibling
        body(next)
      }
    }
  }

  /// The listed children, for walks down the tree.
  var children: [PodRecord] {
    var result: [PodRecord] = []
    forEachChild { result.append($0) }
    return result
  }
}
