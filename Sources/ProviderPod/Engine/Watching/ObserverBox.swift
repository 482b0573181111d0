/// A pod's observer, boxed: a pod without one (every request's, on a server) then holds and
/// passes on a single null reference, where an optional existential of 40 bytes was copied,
/// checked and destroyed through its type's value witnesses at each step of making the pod
/// and letting it go (about 220 instructions a request).
final class ObserverBox: Sendable {
  let observer: any PodObserver

  private init(_ observer: any PodObserver) {
    self.observer = observer
  }

  /// The box for `observer`, or nil when there is none. Borrowed: taken as owned, the
  /// caller's copy of the existential and its destruction cost a request's pod about 150
  /// instructions, with no observer to copy.
  static func boxing(_ observer: borrowing (any PodObserver)?) -> ObserverBox? {
    if observer == nil { return nil }
    return ObserverBox((copy observer)!)
  }
}
