import Dispatch
import Foundation
import ProviderPod
import Testing

/// Counts calls from any thread.
final class Counter: Sendable {
  private let count = Shared(0)

  /// Adds one and returns the new count.
  @discardableResult
  func next() -> Int {
    count.withLock {
      $0 += 1
      return $0
    }
  }

  var value: Int { count.withLock { $0 } }
}

/// A class instance with a visible identity, so tests can tell reuse from rebuild.
final class Instance: Sendable, CustomStringConvertible {
  let label: String
  let serial: Int
  let dependencies: [Instance]

  init(_ label: String, serial: Int, dependencies: [Instance] = []) {
    self.label = label
    self.serial = serial
    self.dependencies = dependencies
  }

  var description: String { "\(label)#\(serial)" }
}

/// A provider of `Instance`s that counts its builds.
func instanceProvider(
  _ label: String, scope: any ProviderScope = SingletonScope(), counter: Counter = Counter(),
  dependencies: [Provider<Instance>] = []
) -> Provider<Instance> {
  Provider(scope: scope, name: label) { pod in
    let deps = dependencies.map { pod.resolve($0) }
    return Instance(label, serial: counter.next(), dependencies: deps)
  }
}

/// The name of the file that calls this, as `#fileID` gives it, without the module.
func fileName(_ fileID: String = #fileID) -> String {
  String(fileID.split(separator: "/").last ?? "")
}

/// Records every event a pod reports.
final class EventRecorder: PodObserver {
  private let recorded = Shared<[PodEvent]>([])

  func pod(_ pod: Pod, didReport event: PodEvent) {
    recorded.withLock { $0.append(event) }
  }

  var events: [PodEvent] { recorded.withLock { $0 } }

  /// Returns the events so far and forgets them.
  func take() -> [PodEvent] {
    recorded.withLock { events in
      defer { events = [] }
      return events
    }
  }
}

struct FlowScope: ProviderScope {
  var children: [any ProviderScope] { [StepScope(), OtherStepScope()] }
}
struct StepScope: ProviderScope {
  var children: [any ProviderScope] { [LeafScope()] }
}
struct OtherStepScope: ProviderScope {}
struct LeafScope: ProviderScope {}
struct UnrelatedScope: ProviderScope {}

/// The scope a window's child pod owns, in an app with several windows; its steps are
/// cleared with it.
struct AppWindowScope: ProviderScope {
  var children: [any ProviderScope] { [WindowStepScope()] }
}
/// A step in a window: the scope a window's own child pods own.
struct WindowStepScope: ProviderScope {}

/// A scope tree with a cycle: A -> B -> A.
struct CycleScopeA: ProviderScope {
  var children: [any ProviderScope] { [CycleScopeB()] }
}
struct CycleScopeB: ProviderScope {
  var children: [any ProviderScope] { [CycleScopeA(), SingletonScope()] }
}

/// A value shared between threads, behind an `NSLock`.
///
/// Not `Synchronization.Mutex`: on Linux it locks with futex calls the thread sanitizer does
/// not see, so every access it guards is reported as a race.
final class Shared<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}

// MARK: Pods kept where builders reach them

/// A pod kept where builders reach it without their parameter, as an app's global is.
final class PodHolder: @unchecked Sendable {
  var pod: Pod!
}

/// A parent pod and its child, kept where builders reach them, as an app's globals are.
final class PodTreeHolder: @unchecked Sendable {
  var parent: Pod!
  var child: Pod!
}

/// An app's pod kept in a global, and a child of it: builders reach them without their
/// parameter, and so do exit tests, which cannot capture locals.
let globalPod = Pod()
let globalChildPod = Pod(parent: globalPod)
/// A second pod in a global, with a tree of its own.
let otherGlobalPod = Pod()

/// What an exit test's process wrote to its standard error, as text.
func standardError(_ result: ExitTest.Result?) -> String {
  String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// A task executor that runs its jobs one at a time, in the order they come, on a queue of its
/// own. Tasks that prefer it run their nonisolated code there, so a test can tell when every
/// one of them has got as far as it can without waiting for something else.
final class SerialTaskExecutor: TaskExecutor, @unchecked Sendable {
  private let queue = DispatchQueue(label: "SerialTaskExecutor")
  /// Jobs enqueued and not yet run.
  private let pending = Shared(0)

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    pending.withLock { $0 += 1 }
    queue.async {
      job.runSynchronously(on: self.asUnownedTaskExecutor())
      self.pending.withLock { $0 -= 1 }
    }
  }

  /// Returns once no job is queued or running here: every task that prefers this executor is
  /// suspended, waiting on something elsewhere, or done.
  func waitUntilIdle() async {
    while true {
      let isIdle = await withCheckedContinuation { continuation in
        // Runs after every job queued so far; no job runs at the same time.
        queue.async { continuation.resume(returning: self.pending.withLock { $0 } == 0) }
      }
      if isIdle { return }
    }
  }
}

// MARK: Threads, gates and watchdogs

/// Starts `body` on a new thread of its own (not a pool thread, so blocking it never starves
/// anything), with a stack of `stackSize` bytes if given, and returns a semaphore signalled
/// when it is done.
@discardableResult
func startThread(
  stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void
) -> DispatchSemaphore {
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    body()
    done.signal()
  }
  if let stackSize { thread.stackSize = stackSize }
  thread.start()
  return done
}

/// Runs `body` on `count` threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let threads = (0..<count).map { index in startThread { body(index) } }
  for done in threads { done.wait() }
}

/// Runs `body` on `count` new threads at once (with stacks of `stackSize` bytes if given) and
/// returns once every one has ended, its thread-local destructors included: unlike
/// `onThreads`, nothing of the threads (their `Thread` object, the closure and what it
/// captured) is left when this returns.
func onThreadsUntilTheyEnd(
  _ count: Int, stackSize: Int? = nil, _ body: @escaping @Sendable (Int) -> Void
) {
  final class Body {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }
  #if canImport(Darwin)
    var threads: [pthread_t?] = []
  #else
    var threads: [pthread_t] = []
  #endif
  for index in 0..<count {
    let argument = Unmanaged.passRetained(Body { body(index) }).toOpaque()
    #if canImport(Darwin)
      var thread: pthread_t?
    #else
      var thread = pthread_t()
    #endif
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
    let status = pthread_create(
      &thread, &attributes,
      { raw in
        #if canImport(Darwin)
          let raw = raw
        #else
          let raw = raw!
        #endif
        Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
        return nil
      }, argument)
    #expect(status == 0)
    threads.append(thread)
  }
  for thread in threads {
    #if canImport(Darwin)
      pthread_join(thread!, nil)
    #else
      pthread_join(thread, nil)
    #endif
  }
}

/// Runs `body` on a new thread (with a stack of `stackSize` bytes if given) and returns once
/// the thread has ended.
func runUntilThreadEnds(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
  onThreadsUntilTheyEnd(1, stackSize: stackSize) { _ in body() }
}

/// Runs `body` on a thread of its own with a stack of `stackSize` bytes, and waits for it.
func onThreadWithStack(_ stackSize: Int, _ body: @escaping @Sendable () -> Void) {
  _ = waitForWorkOrFail(startThread(stackSize: stackSize, body), "the thread with a large stack")
}

/// Whether the thread sanitizer's runtime is loaded: its trace of a 10,000-level recursion
/// takes it a minute, and its runtime has been seen to deadlock starting a thread after one.
let underThreadSanitizer = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil

/// Waits for `semaphore`, but no longer than a signal that should come at once can take: past
/// that it is a deadlock, and the test should fail rather than hang. Never a sleep: the happy
/// path does not wait for the limit. Returns false if the limit was reached.
///
/// For threads that cannot record an issue, such as a builder's; the test's own checks fail.
@discardableResult
func waitWithWatchdog(_ semaphore: DispatchSemaphore) -> Bool {
  semaphore.wait(timeout: .now() + .seconds(20)) == .success
}

/// Waits for `semaphore` like `waitWithWatchdog`, and records a deadlock if the limit is
/// reached.
func waitOrFail(_ semaphore: DispatchSemaphore, _ what: Comment) -> Bool {
  if !waitWithWatchdog(semaphore) {
    Issue.record("timed out waiting for \(what): deadlock")
    return false
  }
  return true
}

/// Waits for a thread that does some of the test's work, for as long as that can take on a
/// loaded machine under a sanitizer: ten minutes, a hang watchdog only, which a slow run
/// never reaches (a 2,000-deep chain under the thread sanitizer, beside other builds, has
/// taken more than 20 seconds). Records a hang if it is reached.
func waitForWorkOrFail(_ done: DispatchSemaphore, _ what: Comment) -> Bool {
  guard done.wait(timeout: .now() + .seconds(hangWatchdogSeconds)) == .success else {
    Issue.record("timed out waiting for \(what): hung")
    return false
  }
  return true
}

/// A barrier for a fixed number of threads, reusable across rounds. Each round has its own
/// semaphore, so a fast thread arriving at the next round cannot take a slow one's wake-up.
final class Barrier: Sendable {
  private let state: Shared<(waiting: Int, gate: DispatchSemaphore)>
  private let count: Int

  init(_ count: Int) {
    self.count = count
    state = Shared((0, DispatchSemaphore(value: 0)))
  }

  func arrive() {
    let (gate, isLast) = state.withLock { state in
      let gate = state.gate
      state.waiting += 1
      guard state.waiting == count else { return (gate, false) }
      state.waiting = 0
      state.gate = DispatchSemaphore(value: 0)
      return (gate, true)
    }
    if isLast {
      for _ in 1..<count { gate.signal() }
    } else {
      gate.wait()
    }
  }
}

/// A one-shot signal tasks can wait for.
actor AsyncGate {
  private var isOpen = false
  private var waiting: [CheckedContinuation<Void, Never>] = []

  func open() {
    isOpen = true
    for continuation in waiting { continuation.resume() }
    waiting = []
  }

  func wait() async {
    if isOpen { return }
    await withCheckedContinuation { waiting.append($0) }
  }
}

// MARK: Randomness and logs

/// A small seeded generator, so failures can be replayed.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64
  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  mutating func next(below bound: Int) -> Int {
    Int(next() % UInt64(bound))
  }
}

/// Records disposals in order, from any thread.
final class DisposalLog: Sendable {
  private let log = Shared<[String]>([])
  func record(_ instance: Instance) { log.withLock { $0.append(instance.description) } }
  var entries: [String] { log.withLock { $0 } }
  func take() -> [String] {
    log.withLock { log in
      defer { log = [] }
      return log
    }
  }
}

/// The fixed seeds of a random test, plus one from the environment variable `variable`, to
/// replay a failure by its seed.
func modelSeeds(replayingFrom variable: String) -> [UInt64] {
  var seeds: [UInt64] = [1, 2, 3, 42, 2026, 0xC0FFEE]
  if let extra = ProcessInfo.processInfo.environment[variable], let seed = UInt64(extra) {
    seeds.append(seed)
  }
  return seeds
}
