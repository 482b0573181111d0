import Foundation
import ProviderPod
import Testing

@Suite("ZZProbe")
struct ZZProbeTests {
  @Test("probe: async build running at shutdown")
  func probeAsyncBuild() async throws {
    let entered = OneShot()
    let proceed = OneShot()
    let disposed = Shared(0)
    let pool = AsyncProvider(
      name: "pool",
      onDiscard: { (_: Resource) in disposed.withLock { $0 += 1 } }
    ) { _ in
      entered.set()
      await proceed.wait()
      return Resource("pool")
    }
    let pod = Pod()
    let user = Task { try await pod.resolve(pool) }
    await entered.wait()
    try await pod.shutdown()
    proceed.set()
    let got = try? await user.value
    print("PROBE got \(String(describing: got)) disposed \(disposed.withLock { $0 })")
    for _ in 0..<1000 { await Task.yield() }
    print("PROBE later disposed \(disposed.withLock { $0 })")
  }
}
