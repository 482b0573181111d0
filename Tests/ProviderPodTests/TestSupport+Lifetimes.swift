import Dispatch
import Foundation
import ProviderPod

// Trackers of what is alive: kept contexts, weak references, live counts and disposals, for
// tests that check nothing leaks and nothing is released or disposed of twice.

/// An instance that keeps the context its builder was given, as a view model that resolves
/// lazily does.
final class ContextKeeper: Sendable {
  let context: BuildContext
  let serial: Int
  init(_ context: BuildContext, serial: Int = 0) {
    self.context = context
    self.serial = serial
  }
}

/// An instance that keeps the context its builder was given, and says when it goes.
final class GoneSignallingContextKeeper: Sendable {
  let context: BuildContext
  let gone: DispatchSemaphore
  init(_ context: BuildContext, gone: DispatchSemaphore) {
    self.context = context
    self.gone = gone
  }
  deinit { gone.signal() }
}

/// Weak references shared between threads.
final class WeakList: @unchecked Sendable {
  private let lock = NSLock()
  private var boxes: [WeakObject] = []

  final class WeakObject {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
  }

  func add(_ object: AnyObject) {
    lock.lock()
    defer { lock.unlock() }
    boxes.append(WeakObject(object))
  }

  var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return boxes.count
  }

  var liveCount: Int {
    lock.lock()
    defer { lock.unlock() }
    return boxes.filter { $0.object != nil }.count
  }
}

/// Counts live objects: a leak leaves it above zero, a double release crashes.
final class LiveCount: Sendable {
  private let count = Shared(0)
  func up() { count.withLock { $0 += 1 } }
  func down() { count.withLock { $0 -= 1 } }
  var value: Int { count.withLock { $0 } }
}

/// An object counted in a `LiveCount` while it lives.
final class Tracked: Sendable {
  let live: LiveCount
  let serial: Int
  let dependencies: [Tracked]
  init(_ live: LiveCount, serial: Int, dependencies: [Tracked] = []) {
    self.live = live
    self.serial = serial
    self.dependencies = dependencies
    live.up()
  }
  deinit { live.down() }
}

/// Records which instances were disposed of, and how often each was. Keeps them, so that no
/// address is reused by a later instance.
final class DisposalCounts: @unchecked Sendable {
  private let counts = Shared<[ObjectIdentifier: (instance: AnyObject, count: Int)]>([:])
  func record(_ instance: AnyObject) {
    counts.withLock { $0[ObjectIdentifier(instance), default: (instance, 0)].count += 1 }
  }
  var duplicates: Int { counts.withLock { $0.values.filter { $0.count > 1 }.count } }
  /// How many instances were handed to a hook: each is kept here, alive, from then on.
  var distinct: Int { counts.withLock { $0.count } }
  func count(of instance: AnyObject) -> Int {
    counts.withLock { $0[ObjectIdentifier(instance)]?.count ?? 0 }
  }
}
