import Dispatch
import Foundation
import Testing

@testable import ProviderPod

/// A weak-scope instance whose deinit resolves from the pod, as a cache that flushes to a
/// store on the way out would.
final class FlushingCache: Sendable {
  let pod: Pod
  init(pod: Pod) { self.pod = pod }
  deinit { _ = pod.resolve(flushTargetProvider) }
}
let flushTargetProvider = Provider(name: "flushTarget") { _ in 0 }
let flushingPod = Pod()
/// Many of them, so that a graph holds many weak instances for a moment: one of those moments
/// must not be the one that ends an instance.
let flushingCacheProviders = (0..<64).map { index in
  Provider(scope: WeakScope(), name: "flushingCache\(index)") { _ in FlushingCache(pod: flushingPod)
  }
}

/// A family argument whose hashing resolves another member of its family: user code that
/// must not run under the family's member-table lock.
struct ReentrantArgument: Hashable, Sendable, CustomStringConvertible {
  let id: Int
  func hash(into hasher: inout Hasher) {
    if id > 0 { _ = reentrantFamily(ReentrantArgument(id: 0)) }
    hasher.combine(id)
  }
  var description: String {
    if id > 0 { _ = reentrantFamily(ReentrantArgument(id: 0)) }
    return "arg\(id)"
  }
}
let reentrantFamily = ProviderFamily(name: "reentrant") { (_, argument: ReentrantArgument) in
  argument.id
}

@Suite("User code never runs under a pod's locks")
struct UserCodeOutsideLocksTests {
  @Test("taking graphs while weak instances whose deinit resolves come and go does not deadlock")
  func graphsWithResolvingDeinits() async {
    await #expect(processExitsWith: .success) {
      // A deadlock would hang: this turns it into a failed exit. Generous, for sanitized builds
      // on a loaded machine.
      alarm(300)
      DispatchQueue.concurrentPerform(iterations: 4) { worker in
        for _ in 0..<1_000 {
          if worker < 2 {
            for provider in flushingCacheProviders { _ = flushingPod.resolve(provider) }
          } else {
            _ = flushingPod.dependencyGraph()
          }
        }
      }
      exit(0)
    }
  }

  @Test("a family argument whose hash or description uses the family does not deadlock")
  func reentrantFamilyArguments() async {
    await #expect(processExitsWith: .success) {
      alarm(30)
      let pod = Pod()
      guard pod.resolve(reentrantFamily(ReentrantArgument(id: 3))) == 3 else { exit(1) }
      guard pod.resolve(reentrantFamily(ReentrantArgument(id: 3))) == 3 else { exit(1) }
      exit(0)
    }
  }

  @Test("an override of a family that has gone away never serves another family")
  func familyOverrideKeepsItsFamily() {
    let pod = Pod()
    do {
      let gone = ProviderFamily(name: "gone") { (_, id: Int) in "gone \(id)" }
      pod.overrideProvider(gone) { _, id in "overridden \(id)" }
      #expect(pod.resolve(gone(1)) == "overridden 1")
      // Nothing cached keeps the family alive now: only the override's record can.
      pod.clearCachedInstances(of: gone)
    }
    // New families may be allocated where the old one was; none may find its override.
    for round in 0..<2_000 {
      let fresh = ProviderFamily(name: "fresh") { (_, id: Int) in id * 2 }
      #expect(pod.resolve(fresh(round)) == round * 2)
    }
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("members held by nobody are swept, and the table stays usable")
  func familyMembersAreSwept() {
    let family = ProviderFamily(scope: StepScope(), name: "swept") { (_, id: Int) in id }
    let pod = Pod()
    for id in 0..<5_000 { #expect(pod.resolve(family(id)) == id) }
    #expect(family.liveMemberCount == 5_000)
    pod.clearCachedInstances(forScope: StepScope())
    _ = family(-1)  // an insertion triggers the sweep once the table has doubled
    #expect(family.liveMemberCount < 5_000)
    #expect(pod.slotCount == 0)
    #expect(pod.resolve(family(7)) == 7)
  }
}
