import Dispatch
import Testing

@testable import ProviderPod

@Suite("Watching a provider's instances", .timeLimit(.minutes(10)))
struct InstanceUpdatesTests {
  @Test(
    "yields the current instance, then a new one after each discard",
    arguments: ["scope cleared", "provider cleared", "override added", "dependency discarded"])
  func newInstanceAfterDiscard(cause: String) async throws {
    let config = Provider(scope: StepScope(), name: "config") { _ in 0 }
    let session = Provider(scope: FlowScope(), name: "session") { pod in
      Instance("session", serial: pod.resolve(config))
    }
    let pod = Pod()
    var iterator = pod.instances(of: session).makeAsyncIterator()
    let first = await iterator.next()!
    #expect(first === pod.resolve(session))
    switch cause {
    case "scope cleared": pod.clearCachedInstances(forScope: FlowScope())
    case "provider cleared": pod.clearCachedInstance(of: session)
    case "override added": pod.overrideProvider(session) { _ in Instance("fake", serial: 0) }
    default: pod.overrideProvider(config, withValue: 1)
    }
    let second = await iterator.next()!
    #expect(second !== first)
    #expect(second === pod.resolve(session))
  }

  @Test("changes that leave the instance alone yield nothing; several discards yield one")
  func onlyRealChanges() async throws {
    let session = instanceProvider("session", scope: FlowScope())
    let other = instanceProvider("other", scope: UnrelatedScope())
    let pod = Pod()
    var iterator = pod.instances(of: session).makeAsyncIterator()
    let first = await iterator.next()!
    _ = pod.resolve(other)
    pod.clearCachedInstances(forScope: UnrelatedScope())
    pod.overrideProvider(other, withValue: Instance("o", serial: 0))
    #expect(!hasPendingChange(pod))
    pod.clearCachedInstances(forScope: FlowScope())
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(hasPendingChange(pod))
    let second = await iterator.next()!
    #expect(second !== first)
    #expect(second === pod.resolve(session))
    #expect(!hasPendingChange(pod))
  }

  /// Whether the pod's only watcher has a change to hand out.
  private func hasPendingChange(_ pod: Pod) -> Bool {
    pod.engine.state.withLock { $0.watchers.instances.values.first!.isChanged }
  }

  @Test("never keeps an instance the pod discarded")
  func keepsNothing() async throws {
    let session = instanceProvider("session", scope: FlowScope())
    let pod = Pod()
    var iterator = pod.instances(of: session).makeAsyncIterator()
    weak var first: Instance?
    first = await iterator.next()!
    #expect(first != nil)  // the pod still caches it
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(first == nil)  // gone although the iterator has not moved on
    #expect(await iterator.next()! === pod.resolve(session))
  }

  @Test("ends when the pod goes away")
  func endsWithThePod() async throws {
    let session = instanceProvider("session", scope: FlowScope())
    var pod: Pod? = Pod()
    let instances = pod!.instances(of: session)
    let (signals, signal) = AsyncStream<Void>.makeStream()
    let watcher = Task {
      var count = 0
      for await _ in instances {
        count += 1
        signal.yield()
      }
      return count
    }
    _ = await signals.next("the first instance")
    pod = nil
    #expect(await watcher.value == 1)
    var late = instances.makeAsyncIterator()
    #expect(await late.next() == nil)
  }

  @Test("stops when the consuming task is cancelled, and lets go of its watch")
  func stopsOnCancellation() async throws {
    let session = instanceProvider("session", scope: FlowScope())
    let pod = Pod()
    let instances = pod.instances(of: session)
    let (signals, signal) = AsyncStream<Void>.makeStream()
    let watcher = Task {
      var count = 0
      for await _ in instances {
        count += 1
        signal.yield()
      }
      return count
    }
    _ = await signals.next("the first instance")
    watcher.cancel()
    #expect(await watcher.value == 1)
    #expect(pod.engine.state.withLock { $0.watchers.instances.isEmpty })
  }

  @Test("works for async providers and family members")
  func asyncAndFamilies() async throws {
    let config = AsyncProvider(scope: FlowScope(), name: "config") { _ in
      Instance("config", serial: 0)
    }
    let user = ProviderFamily(scope: FlowScope(), name: "user") { (_, id: Int) in
      Instance("user", serial: id)
    }
    let avatar = AsyncProviderFamily(scope: FlowScope(), name: "avatar") { (_, id: Int) in
      Instance("avatar", serial: id)
    }
    let pod = Pod()
    var configs = pod.instances(of: config).makeAsyncIterator()
    var users = pod.instances(of: user(7)).makeAsyncIterator()
    var avatars = pod.instances(of: avatar(7)).makeAsyncIterator()
    let firstConfig = try #require(try await configs.next())
    let firstUser = await users.next()!
    let firstAvatar = try #require(try await avatars.next())
    #expect(firstUser.serial == 7 && firstAvatar.serial == 7)
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(try await configs.next() !== firstConfig)
    #expect(await users.next() !== firstUser)
    #expect(try await avatars.next() !== firstAvatar)
  }

  @Test("a failed async build ends the sequence with its error")
  func failure() async throws {
    let attempts = Counter()
    let flaky = AsyncProvider(scope: FlowScope(), name: "flaky") { _ in
      let attempt = attempts.next()
      if attempt == 2 { throw Flaky(attempt: attempt) }
      return Instance("flaky", serial: attempt)
    }
    let pod = Pod()
    var iterator = pod.instances(of: flaky).makeAsyncIterator()
    _ = try await iterator.next()
    pod.clearCachedInstances(forScope: FlowScope())
    await #expect(throws: Flaky(attempt: 2)) { try await iterator.next() }
  }

  @Test("after throwing, the sequence has ended: it yields nothing more and lets go of its watch")
  func endsAfterFailure() async throws {
    let attempts = Counter()
    let flaky = AsyncProvider(scope: FlowScope(), name: "flaky") { _ in
      let attempt = attempts.next()
      if attempt == 1 { throw Flaky(attempt: attempt) }
      return Instance("flaky", serial: attempt)
    }
    let pod = Pod()
    var iterator = pod.instances(of: flaky).makeAsyncIterator()
    await #expect(throws: Flaky(attempt: 1)) { try await iterator.next() }
    #expect(pod.engine.state.withLock { $0.watchers.instances.isEmpty })
    _ = try await pod.resolve(flaky)
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(try await iterator.next() == nil)
    #expect(attempts.value == 2)  // the ended sequence built nothing
  }

  @Test("an always-new provider yields one instance")
  func alwaysNew() async throws {
    let fresh = instanceProvider("fresh", scope: AlwaysCreateNewScope())
    let scoped = instanceProvider("scoped", scope: FlowScope())
    let pod = Pod()
    var iterator = pod.instances(of: fresh).makeAsyncIterator()
    _ = await iterator.next()
    _ = pod.resolve(scoped)
    pod.clearCachedInstances(forScope: FlowScope())
    pod.clearCachedInstance(of: fresh)
    #expect(!hasPendingChange(pod))
  }

  @Test("a discard between the watcher's resolve and its next element is not missed")
  func discardRightAfterResolve() async throws {
    let session = instanceProvider("session", scope: FlowScope())
    // Runs on the resolving thread after the pod found the cached instance and before
    // resolve returned it: the narrowest window there is, made to happen every time.
    let observer = ReuseHook()
    let pod = Pod(observer: observer)
    observer.hook.withLock {
      $0 = {
        pod.clearCachedInstances(forScope: FlowScope())
        _ = pod.resolve(session)
      }
    }
    var iterator = pod.instances(of: session).makeAsyncIterator()
    let first = await iterator.next()!
    pod.clearCachedInstances(forScope: FlowScope())
    _ = pod.resolve(session)
    observer.isArmed.withLock { $0 = true }
    // Resolves the new instance, which the hook discards and replaces before it is handed out.
    let second = await iterator.next()!
    #expect(second !== first)
    let (values, yield) = AsyncStream<Instance>.makeStream()
    let third = Task {
      var iterator = iterator
      if let next = await iterator.next() { yield.yield(next) }
    }
    let current = await values.next("the instance that replaced the one just handed out")
    #expect(current != nil && current === pod.resolve(session))
    third.cancel()
  }

  @Test("discards racing the watcher on several threads are never missed")
  func racingDiscards() async throws {
    let session = instanceProvider("session", scope: FlowScope())
    let dependent = Provider(scope: StepScope(), name: "dependent") { pod in
      Instance("dependent", serial: 0, dependencies: [pod.resolve(session)])
    }
    let pod = Pod()
    let latest = Shared<Instance?>(nil)
    let (signals, signal) = AsyncStream<Void>.makeStream()
    let instances = pod.instances(of: session)
    let watcher = Task {
      for await instance in instances {
        latest.withLock { $0 = instance }
        signal.yield()
      }
    }
    _ = await signals.next("the first instance")
    // Two threads clear (the scope, and the provider through an override), one resolves so
    // that a new instance is often cached before the watcher looks.
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().async {
        onThreads(3) { index in
          for round in 0..<2000 {
            switch index {
            case 0: pod.clearCachedInstances(forScope: FlowScope())
            case 1:
              if round.isMultiple(of: 2) {
                pod.overrideProvider(session) { _ in Instance("override", serial: round) }
              } else {
                pod.removeOverrideProvider(session)
              }
            default: _ = pod.resolve(dependent)
            }
          }
        }
        done.resume()
      }
    }
    // Whatever the interleaving, the watcher ends up holding the instance the pod holds.
    let current = pod.resolve(session)
    while latest.withLock({ $0 }) !== current {
      guard await signals.next("the current instance") != nil else { break }
    }
    #expect(latest.withLock { $0 } === current)
    watcher.cancel()
    await watcher.value
    #expect(pod.invariantViolations.isEmpty)
  }
}

/// Runs a hook once, on the next `reused` event after it is armed.
private final class ReuseHook: PodObserver {
  let isArmed = Shared(false)
  let hook = Shared<(@Sendable () -> Void)?>(nil)

  func pod(_ pod: Pod, didReport event: PodEvent) {
    guard case .reused = event else { return }
    let fire = isArmed.withLock { armed in
      defer { armed = false }
      return armed
    }
    if fire { hook.withLock { $0 }?() }
  }
}
