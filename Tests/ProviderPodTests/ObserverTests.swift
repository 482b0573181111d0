import ProviderPod
import Testing

@Suite("Observing the pod: events and captive dependencies")
struct ObserverTests {
  @Test("built, reused, overridden and discarded events with names and reasons")
  func eventSequence() {
    let session = instanceProvider("session", scope: StepScope())
    let form = instanceProvider("form", scope: StepScope(), dependencies: [session])
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    _ = pod.resolve(form)
    _ = pod.resolve(form)
    #expect(
      recorder.take() == [
        .built(provider: "session", scope: "StepScope"),
        .built(provider: "form", scope: "StepScope"),
        .reused(provider: "form", scope: "StepScope"),
      ])
    pod.overrideProvider(session) { _ in Instance("fake", serial: 0) }
    #expect(
      recorder.take() == [
        .overridden(provider: "session"),
        .discarded(provider: "session", scope: "StepScope", reason: .overrideChanged),
        .discarded(provider: "form", scope: "StepScope", reason: .dependencyDiscarded),
      ])
    _ = pod.resolve(form)
    _ = recorder.take()
    pod.clearCachedInstances(forScope: StepScope())
    let cleared = recorder.take()
    #expect(cleared.count == 2)
    #expect(
      cleared.contains(.discarded(provider: "session", scope: "StepScope", reason: .scopeCleared)))
    #expect(
      cleared.contains(.discarded(provider: "form", scope: "StepScope", reason: .scopeCleared)))
  }

  @Test("initial overrides are reported")
  func initialOverridesReported() {
    let provider = instanceProvider("p")
    let recorder = EventRecorder()
    _ = Pod(overrides: [provider.override(withValue: Instance("v", serial: 0))], observer: recorder)
    #expect(recorder.events == [.overridden(provider: "p")])
  }

  @Test("a singleton built from a scoped instance is reported as a captive dependency")
  func captiveDependency() {
    let scoped = instanceProvider("scoped", scope: StepScope())
    let holder = instanceProvider("holder", dependencies: [scoped])
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    _ = pod.resolve(holder)
    #expect(
      recorder.events.contains(
        .captiveDependency(
          holder: "holder", holderScope: "SingletonScope",
          dependency: "scoped", dependencyScope: "StepScope")))
  }

  @Test("an instance in a child scope may depend on its parent scope")
  func childOnParentIsNotCaptive() {
    let flow = instanceProvider("flow", scope: FlowScope())
    let step = instanceProvider("step", scope: StepScope(), dependencies: [flow])
    let parentOnChild = instanceProvider("parentOnChild", scope: FlowScope(), dependencies: [step])
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    _ = pod.resolve(step)
    #expect(!recorder.events.contains { if case .captiveDependency = $0 { true } else { false } })
    _ = pod.resolve(parentOnChild)
    #expect(
      recorder.events.contains(
        .captiveDependency(
          holder: "parentOnChild", holderScope: "FlowScope",
          dependency: "step", dependencyScope: "StepScope")))
  }

  @Test("events reach the observer before the call returns, and it may call back in")
  func reentrantObserver() {
    final class Reentrant: PodObserver {
      let provider: Provider<Instance>
      let seen = Counter()
      init(_ provider: Provider<Instance>) { self.provider = provider }
      func pod(_ pod: Pod, didReport event: PodEvent) {
        if case .built = event {
          seen.next()
          // Calling back into the pod from an observer must not deadlock.
          _ = pod.resolve(provider)
        }
      }
    }
    let other = instanceProvider("other")
    let observer = Reentrant(other)
    let pod = Pod(observer: observer)
    _ = pod.resolve(instanceProvider("first"))
    #expect(observer.seen.value == 2)  // "first", then "other" from inside the observer
  }

  @Test("observers are told about the pod itself, also for events inside builders")
  func observerGetsThePod() {
    final class PodCatcher: PodObserver {
      let pods = Counter()
      let expected: @Sendable (Pod) -> Bool
      init(_ expected: @escaping @Sendable (Pod) -> Bool) { self.expected = expected }
      func pod(_ pod: Pod, didReport event: PodEvent) { if expected(pod) { pods.next() } }
    }
    final class Holder: @unchecked Sendable { var pod: Pod? }
    let holder = Holder()
    let catcher = PodCatcher { $0 === holder.pod }
    let pod = Pod(observer: catcher)
    holder.pod = pod
    let inner = instanceProvider("inner")
    _ = pod.resolve(instanceProvider("outer", dependencies: [inner]))
    #expect(catcher.pods.value == 2)
  }

  @Test("events describe themselves in one line")
  func descriptions() {
    #expect(
      PodEvent.built(provider: "a", scope: "SingletonScope").description
        == "built a in SingletonScope")
    #expect(
      PodEvent.discarded(provider: "a", scope: "StepScope", reason: .scopeCleared).description
        == "discarded a in StepScope (scopeCleared)")
  }
}
