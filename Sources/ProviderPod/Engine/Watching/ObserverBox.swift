/// A pod's observer, boxed: a pod without one (every request's, on a server) then holds and
/// passes on a single null reference, where an optional existential of 40 bytes was copied,
/// checked and destroyed through its type's value witnesses at each step of making the pod
/// and letting it go (about 220 instructions a request).
final class ObserverBox: Sendable {
  let observer: any PodObserver

  private init(_ observer: any PodObserver) {
    self.observer = observer
  }

  /// The box for `observer`, or nil when there is none.
  static func boxing(_ observer: (any PodObserver)?) -> ObserverBox? {
    guard let observer else { return nil }
    return ObserverBox(observer)
  }
}
