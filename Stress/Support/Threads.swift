#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs `body(index)` on `count` OS threads of their own and waits for all of them.
///
/// Real threads rather than `DispatchQueue.concurrentPerform`: on a 2-core machine that runs
/// at most two iterations at once, and a scenario whose third thread is the one that clears
/// would then never race at all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  onThreads(count, stackSize: nil, body)
}

/// `onThreads` on threads with a stack of `stackSize` bytes (the system's default when nil).
func onThreads(_ count: Int, stackSize: Int?, _ body: @escaping @Sendable (Int) -> Void) {
  let threads = (0..<count).map { index in startThread(stackSize: stackSize) { body(index) } }
  for thread in threads { pthread_join(thread, nil) }
}

private final class ThreadBody: @unchecked Sendable {
  let run: @Sendable () -> Void
  init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

private func startThread(
  stackSize: Int?, _ body: @escaping @Sendable () -> Void
) -> pthread_t {
  let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
  #if canImport(Glibc)
    var thread = pthread_t()
  #else
    var thread: pthread_t?
  #endif
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  defer { pthread_attr_destroy(&attributes) }
  if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
  let result = pthread_create(
    &thread, &attributes,
    { raw in
      Unmanaged<ThreadBody>.fromOpaque(nonNil(raw)).takeRetainedValue().run()
      return nil
    }, box)
  precondition(result == 0, "PodStress: could not start a thread (\(result))")
  #if canImport(Glibc)
    return thread
  #else
    return thread!
  #endif
}

/// The start routine's argument is optional on Glibc and not on Darwin.
private func nonNil(_ pointer: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer { pointer! }

/// When a scenario's racing loops stop.
struct Deadline: Sendable {
  let end: ContinuousClock.Instant

  init(after duration: Duration) { end = .now + duration }

  var hasPassed: Bool { ContinuousClock.now >= end }
}

/// A cheap pseudo-random generator per thread: `SystemRandomNumberGenerator` would make a
/// system call per number, which slows the loops and smooths out the races they look for.
struct FastRandom {
  private var state: UInt64

  init(seed: Int) { state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1 }

  mutating func next(_ bound: Int) -> Int {
    state ^= state << 13
    state ^= state >> 7
    state ^= state << 17
    return Int(state % UInt64(bound))
  }
}
