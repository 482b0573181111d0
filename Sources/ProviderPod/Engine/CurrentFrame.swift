internal import CProviderPod

/// The builds running on the current thread or task, so that a builder that resolves through
/// another reference to its pod (a pod kept in a global, say) is seen as nested in its build:
/// its cycles are reported and what it resolves is recorded as a dependency.
///
/// A synchronous build is pushed on a per-thread stack for as long as its builder runs. An
/// async build is bound to its task with a task-local value, which child tasks inherit; a
/// frame found there that has finished is ignored by the engine.
enum CurrentFrame {
  @TaskLocal static var task: Frame?

  /// The current thread's record of its builds (see `CProviderPod`), made on first use. It
  /// also keeps the thread's idle frames for the always-new builds it runs, which it lets go
  /// of when the thread ends.
  @inline(__always)
  static var thread: UnsafeMutablePointer<pp_thread_builds> {
    pp_thread_builds_current { builds in
      Frame.releaseSpares(from: builds.pointee.spare)
      builds.pointee.spare = nil
      builds.pointee.spare_count = 0
    }
  }

  /// The current thread's record, if it has run a build.
  @inline(__always)
  static var existingThread: UnsafeMutablePointer<pp_thread_builds>? {
    pp_thread_builds_existing()
  }

  /// Whether a build runs on the current thread, in any tree of pods.
  @inline(__always)
  static var threadIsBuilding: Bool { pp_thread_innermost() != nil }

  private static func frame(at raw: UnsafeMutableRawPointer?) -> Frame? {
    raw.map { Unmanaged<Frame>.fromOpaque($0).takeUnretainedValue() }
  }

  /// Makes `frame` the current thread's innermost build, until `pop`. The caller keeps
  /// `frame` alive until then, so the thread holds it unretained. A push and a pop rather
  /// than a closure: the closure's context cost retains on every build.
  @inline(__always)
  static func push(_ frame: Frame, on thread: UnsafeMutablePointer<pp_thread_builds>) {
    frame.threadPrevious = thread.pointee.innermost
    thread.pointee.innermost = Unmanaged.passUnretained(frame).toOpaque()
  }

  @inline(__always)
  static func push(_ frame: Frame) {
    push(frame, on: thread)
  }

  /// Makes the build `frame` was pushed over the innermost again.
  @inline(__always)
  static func pop(_ frame: Frame, on thread: UnsafeMutablePointer<pp_thread_builds>) {
    thread.pointee.innermost = frame.threadPrevious
    frame.threadPrevious = nil
  }

  @inline(__always)
  static func pop(_ frame: Frame) {
    pop(frame, on: thread)
  }

  /// The innermost build on this thread, else the one bound to this task, that a resolve
  /// through `pod` is nested in: one of the same tree of pods, resolving through `pod`, a pod
  /// below it or a pod above it. Whether it is still running is for
  /// the engine to check, under its lock.
  static func innermost(in treeID: ObjectIdentifier, for pod: PodRecord) -> Frame? {
    var next = frame(at: pp_thread_innermost())
    while let frame = next {
      if frame.treeID == treeID, related(pod, frame.pod.unsafelyUnwrapped) { return frame }
      next = Self.frame(at: frame.threadPrevious)
    }
    if let frame = task, frame.treeID == treeID, let framePod = frame.pod, related(pod, framePod) {
      return frame
    }
    return nil
  }

  /// Whether one of the pods is the other or above it: a build running for a pod is nested
  /// with resolves through its ancestors (what it resolves there is shared) and through its
  /// descendants (what it resolves there makes the instance theirs). Siblings are unrelated.
  private static func related(_ pod: PodRecord, _ other: PodRecord) -> Bool {
    pod.isAncestor(ofOrSameAs: other) || other.isAncestor(ofOrSameAs: pod)
  }

  /// Whether this thread or task is inside a build that a resolve through `pod` is nested in.
  static func isInsideBuild(of treeID: ObjectIdentifier, for pod: PodRecord) -> Bool {
    innermost(in: treeID, for: pod) != nil
  }
}
