import Foundation
import ProviderPod

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
