import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// A child pod's builds may need what its parent caches, and the other way round; a loop
// through both stops the program with the chain, as one inside a single pod does. Exit tests
// cannot capture locals, so the providers of these loops are globals, and apps keep their
// pods in globals too (`globalPod`, and its child `globalChildPod`).

/// A window's own scope for the cycle through a child's own instance and a shared one.
private struct CycleWindowScope: ProviderScope {}
private let crossPodWindow: Provider<Int> = Provider(scope: CycleWindowScope(), name: "window") {
  pod in pod.resolve(crossPodShared)
}
private let crossPodShared: Provider<Int> = Provider(name: "shared") { pod in
  pod.resolve(crossPodWindow)
}

/// Root always-new A needs B through the child pod (a global), B needs A through the root.
let rootNeedsChild: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "rootNeedsChild"
) { _ in globalChildPod.resolve(childNeedsRoot) }
let childNeedsRoot: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "childNeedsRoot"
) { _ in globalPod.resolve(rootNeedsChild) }

/// A provider of the parent whose builder resolves itself through the global child.
private let parentLoopThroughChild: Provider<Int> = Provider(name: "loopback") { _ in
  globalChildPod.resolve(parentLoopThroughChild)
}
/// The same, resolved through the global child in the first place.
private let childLoopThroughItself: Provider<Int> = Provider(name: "windowLoop") { _ in
  globalChildPod.resolve(childLoopThroughItself)
}

/// The scope of a window that closes while a view model keeps its context.
private struct DeadWindowScope: ProviderScope {}
private let deadWindowKeeper = Provider<ContextKeeper>(scope: DeadWindowScope(), name: "keeper") {
  pod in ContextKeeper(pod)
}
private let deadWindowLoop: Provider<Int> = Provider(name: "deadLoop") { pod in
  pod.resolve(deadWindowLoop)
}

@Suite("Child pods: cycles")
struct ChildPodCycleTests {
  @Test("a cycle through a child's own instance and a shared one stops with the chain")
  func cycleAcrossPods() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)  // a hang becomes a failed exit without the message checked below
      let parent = Pod()
      let child = Pod(parent: parent, scopes: [CycleWindowScope()])
      _ = child.resolve(crossPodShared)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("dependency cycle: shared ("))
    #expect(message.contains(") -> window ("))
    #expect(message.contains(") -> shared\n"))
  }

  // "A provider that needs itself ... stops the program with the whole chain." A build in
  // the parent whose builder resolves through a child kept in a global must be seen as nested
  // in itself, though the child is not the pod it builds for: otherwise the resolve waits for
  // the build it is part of, and the thread blocks on itself.
  @Test("a parent's build that needs itself through a global child stops, not hangs")
  func cycleThroughGlobalChildFromParent() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)  // the cycle is reported at once; a hang fails the test
      _ = globalPod.resolve(parentLoopThroughChild)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(result?.exitStatus != .signal(SIGALRM))
    #expect(message.contains("dependency cycle: loopback ("))
  }

  @Test("a child's build that needs itself through the global child stops with the chain")
  func cycleThroughGlobalChild() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = globalChildPod.resolve(childLoopThroughItself)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("dependency cycle: windowLoop ("))
    #expect(message.contains("-> windowLoop\n"))
  }

  @Test("a root's always-new provider that needs itself through a global child pod stops")
  func rootAlwaysNewCycleThroughGlobalChild() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = globalPod.resolve(rootNeedsChild)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: "))
    #expect(message.contains("rootNeedsChild ("))
    #expect(message.contains("childNeedsRoot ("))
  }

  // A pod that went away caches nothing, so no build of it is ever running to be found
  // again: only the check for a chain that repeats a provider can stop the loop.
  @Test("a provider that needs itself, resolved through a closed child's context, stops")
  func cycleThroughClosedChild() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      let app = Pod()
      var window: Pod? = Pod(parent: app, scopes: [DeadWindowScope()])
      let kept = window!.resolve(deadWindowKeeper)
      window = nil
      _ = kept.context.resolve(deadWindowLoop)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("dependency cycle: deadLoop ("))
  }
}
