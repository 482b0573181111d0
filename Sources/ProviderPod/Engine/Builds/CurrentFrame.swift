/// The builds running on the current thread or task, so that a builder that resolves through
/// another reference to its pod (a pod kept in a global, say) is seen as nested in its build:
/// its cycles are reported and what it resolves is recorded as a dependency.
///
/// A synchronous build is pushed on a per-thread stack for as long as its builder runs. An
/// async build is bound to its task with a task-local value, which child tasks inherit; a
/// frame found there that has finished is ignored by the engine.
enum CurrentFrame {
  @TaskLocal static var task: Frame?

  /// Makes `frame` the current thread's innermost build, until `pop`.
  @inline(__always)
  static func push(_ frame: Frame) {
    ThreadRecord.current.push(frame)
  }

  @inline(__always)
  static func pop(_ frame: Frame) {
    ThreadRecord.current.pop(frame)
  }

  /// The innermost build on this thread, else the one bound to this task, that a resolve
  /// through `pod` is nested in: one of the same tree of pods, resolving through `pod`, a pod
  /// below it or a pod above it. Whether it is still running is for
  /// the engine to check, under its lock.
  static func innermost(in treeID: ObjectIdentifier, for pod: PodRecord) -> Frame? {
    var next = ThreadRecord.innermostFrame
    while let frame = next {
      if frame.treeID == treeID, related(pod, frame.pod!) { return frame }
      next = frame.previousOnThread
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
