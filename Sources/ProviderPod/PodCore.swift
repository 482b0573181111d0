import Dispatch

/// What a pod and the views its builders receive share: the state and its lock, and the
/// observer.
final class PodCore: @unchecked Sendable {
  let state: Locked<PodState>
  let observer: (any PodObserver)?
  /// `observer != nil`, kept apart: testing the existential copies it on every resolve.
  let isObserved: Bool
  /// The pod itself, for observers. Weak: views live in the pod's state between builds.
  /// Written once, before the core is shared.
  weak var root: Pod?

  init(state: PodState, observer: (any PodObserver)?) {
    self.state = Locked(state)
    self.observer = observer
    self.isObserved = observer != nil
  }
}
