internal import CProviderPod

/// A handle on the current thread's record of its builds (`pp_thread_builds` in
/// `CProviderPod`): the innermost build running on the thread, and the idle frames the thread
/// keeps for its next always-new builds.
///
/// **Unsafe code here, and the invariant it relies on.** The record is C memory reached
/// through a thread-local variable, and frames are stored in it as raw pointers:
/// - Only the thread that owns a record touches it. A handle is made from the thread-local
///   variable on the thread that uses it, and a frame keeps its thread's handle only to compare
///   it with the current one (`EngineState.noteUse`), never to reach the record.
/// - The record lives until its thread ends, when the C side calls `releaseSpares` and frees
///   it.
/// - The innermost build and the chain below it (`Frame.threadPrevious`) are not retained:
///   every build is popped before it ends, and the resolve running it holds it until then.
/// - Idle frames are retained: the first by the record, each next one by the one before it
///   (`Frame.nextSpare`), until `takeSpare` hands one out or the thread ends. The thread's
///   empty tables are retained by the record until the thread ends.
/// Nothing outside this file reads the record or turns a pointer into a frame.
struct ThreadRecord: Equatable {
  private let record: UnsafeMutablePointer<pp_thread_builds>

  /// The current thread's record, made on first use.
  @inline(__always)
  static var current: ThreadRecord {
    ThreadRecord(
      record: pp_thread_builds_current { record in
        ThreadRecord(record: record).releaseSpares()
      })
  }

  /// The current thread's record, or nil before the thread has run a build.
  @inline(__always)
  static var existing: ThreadRecord? {
    pp_thread_builds_existing().map { ThreadRecord(record: $0) }
  }

  /// The innermost build running on the current thread, in any tree of pods.
  @inline(__always)
  static var innermostFrame: Frame? { frame(at: pp_thread_innermost()) }

  /// Whether a build runs on the current thread, in any tree of pods.
  @inline(__always)
  static var isBuilding: Bool { pp_thread_innermost() != nil }

  /// Whether `frame` is this thread's innermost build; compares addresses only.
  @inline(__always)
  func isInnermost(_ frame: Frame) -> Bool {
    record.pointee.innermost == Unmanaged.passUnretained(frame).toOpaque()
  }

  /// Whether nothing runs on this thread.
  @inline(__always)
  var isIdle: Bool { record.pointee.innermost == nil }

  /// Makes `frame` the thread's innermost build, until `pop`. The caller keeps `frame` alive
  /// until then. A push and a pop rather than a closure: the closure's context cost retains on
  /// every build.
  @inline(__always)
  func push(_ frame: Frame) {
    frame.threadPrevious = record.pointee.innermost
    record.pointee.innermost = Unmanaged.passUnretained(frame).toOpaque()
  }

  /// Makes the build `frame` was pushed over the innermost again.
  @inline(__always)
  func pop(_ frame: Frame) {
    record.pointee.innermost = frame.threadPrevious
    frame.threadPrevious = nil
  }

  /// One of the thread's idle frames, or a new one.
  @inline(__always)
  func takeSpare(treeID: ObjectIdentifier) -> Frame {
    guard let spare = record.pointee.spare else { return Frame(treeID: treeID) }
    let frame = Unmanaged<Frame>.fromOpaque(spare).takeRetainedValue()
    record.pointee.spare = frame.nextSpare
    record.pointee.spare_count -= 1
    frame.nextSpare = nil
    return frame
  }

  /// How many idle frames a thread keeps: as many as its deepest always-new chain needed, up
  /// to the depth where chains pay for a full cycle scan anyway. A frame beyond them is
  /// allocated and freed on every build, which made each level of a chain of 1,000 cost half
  /// again what a level of a chain of 10 does. The frames kept take less memory than the
  /// stack the chain that needed them already touched.
  static let spareFrameLimit = 4_096

  /// Keeps an idle frame for the thread's next build, unless it keeps enough already.
  @inline(__always)
  func keepSpare(_ frame: Frame) {
    guard record.pointee.spare_count < Self.spareFrameLimit else { return }
    frame.nextSpare = record.pointee.spare
    record.pointee.spare = Unmanaged.passRetained(frame).toOpaque()
    record.pointee.spare_count += 1
  }

  /// The thread's empty tables, made on first use (see `EmptyTables`).
  @inline(__always)
  var emptyTables: EmptyTables {
    if let tables = record.pointee.empty_tables {
      return Unmanaged<EmptyTables>.fromOpaque(tables).takeUnretainedValue()
    }
    let tables = EmptyTables()
    record.pointee.empty_tables = Unmanaged.passRetained(tables).toOpaque()
    return tables
  }

  /// The thread's idle frames, for the invariant checks.
  var spares: [Frame] {
    var result: [Frame] = []
    var next = record.pointee.spare
    while let spare = next {
      let frame = Unmanaged<Frame>.fromOpaque(spare).takeUnretainedValue()
      result.append(frame)
      next = frame.nextSpare
    }
    return result
  }

  var spareCount: Int { record.pointee.spare_count }

  /// Lets go of the thread's idle frames and empty tables, when the thread ends.
  private func releaseSpares() {
    if let tables = record.pointee.empty_tables {
      record.pointee.empty_tables = nil
      Unmanaged<EmptyTables>.fromOpaque(tables).release()
    }
    var next = record.pointee.spare
    record.pointee.spare = nil
    record.pointee.spare_count = 0
    while let spare = next {
      let frame = Unmanaged<Frame>.fromOpaque(spare).takeRetainedValue()
      next = frame.nextSpare
      frame.nextSpare = nil
    }
  }

  private static func frame(at raw: UnsafeMutableRawPointer?) -> Frame? {
    raw.map { Unmanaged<Frame>.fromOpaque($0).takeUnretainedValue() }
  }
}

extension Frame {
  /// The build this one was pushed over on its thread, while it runs there.
  var previousOnThread: Frame? {
    threadPrevious.map { Unmanaged<Frame>.fromOpaque($0).takeUnretainedValue() }
  }
}

/// Whether an always-new build through a tree's root pod may run without the lock (see
/// `Frame.beginThreadBuild`), read with one atomic load.
///
/// Two things close it: the root pod overriding something or having gone away (its builds
/// then need the general path's lookups), and async builds running in the tree, whose frames
/// are bound to their tasks where only the general path looks for them. A build nested in
/// another thread build on the same thread ignores the second, since its caller is known.
///
/// The word counts async builds in steps of two and keeps the root's state in its lowest bit.
///
/// A managed buffer, which keeps the word in the object's own allocation: an atomic needs a
/// stable address, which a stored property does not promise, and a pointer to a separate
/// allocation would cost each new pod two allocations rather than one. The same allocation
/// holds the tree's table of published instances (`SharedReads.swift`), which every pod of the
/// tree reads without the lock. The words are touched only through the C module's atomic
/// operations, so they are safe to share although a managed buffer cannot be declared
/// `Sendable`: the engines that share it are. Its header is the tree's list of running
/// cleanups (`RunningCleanups`), touched only under the crossing lock of these words.
final class ThreadBuildGate: ManagedBuffer<CleanupList, pp_tree_words> {
  static func make() -> ThreadBuildGate {
    let gate = unsafeDowncast(
      create(minimumCapacity: 1) { _ in CleanupList() }, to: ThreadBuildGate.self)
    gate.withUnsafeMutablePointerToElements { pp_tree_words_init($0) }
    return gate
  }

  deinit {
    // Nothing reads the table any more: every record of the tree is gone.
    withUnsafeMutablePointerToElements { pp_tree_words_destroy($0) }
  }

  /// The tree's running cleanups (see `RunningCleanups`).
  var runningCleanups: RunningCleanups { RunningCleanups(gate: self) }

  /// Runs `body` with the list of running cleanups, under the crossing lock.
  func withCleanupList<Result>(_ body: (inout CleanupList) -> Result) -> Result {
    pp_crossing_lock(words)
    defer { pp_crossing_unlock(words) }
    return withUnsafeMutablePointerToHeader { body(&$0.pointee) }
  }

  /// The tree's shared words, for the table of published instances.
  @inline(__always)
  var words: UnsafeMutablePointer<pp_tree_words> {
    withUnsafeMutablePointerToElements { $0 }
  }

  @inline(__always)
  private var word: UnsafeMutablePointer<pp_atomic_counter> {
    pp_tree_gate(words)
  }

  /// Whether async builds run in the tree: their frames are bound to their tasks, where only
  /// a task-local lookup finds them.
  @inline(__always)
  var hasAsyncBuilds: Bool { Self.hasAsyncBuilds(in: words) }

  /// The same, read through the tree's words.
  @inline(__always)
  static func hasAsyncBuilds(in words: UnsafeMutablePointer<pp_tree_words>) -> Bool {
    pp_atomic_counter_load(pp_tree_gate(words)) >> 1 != 0
  }

  /// Open for a build with no known caller: nothing closes it. Read through the tree's words,
  /// as a pod's record keeps them (`PodRecord.treeWords`).
  @inline(__always)
  static func isOpen(in words: UnsafeMutablePointer<pp_tree_words>) -> Bool {
    pp_atomic_counter_load(pp_tree_gate(words)) == 0
  }

  /// Open for a build nested in a thread build: the root pod overrides nothing and is alive.
  @inline(__always)
  static func isOpenForNestedBuilds(in words: UnsafeMutablePointer<pp_tree_words>) -> Bool {
    pp_atomic_counter_load(pp_tree_gate(words)) & 1 == 0
  }

  /// Set under the tree's lock whenever the root's overrides change or it goes away, so that
  /// the last write is the state the lock left.
  func rootNeedsLookups(_ needsLookups: Bool) {
    if needsLookups {
      pp_atomic_counter_set_bits(word, 1)
    } else {
      pp_atomic_counter_clear_bits(word, 1)
    }
  }

  func asyncBuildStarted() {
    pp_atomic_counter_add(word, 2)
  }

  func asyncBuildEnded() {
    pp_atomic_counter_add(word, -2)
  }
}
