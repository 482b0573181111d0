import Dispatch
import Foundation
import Testing

@testable import ProviderPod

/// A resolve that begins after a change has returned never joins a build that will be handed
/// something the change discarded. An async build hands its callers its own value; a build
/// nested in it, or one it waits for, that the change made stale used to pass that on only
/// when it ended. Until then a resolve beginning after the change joined the outer build and
/// got a value older than the change. The stress client found it on 16 cores.
///
/// Each test holds the inner build until a build made after the change releases it, so a
/// resolve that joins the stale outer build waits for the watchdog and then fails its check.
@Suite("A build fed by a stale build is not joined", .timeLimit(.minutes(10)))
struct StaleNestedBuildTests {
  enum Change: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case clearOfItsScope = "a clear of its scope"
    case override = "an override"
    case removedOverride = "an override removed"
    var testDescription: String { rawValue }
  }

  @Test(
    "a resolve after the change gets a value built after it",
    arguments: Change.allCases, [false, true])
  func resolveAfterChange(_ change: Change, throughAlwaysNew: Bool) async throws {
    let feed = HeldFirstBuild()
    let feedProvider = Provider(scope: LeafScope(), name: "feed") { _ in feed.feed() }
    // With an always-new build between them, the feed's build is nested in that one, which
    // is nested in the profile's.
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { pod in
      pod.resolve(feedProvider)
    }
    let profile = asyncProfile(resolvingOnThread: throughAlwaysNew ? middle : feedProvider)
    let pod = Pod()
    if change == .removedOverride {
      pod.overrideProvider(feedProvider) { _ in feed.feed() }
    }
    let first = Task { try await pod.resolve(profile) }
    _ = await feed.entered.stream.next("the feed's first build")
    switch change {
    case .clearOfItsScope: pod.clearCachedInstances(forScope: LeafScope())
    case .override: pod.overrideProvider(feedProvider) { _ in feed.feed() }
    case .removedOverride: pod.removeOverrideProvider(feedProvider)
    }
    let afterChange = try await pod.resolve(profile)
    #expect(
      afterChange.dependencies.map(\.serial) == [2],
      "built from the feed the change discarded, or joined the build that was")
    _ = try await first.value
    #expect(try await pod.resolve(profile) === afterChange, "the build after the change is cached")
  }

  @Test("a resolve after the change does not join a build waiting for a stale async build")
  func waitingForStaleAsyncBuild() async throws {
    let builds = Counter()
    let entered = AsyncStream.makeStream(of: Void.self)
    let release = AsyncGate()
    let feedProvider = AsyncProvider(scope: LeafScope(), name: "feed") { _ in
      let serial = builds.next()
      if serial == 1 {
        entered.continuation.yield()
        await release.wait()
      } else {
        await release.open()
      }
      return Instance("feed", serial: serial)
    }
    let profile = AsyncProvider(name: "profile") { pod in
      Instance("profile", serial: 0, dependencies: [try await pod.resolve(feedProvider)])
    }
    // A hang watchdog: a resolve that joined the stale build would otherwise wait forever.
    let watchdog = Task {
      try? await Task.sleep(for: .seconds(hangWatchdogSeconds))
      await release.open()
    }
    defer { watchdog.cancel() }
    let pod = Pod()
    // The feed's build is started by a resolve of its own, and the profile's build joins it.
    let feedCaller = Task { try await pod.resolve(feedProvider) }
    _ = await entered.stream.next("the feed's first build")
    let first = Task { try await pod.resolve(profile) }
    let joined = await eventually { pod.engine.state.withLock { !$0.waits.isEmpty } }
    #expect(joined, "the profile's build never waited for the feed's")
    pod.clearCachedInstances(forScope: LeafScope())
    let afterChange = try await pod.resolve(profile)
    #expect(
      afterChange.dependencies.map(\.serial) == [2],
      "built from the feed the clear discarded, or joined the build that was")
    _ = try await (first.value, feedCaller.value)
  }
}
