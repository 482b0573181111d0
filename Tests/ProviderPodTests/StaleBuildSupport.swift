import Dispatch
import Foundation
import ProviderPod
import Testing

// What the stale-build tests share: a builder whose first build holds its thread until it is
// let go, and an async build that resolves through a thread of its own, so that the held
// build holds no thread of the task pool.

/// Numbers a builder's builds and holds the first one, after saying it began, until it is let
/// go: by a later build, or by the test through `release`. A test whose resolve joins a build
/// that waits for the held one then waits for the watchdog and fails its check.
final class HeldFirstBuild: Sendable {
  let builds = Counter()
  let entered = AsyncStream.makeStream(of: Void.self)
  let release = DispatchSemaphore(value: 0)

  /// This build's number. The first build waits here; with `releasedByLater`, any later
  /// build lets it go.
  func next(releasedByLater: Bool = true) -> Int {
    let serial = builds.next()
    if serial == 1 {
      entered.continuation.yield()
      waitWithWatchdog(release)
    } else if releasedByLater {
      release.signal()
    }
    return serial
  }

  /// A feed instance numbered by `next()`.
  func feed() -> Instance { Instance("feed", serial: next()) }
}

/// An async provider of a profile built from `provider`, resolved through the build's context
/// on a thread of its own.
func asyncProfile(resolvingOnThread provider: Provider<Instance>) -> AsyncProvider<Instance> {
  AsyncProvider(name: "profile") { context in
    let dependency = await withCheckedContinuation { continuation in
      startThread { continuation.resume(returning: context.resolve(provider)) }
    }
    return Instance("profile", serial: 0, dependencies: [dependency])
  }
}
