import ProviderPod
import Testing

// A value that is not Sendable can be provided only built anew for each resolve: each caller
// gets one of its own, so the compiler has nothing to share across threads. What may not be
// written is in Tests/CompileFailures; this is what still may, and what it does.

/// Mutable and not Sendable: a shared one would lose increments made on several threads.
private final class Tally {
  var count = 0
  let origin: String
  init(origin: String) { self.origin = origin }
}

private let tallyProvider = Provider(scope: AlwaysCreateNewScope()) { _ in
  Tally(origin: "provider")
}
private let tallyFamily = ProviderFamily(scope: AlwaysCreateNewScope()) { (_, origin: String) in
  Tally(origin: origin)
}
private let throwingTallyProvider = ThrowingProvider(scope: AlwaysCreateNewScope()) { _ in
  Tally(origin: "throwing")
}

/// Resolves `resolve` on `threads` threads at once, each incrementing what it got; returns
/// whether every thread counted alone, on an instance no other thread had.
private func eachThreadCountsAlone(
  threads: Int = 8, _ resolve: @escaping @Sendable () throws -> Tally
) -> (allOwn: Bool, distinct: Int) {
  let increments = 10_000
  let seen = Shared<(counts: [Int], identities: Set<ObjectIdentifier>)>(([], []))
  let barrier = Barrier(threads)
  onThreads(threads) { _ in
    barrier.arrive()
    let tally = try? resolve()
    if let tally {
      for _ in 0..<increments { tally.count += 1 }
      seen.withLock { seen in
        seen.counts.append(tally.count)
        seen.identities.insert(ObjectIdentifier(tally))
      }
    }
    // Every thread holds its instance until all have counted theirs, so that no two
    // instances can have had the same address.
    withExtendedLifetime(tally) { barrier.arrive() }
  }
  return seen.withLock { seen in
    (
      seen.counts.count == threads && seen.counts.allSatisfy { $0 == increments },
      seen.identities.count
    )
  }
}

@Suite("Values that are not Sendable")
struct NonSendableValueTests {
  @Test("an always-new provider gives each thread an instance of its own")
  func alwaysNewOnThreads() {
    let pod = Pod()
    let outcome = eachThreadCountsAlone { pod.resolve(tallyProvider) }
    #expect(outcome.allOwn)
    #expect(outcome.distinct == 8)
  }

  @Test("an always-new family member and throwing provider do too")
  func familyAndThrowingOnThreads() {
    let pod = Pod()
    let members = eachThreadCountsAlone { pod.resolve(tallyFamily("member")) }
    #expect(members.allOwn)
    #expect(members.distinct == 8)
    let throwing = eachThreadCountsAlone { try pod.resolve(throwingTallyProvider) }
    #expect(throwing.allOwn)
    #expect(throwing.distinct == 8)
  }

  @Test("a builder resolves an always-new value of its own and keeps it to itself")
  func resolvedInsideABuilder() {
    let summaryProvider = Provider(scope: AlwaysCreateNewScope()) { pod in
      let tally = pod.resolve(tallyProvider)
      tally.count += 1
      return "\(tally.origin) \(tally.count)"
    }
    let pod = Pod()
    #expect(pod.resolve(summaryProvider) == "provider 1")
    #expect(pod.resolve(summaryProvider) == "provider 1")
  }

  @Test("overrides for a new pod build a new instance for each resolve")
  func overridesForANewPod() throws {
    let pod = Pod(overrides: [
      tallyProvider.override { _ in Tally(origin: "override") },
      tallyFamily.override { _, origin in Tally(origin: "family override of \(origin)") },
      throwingTallyProvider.override { _ in Tally(origin: "throwing override") },
    ])
    let first = pod.resolve(tallyProvider)
    #expect(first.origin == "override")
    #expect(pod.resolve(tallyProvider) !== first)
    let member = pod.resolve(tallyFamily("a"))
    #expect(member.origin == "family override of a")
    #expect(pod.resolve(tallyFamily("a")) !== member)
    let thrown = try pod.resolve(throwingTallyProvider)
    #expect(thrown.origin == "throwing override")
    #expect(try pod.resolve(throwingTallyProvider) !== thrown)
  }

  @Test("a live pod's overrides stay always-new, on threads too")
  func overridesOfALivePod() throws {
    let pod = Pod()
    pod.overrideProvider(tallyProvider) { _ in Tally(origin: "pod") }
    pod.overrideProvider(tallyFamily) { _, origin in Tally(origin: "pod \(origin)") }
    pod.overrideProvider(throwingTallyProvider) { _ in Tally(origin: "pod throwing") }
    #expect(pod.resolve(tallyProvider).origin == "pod")
    #expect(pod.resolve(tallyFamily("b")).origin == "pod b")
    #expect(try pod.resolve(throwingTallyProvider).origin == "pod throwing")
    let outcome = eachThreadCountsAlone { pod.resolve(tallyProvider) }
    #expect(outcome.allOwn)
    #expect(outcome.distinct == 8)
    pod.removeOverrideProvider(tallyProvider)
    #expect(pod.resolve(tallyProvider).origin == "provider")
  }

  @Test("a build's overrides stay always-new")
  func overridesFromABuild() throws {
    let installer = Provider(scope: AlwaysCreateNewScope()) { pod in
      pod.overrideProvider(tallyProvider) { _ in Tally(origin: "context") }
      pod.overrideProvider(tallyFamily) { _, origin in Tally(origin: "context \(origin)") }
      pod.overrideProvider(throwingTallyProvider) { _ in Tally(origin: "context throwing") }
      return true
    }
    let pod = Pod()
    #expect(pod.resolve(installer))
    let first = pod.resolve(tallyProvider)
    #expect(first.origin == "context")
    #expect(pod.resolve(tallyProvider) !== first)
    #expect(pod.resolve(tallyFamily("c")).origin == "context c")
    #expect(try pod.resolve(throwingTallyProvider).origin == "context throwing")
  }

  @Test("a child pod overrides an always-new provider for its own resolves")
  func childPodOverride() {
    let parent = Pod()
    let child = Pod(
      parent: parent, overrides: [tallyProvider.override { _ in Tally(origin: "child") }])
    #expect(child.resolve(tallyProvider).origin == "child")
    #expect(parent.resolve(tallyProvider).origin == "provider")
  }
}
