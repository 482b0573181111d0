import Foundation
import Testing

@testable import ProviderPod

/// Whether the cheap check a resolve makes comes back to "no isolation runs" however the
/// isolations ended. Exit tests: the child process runs no other test, so nothing else
/// isolates a pod while the count is read.
@Suite struct IsolationCountTests {
  @Test func theCountComesBackToNoneAfterIsolationsThatThrewWereCancelledOrNested() async {
    await #expect(processExitsWith: .success) {
      struct Failure: Error {}
      let pod = Pod()
      let greeting = Provider { _ in "live" }

      _ = try? pod.withIsolation { _ in throw Failure() }
      if Pod.isolationsRunning { exit(1) }

      _ = try? await pod.withIsolation { (_: Pod) async throws in throw Failure() }
      if Pod.isolationsRunning { exit(2) }

      let cancelled = Task {
        try await pod.withIsolation { (_: Pod) async throws in
          try await Task.sleep(for: .seconds(600))
        }
      }
      cancelled.cancel()
      _ = await cancelled.result
      if Pod.isolationsRunning { exit(3) }

      pod.withIsolation { _ in pod.withIsolation { _ in _ = pod.resolve(greeting) } }
      if Pod.isolationsRunning { exit(4) }

      await pod.withIsolation { (_: Pod) async in
        async let child = pod.resolve(greeting)
        _ = await child
        await withTaskGroup(of: Void.self) { group in
          group.addTask { _ = pod.resolve(greeting) }
        }
      }
      if Pod.isolationsRunning { exit(5) }
    }
  }

  @Test func aTaskThatOutlivesItsIsolationCountsUntilItEnds() async {
    await #expect(processExitsWith: .success) {
      let pod = Pod()
      let (go, letGo) = AsyncStream<Void>.makeStream()
      do {
        let late = pod.withIsolation { _ in
          Task { for await _ in go { break } }
        }
        if !Pod.isolationsRunning { exit(1) }
        letGo.yield()
        await late.value
      }
      if Pod.isolationsRunning { exit(2) }
    }
  }
}
