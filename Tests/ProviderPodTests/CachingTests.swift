import Testing

@testable import ProviderPod

private protocol Greeter: Sendable { func greet() -> String }
private struct EnglishGreeter: Greeter { func greet() -> String { "hello" } }

private struct Point: Equatable { var x: Int, y: Int }

@Suite("Caching by scope")
struct CachingTests {
  @Test("a singleton is built once per pod")
  func singletonBuiltOnce() {
    let counter = Counter()
    let provider = instanceProvider("single", counter: counter)
    let pod = Pod()
    let first = pod.resolve(provider)
    for _ in 0..<10 { #expect(pod.resolve(provider) === first) }
    #expect(counter.value == 1)
  }

  @Test("a custom scope caches one instance per provider until it is cleared")
  func customScopeCaches() {
    let counter = Counter()
    let provider = instanceProvider("step", scope: StepScope(), counter: counter)
    let pod = Pod()
    let first = pod.resolve(provider)
    #expect(pod.resolve(provider) === first)
    #expect(counter.value == 1)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(provider) !== first)
    #expect(counter.value == 2)
  }

  @Test("a cleared provider's slot stays for its next instance; a family member's goes")
  func clearedSlotsStay() {
    let plain = instanceProvider("step", scope: StepScope())
    let family = ProviderFamily(scope: StepScope(), name: "member") { (_, id: Int) in id }
    let pod = Pod()
    for _ in 0..<3 {
      _ = pod.resolve(plain)
      #expect(pod.resolve(family(1)) == 1)
      #expect(pod.slotCount == 2)
      pod.clearCachedInstances(forScope: StepScope())
      // Freeing and remaking the plain provider's slot on every clear and rebuild cost half
      // of the clear; a family's members are made from arguments, without bound.
      #expect(pod.slotCount == 1)
      #expect(pod.invariantViolations == [])
    }
  }

  @Test("a long-lived pod does not keep the slots of providers made at run time and gone")
  func slotsOfGoneProvidersGo() {
    let kept = instanceProvider("kept", scope: StepScope())
    let pod = Pod()
    for index in 0..<5_000 {
      // A provider made per screen, say: resolved, cleared, then gone.
      let screen = Provider(scope: StepScope(), name: "screen\(index)") { _ in index }
      #expect(pod.resolve(screen) == index)
      _ = pod.resolve(kept)
      pod.clearCachedInstances(forScope: StepScope())
    }
    // Swept whenever the table doubles past 1,024: what is left is at most one round's worth.
    #expect(pod.slotCount <= 2_048)
    _ = pod.resolve(kept)
    #expect(pod.invariantViolations == [])
  }

  @Test("AlwaysCreateNewScope runs the builder on every resolve")
  func alwaysCreateNew() {
    let counter = Counter()
    let provider = instanceProvider("new", scope: AlwaysCreateNewScope(), counter: counter)
    let pod = Pod()
    let instances = (0..<5).map { _ in pod.resolve(provider) }
    #expect(counter.value == 5)
    #expect(Set(instances.map(ObjectIdentifier.init)).count == 5)
  }

  @Test("a cached nil is a cached value, not a miss")
  func cachedNil() {
    let counter = Counter()
    let provider = Provider<Int?> { _ in
      counter.next()
      return nil
    }
    let pod = Pod()
    #expect(pod.resolve(provider) == nil)
    #expect(pod.resolve(provider) == nil)
    #expect(counter.value == 1)
  }

  @Test("nested optionals keep their shape")
  func nestedOptional() {
    let counter = Counter()
    let provider = Provider<Int??> { _ in
      counter.next()
      return .some(nil)
    }
    let pod = Pod()
    #expect(pod.resolve(provider) == .some(nil))
    #expect(pod.resolve(provider) == .some(nil))
    #expect(counter.value == 1)
  }

  @Test("any Sendable, Void, tuples, structs, existentials and functions are cached")
  func everyKindOfValue() {
    let counter = Counter()
    let anyProvider = Provider<any Sendable> { _ in counter.next() }
    let voidProvider = Provider<Void> { _ in counter.next() }
    let tupleProvider = Provider<(Int, String)> { _ in (counter.next(), "t") }
    let structProvider = Provider { _ in Point(x: counter.next(), y: 0) }
    let existentialProvider = Provider<any Greeter> { _ in
      counter.next()
      return EnglishGreeter()
    }
    let functionProvider = Provider<@Sendable () -> Int> { _ in
      let value = counter.next()
      return { value }
    }
    let pod = Pod()
    for _ in 0..<3 {
      #expect(pod.resolve(anyProvider) as? Int == 1)
      pod.resolve(voidProvider)
      #expect(pod.resolve(tupleProvider) == (3, "t"))
      #expect(pod.resolve(structProvider) == Point(x: 4, y: 0))
      #expect(pod.resolve(existentialProvider).greet() == "hello")
      #expect(pod.resolve(functionProvider)() == 6)
    }
    #expect(counter.value == 6)
  }

  @Test("an any Sendable provider holding nil is cached")
  func anyHoldingNil() {
    let counter = Counter()
    let provider = Provider<any Sendable> { _ in
      counter.next()
      return Int?.none as any Sendable
    }
    let pod = Pod()
    _ = pod.resolve(provider)
    _ = pod.resolve(provider)
    #expect(counter.value == 1)
  }

  @Test("each pod has its own instances")
  func podsAreSeparate() {
    let provider = instanceProvider("perPod")
    let first = Pod()
    let second = Pod()
    #expect(first.resolve(provider) !== second.resolve(provider))
    #expect(first.resolve(provider) === first.resolve(provider))
  }

  @Test("a class instance cached without a hook is the same object on every path")
  func objectEntryOnEveryPath() async throws {
    let live = LiveCount()
    do {
      let recorder = EventRecorder()
      let observed = Pod(observer: recorder)
      let plain = Pod()
      let child = Pod(parent: plain)
      let sync = Provider(name: "sync") { _ in Tracked(live, serial: 0) }
      let asyncProvider = AsyncProvider(name: "async") { _ in Tracked(live, serial: 1) }
      let user = Provider(name: "user") { context in
        Tracked(
          live, serial: 2, dependencies: [context.resolve(sync), context.resolve(sync)])
      }
      for pod in [observed, plain, child] {
        let first = pod.resolve(sync)
        #expect(pod.resolve(sync) === first)
        let made = pod.resolve(user)
        #expect(made.dependencies.allSatisfy { $0 === first })
        let asyncFirst = try await pod.resolve(asyncProvider)
        #expect(try await pod.resolve(asyncProvider) === asyncFirst)
      }
      #expect(child.resolve(sync) === plain.resolve(sync))
      #expect(observed.invariantViolations == [])
      #expect(plain.invariantViolations == [])
    }
    #expect(live.value == 0)
  }
}
