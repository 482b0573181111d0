import Foundation
import Testing

@testable import ProviderPod

/// Member `n` built from member `n - 1`: resolved in order, each build nests one deep while
/// the cached chain grows.
let chainedMember: ProviderFamily<Int, Int> = ProviderFamily(name: "chainedMember") {
  (context: BuildContext, n: Int) -> Int in
  n == 0 ? 0 : context.resolve(chainedMember(n - 1)) + 1
}

let chainEnd = Provider(scope: ChainScope(), name: "chainEnd") { _ in 1 }

struct ChainScope: ProviderScope {}

/// What a chain's test lets go of on a thread of its own.
final class ChainHolder: @unchecked Sendable {
  var pod: Pod?
  var instances: ProviderInstances<Int, Never>?
}

let chainHolder = ChainHolder()

/// A thread of a dispatch queue has 512 KiB of stack on Apple platforms.
let smallStack = 512 << 10

@Suite("Deep chains let go of on a small stack")
struct DeepChainReleaseTests {
  @Test("a chain of 20,000 pods let go of at once")
  func chainOfPods() async {
    await #expect(processExitsWith: .success) {
      alarm(120)  // a hang watchdog: a thread that never ends fails the exit rather than hanging
      startThread(stackSize: smallStack) {
        var deepest = Pod()
        for _ in 0..<20_000 { deepest = Pod(parent: deepest) }
        _ = deepest.resolve(chainEnd)
      }.wait()
      exit(0)
    }
  }

  @Test("a pod caching 20,000 instances, each built from the one before, goes away")
  func chainOfInstancesInOnePod() async {
    await #expect(processExitsWith: .success) {
      alarm(120)  // a hang watchdog: a thread that never ends fails the exit rather than hanging
      chainHolder.pod = Pod()
      for n in 0..<20_000 { _ = chainHolder.pod!.resolve(chainedMember(n)) }
      guard chainHolder.pod!.resolve(chainedMember(19_999)) == 19_999 else { exit(2) }
      startThread(stackSize: smallStack) { chainHolder.pod = nil }.wait()
      exit(0)
    }
  }

  @Test("the records of 20,000 pods, kept by the deepest pod's instance sequence, go after it")
  func chainOfRecordsPastItsPods() async {
    await #expect(processExitsWith: .success) {
      alarm(120)  // a hang watchdog: a thread that never ends fails the exit rather than hanging
      let app = Pod()
      chainHolder.pod = Pod(parent: app, scopes: [ChainScope()])
      for _ in 1..<20_000 { chainHolder.pod = Pod(parent: chainHolder.pod!) }
      guard chainHolder.pod!.resolve(chainEnd) == 1 else { exit(2) }
      chainHolder.instances = chainHolder.pod!.instances(of: chainEnd)
      // The pods go first, each releasing its parent in the compiler's loop; the records stay.
      startThread(stackSize: smallStack) { chainHolder.pod = nil }.wait()
      startThread(stackSize: smallStack) { chainHolder.instances = nil }.wait()
      withExtendedLifetime(app) {}
      exit(0)
    }
  }
}
