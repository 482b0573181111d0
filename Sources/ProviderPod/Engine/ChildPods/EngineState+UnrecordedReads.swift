/// A request pod's reads of the root pod's instances, recorded on the request's side only
/// until a walk needs them recorded on the root's side too.
///
/// Every build lists what it read (its frame's `dependencies`, then its entry's), and each
/// slot it read counts it among its `dependents`, which a discard follows. For a request's
/// handler built from two app singletons in a shared section, the second half meant writing
/// each singleton's slot, a line every request on every core writes, under the tree's
/// crossing lock, and writing it again to take the count off as the request went. Now such a
/// build lists the root's slot as before and marks itself instead (`Frame.readsUnrecorded`),
/// then the slot its instance is cached in (`Slot.readsUnrecorded`), and its pod
/// (`PodRecord.hasUnrecordedReads`). The root's slots are not written at all.
///
/// A slot of the root is read this way only once a build of a child read it through an
/// exclusive section (`Slot.sharesUnrecorded`, which only exclusive sections write): the first
/// request to read an app singleton after it is cached takes the exclusive side for that read.
///
/// What follows the root's `dependents` finds the rest otherwise, in an exclusive section,
/// where no shared section runs:
/// - a discard that reached such slots of the root looks, once it has followed every record it
///   has, at the marked instances and builds of the root's children for reads of those slots
///   (`appendUnrecordedReaders`), and goes on from what it finds: a walk over the root's
///   children, which a clear of one of the root's scopes makes anyway, and no record written
///   only to be taken off again by the same discard;
/// - an override in a request pod writes the missing records of its own pod, before it looks
///   for what its pod built from the root's instances;
/// - an exclusive section that records another dependency of a marked build, or finishes
///   one, writes that build's records first, so that a build or an instance is either marked
///   with none of its reads of the root recorded there, or unmarked with all of them.
///
/// Until then, whatever drops the records of a marked build or instance (a stale build, an
/// instance taken out, a pod going away) leaves the root's slots alone
/// (`dropDependent(_:from:unrecordedOutside:released:)`): the counts it would take off were
/// never added, and the same slot may be counted there for another build or instance.
extension EngineState {
  /// Appends to a discard's `pending` the slots of the root's children whose instance or
  /// running build read, unrecorded, a slot of the root the discard reached (marked `mark`),
  /// marking them as reached.
  func appendUnrecordedReaders(reachedBy mark: Int, to pending: inout [Slot]) {
    root.forEachChild { pod in
      guard pod.hasUnrecordedReads, pod.isAlive else { return }
      for slot in pod.slots where slot.discardMark != mark {
        var reads = false
        if slot.readsUnrecorded, let entry = slot.entry {
          reads = Self.reads(entry.dependencies, reachedBy: mark, outside: pod)
        }
        if !reads, let build = slot.build, build.readsUnrecorded {
          reads = Self.reads(build.dependencies, reachedBy: mark, outside: pod)
        }
        if reads {
          slot.discardMark = mark
          pending.append(slot)
        }
      }
    }
  }

  private static func reads(
    _ dependencies: [Slot], reachedBy mark: Int, outside pod: PodRecord
  ) -> Bool {
    dependencies.allLent { $0.pod === pod || $0.discardMark != mark } == false
  }

  /// Writes the missing "built from" records of `pod`'s instances and running builds.
  static func recordUnrecordedReads(of pod: PodRecord) {
    pod.hasUnrecordedReads = false
    for slot in pod.slots {
      if slot.readsUnrecorded {
        slot.readsUnrecorded = false
        if let entry = slot.entry {
          for dependency in entry.dependencies where dependency.pod !== pod {
            dependency.dependents.add(slot)
          }
        }
      }
      if let build = slot.build, build.readsUnrecorded { recordUnrecordedReads(of: build) }
    }
  }

  /// Writes the missing "built from" records of one marked build. A stale build that is no
  /// longer its slot's newest is not found from its pod; it gets its records here as it
  /// finishes (and loses them again, being stale), or never, when it is invalidated first.
  static func recordUnrecordedReads(of build: Frame) {
    build.readsUnrecorded = false
    guard let slot = build.slot else { return }
    for dependency in build.dependencies where dependency.pod !== slot.pod {
      dependency.dependents.add(slot)
    }
  }

  /// The longest build's list a shared section searches for a repeat read of the root: a
  /// longer one has its reads of the root recorded there, where `recordedBy` finds repeats.
  static var unrecordedReadsSearched: Int { 16 }

  /// Whether `owner`, a build of `pod`, may read the root's instances unrecorded there: not
  /// when an exclusive section recorded one of its reads of the root already.
  @inline(__always)
  static func mayReadUnrecorded(by owner: Frame, in pod: PodRecord) -> Bool {
    owner.readsUnrecorded || owner.dependencies.allLent { $0.pod === pod }
  }

  /// Lists `slot`, an instance of the root, among what `owner` (a build of `pod`, whose lock
  /// the caller's shared section holds) read, without counting `owner` among the slot's
  /// dependents. Only where `mayReadUnrecorded`.
  static func recordUnrecordedRead(of slot: consuming Slot, by owner: Frame, in pod: PodRecord) {
    // As `recordDependency`: a build that was invalidated records nothing more.
    guard owner.phase == .running, owner.slot != nil else { return }
    if !owner.readsUnrecorded {
      owner.readsUnrecorded = true
      pod.hasUnrecordedReads = true
    } else if !owner.dependencies.allLent({ $0 !== slot }) {
      // Listed already. Only a list of at most `unrecordedReadsSearched` gets here (see
      // `recordShared`), so the search is short and a repeat is never listed again.
      return
    }
    owner.addDependency(slot)
  }

  /// `dropDependent(_:from:released:)` for an instance's or a build's dependencies, leaving
  /// out those outside `dependent`'s pod when they were never recorded there.
  @inline(__always)
  func dropDependent(
    _ dependent: Slot, from dependencies: [Slot], unrecordedOutside: Bool,
    released: inout [AnyObject]
  ) {
    guard unrecordedOutside else {
      dropDependent(dependent, from: dependencies, released: &released)
      return
    }
    for slot in dependencies where slot.pod === dependent.pod {
      dropDependent(dependent, on: slot, released: &released)
    }
  }
}
