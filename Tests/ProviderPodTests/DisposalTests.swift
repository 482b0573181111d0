import Dispatch
import Foundation
import ProviderPod
import Testing

/// A provider of `Instance`s whose disposals go to `log`.
private func disposable(
  _ label: String, scope: any ProviderScope = SingletonScope(), log: DisposalLog,
  dependencies: [Provider<Instance>] = []
) -> Provider<Instance> {
  let counter = Counter()
  return Provider(scope: scope, name: label, onDiscard: { log.record($0) }) { pod in
    Instance(label, serial: counter.next(), dependencies: dependencies.map { pod.resolve($0) })
  }
}

@Suite("Disposal hooks")
struct DisposalTests {
  let log = DisposalLog()

  @Test("a scope clear disposes each cached instance once")
  func scopeClear() {
    let session = disposable("session", scope: FlowScope(), log: log)
    let pod = Pod()
    _ = pod.resolve(session)
    _ = pod.resolve(session)
    pod.clearCachedInstances(forScope: FlowScope())
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(log.take() == ["session#1"])
  }

  @Test("dependents are disposed before what they were built from")
  func dependentsFirst() {
    // base <- middle <- top, and top also straight on base: top must go first.
    let base = disposable("base", scope: StepScope(), log: log)
    let middle = disposable("middle", log: log, dependencies: [base])
    let top = disposable("top", log: log, dependencies: [base, middle])
    let pod = Pod()
    _ = pod.resolve(top)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(log.take() == ["top#1", "middle#1", "base#1"])
  }

  @Test("a long chain is disposed in order without running out of stack")
  func longChain() {
    var chain = [disposable("link0", scope: StepScope(), log: log)]
    for index in 1..<3_000 {
      chain.append(disposable("link\(index)", log: log, dependencies: [chain[index - 1]]))
    }
    let pod = Pod()
    for provider in chain { _ = pod.resolve(provider) }
    pod.clearCachedInstances(forScope: StepScope())
    let disposed = log.take()
    #expect(disposed.count == 3_000)
    #expect(disposed.first == "link2999#1")
    #expect(disposed.last == "link0#1")
  }

  @Test("adding, replacing and removing an override dispose what they discard")
  func overrideChanges() {
    let service = disposable("service", log: log)
    let pod = Pod()
    _ = pod.resolve(service)
    pod.overrideProvider(service) { _ in Instance("override", serial: 1) }
    #expect(log.take() == ["service#1"])
    _ = pod.resolve(service)
    pod.overrideProvider(service) { _ in Instance("replacement", serial: 1) }
    #expect(log.take() == ["override#1"])  // a `with:` override's instance is the pod's own
    _ = pod.resolve(service)
    pod.removeOverrideProvider(service)
    #expect(log.take() == ["replacement#1"])
  }

  @Test("an explicit clear disposes, and reports providerCleared")
  func explicitClear() {
    let service = disposable("service", log: log)
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    _ = pod.resolve(service)
    _ = recorder.take()
    pod.clearCachedInstance(of: service)
    #expect(log.take() == ["service#1"])
    #expect(
      recorder.take() == [
        .discarded(provider: "service", scope: "SingletonScope", reason: .providerCleared)
      ])
  }

  @Test("a pod going away disposes everything it cached, dependents first, without events")
  func podDeinit() {
    let recorder = EventRecorder()
    let base = disposable("base", log: log)
    let top = disposable("top", scope: StepScope(), log: log, dependencies: [base])
    do {
      let pod = Pod(observer: recorder)
      _ = pod.resolve(top)
      _ = recorder.take()
    }
    #expect(log.take() == ["top#1", "base#1"])
    #expect(recorder.take().isEmpty)
  }

  @Test("hooks run outside the lock, before the call returns: they may resolve and clear")
  func reentrantHooks() {
    let other = instanceProvider("other", scope: UnrelatedScope())
    let seen = Shared<[String]>([])
    let counter = Counter()
    let service: Provider<Instance> = Provider(
      scope: FlowScope(), name: "service",
      onDiscard: { old in
        // Resolving the provider being discarded gives a fresh instance, not the old one.
        seen.withLock { $0.append("hook saw \(old)") }
      }
    ) { _ in Instance("service", serial: counter.next()) }
    let pod = Pod()
    let holder = Shared<Pod?>(pod)
    let reentrant: Provider<Instance> = Provider(
      scope: FlowScope(), name: "reentrant",
      onDiscard: { _ in
        let pod = holder.withLock { $0 }!
        let fresh = pod.resolve(service)
        seen.withLock { $0.append("fresh \(fresh)") }
        pod.clearCachedInstances(forScope: UnrelatedScope())
      }
    ) { _ in Instance("reentrant", serial: 0) }
    _ = pod.resolve(service)
    _ = pod.resolve(reentrant)
    let other1 = pod.resolve(other)
    pod.clearCachedInstances(forScope: FlowScope())
    // Both hooks ran before clearCachedInstances returned.
    let log = seen.withLock { $0 }
    #expect(log.contains("hook saw service#1"))
    #expect(log.contains("fresh service#2"))
    #expect(pod.resolve(other) !== other1)
    holder.withLock { $0 = nil }
  }

  @Test("no hook for withValue overrides, weak or always-new instances")
  func notOwned() {
    let valued = disposable("valued", scope: FlowScope(), log: log)
    let weak = disposable("weak", scope: WeakScope(), log: log)
    let fresh = disposable("fresh", scope: AlwaysCreateNewScope(), log: log)
    let held = Instance("given", serial: 0)
    do {
      let pod = Pod(overrides: [valued.override(withValue: held)])
      _ = pod.resolve(valued)
      let keepWeak = pod.resolve(weak)
      _ = pod.resolve(fresh)
      pod.clearCachedInstances(forScope: FlowScope())
      pod.clearCachedInstances(forScope: WeakScope())
      withExtendedLifetime(keepWeak) {}
    }
    #expect(log.entries.isEmpty)
  }

  @Test("an instance a raced build handed out uncached gets no hook")
  func racedBuildNotOwned() {
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let counter = Counter()
    let gated = Provider(
      scope: StepScope(), name: "gated", onDiscard: { [log] in log.record($0) }
    ) { _ in
      let serial = counter.next()
      if serial == 1 {
        started.signal()
        waitWithWatchdog(release)
      }
      return Instance("gated", serial: serial)
    }
    let pod = Pod()
    let done = startThread { _ = pod.resolve(gated) }
    guard waitOrFail(started, "the build to start") else { return }
    pod.clearCachedInstances(forScope: StepScope())
    release.signal()
    guard waitOrFail(done, "the build to finish") else { return }
    _ = pod.resolve(gated)  // #2, cached
    pod.clearCachedInstances(forScope: StepScope())
    #expect(log.take() == ["gated#2"])
  }

  @Test("family members are disposed with the family's hook")
  func familyHook() {
    let family = ProviderFamily(
      scope: StepScope(), name: "member", onDiscard: { [log] in log.record($0) }
    ) { (_, id: Int) in Instance("member\(id)", serial: 1) }
    let pod = Pod()
    _ = (pod.resolve(family(1)), pod.resolve(family(2)))
    pod.clearCachedInstances(of: family)
    #expect(log.take().sorted() == ["member1#1", "member2#1"])
  }
}
