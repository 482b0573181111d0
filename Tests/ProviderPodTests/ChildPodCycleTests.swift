import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// Exit tests cannot capture locals: the providers of the cross-pod cycle are globals.
private struct CycleWindowScope: ProviderScope {}
private let crossPodWindow: Provider<Int> = Provider(scope: CycleWindowScope(), name: "window") {
  pod in pod.resolve(crossPodShared)
}
private let crossPodShared: Provider<Int> = Provider(name: "shared") { pod in
  pod.resolve(crossPodWindow)
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
}
