import Dispatch
import Foundation
import Testing

@testable import ProviderPod

/// A change makes stale at once the builds that will take a stale build's value, and only
/// those: a build that waited for a stale one but builds afresh after it is cached, a long
/// chain of builds waiting for one another goes stale without deep recursion, and a build
/// that will be cached in the child pod it goes through is stale once that pod clears it.
@Suite(
  "A stale build reaches the builds that take its value, and only those",
  .timeLimit(.minutes(10)))
struct StaleBuildReachTests {
  @Test("a build that waited for a stale build through another pod, then built afresh, is cached")
  func waiterThroughAnotherPodIsCached() async throws {
    let feedBuilds = Counter()
    let entered = AsyncStream.makeStream(of: Void.self)
    let release = AsyncGate()
    let feed = AsyncProvider(scope: LeafScope(), name: "feed") { _ in
      let serial = feedBuilds.next()
      if serial == 1 {
        entered.continuation.yield()
        await release.wait()
      }
      return Instance("feed", serial: serial)
    }
    let profileBuilds = Counter()
    let profile = AsyncProvider(name: "profile") { pod in
      Instance(
        "profile", serial: profileBuilds.next(), dependencies: [try await pod.resolve(feed)])
    }
    let watchdog = Task {
      try? await Task.sleep(for: .seconds(hangWatchdogSeconds))
      await release.open()
    }
    defer { watchdog.cancel() }
    let root = Pod()
    let child = Pod(parent: root)
    // The feed's build is started through the root; the profile's, through the child, waits
    // for it and then looks again, since a build started through another pod may not be
    // valid in this one.
    let feedCaller = Task { try await root.resolve(feed) }
    _ = await entered.stream.next("the feed's first build")
    let first = Task { try await child.resolve(profile) }
    let joined = await eventually { root.engine.state.withLock { !$0.waits.isEmpty } }
    #expect(joined, "the profile's build never waited for the feed's")
    root.clearCachedInstances(forScope: LeafScope())
    await release.open()
    let built = try await first.value
    _ = try await feedCaller.value
    #expect(built.dependencies.map(\.serial) == [2], "built from the feed the clear discarded")
    #expect(try await child.resolve(profile) === built, "built afresh after the clear, not cached")
    #expect(profileBuilds.value == 1)
  }

  @Test(
    "a clear makes a chain of 10,000 async builds waiting for one another stale, on a small stack")
  func deepChainOfAsyncWaiters() async throws {
    let depth = 10_000
    let entered = AsyncStream.makeStream(of: Void.self)
    let release = AsyncGate()
    let leafBuilds = Counter()
    let leaf = AsyncProvider(scope: LeafScope(), name: "leaf") { _ in
      let serial = leafBuilds.next()
      if serial == 1 {
        entered.continuation.yield()
        await release.wait()
      }
      return serial
    }
    var top = leaf
    for level in 0..<depth {
      let below = top
      top = AsyncProvider(name: "level \(level)") { pod in try await pod.resolve(below) }
    }
    let watchdog = Task {
      try? await Task.sleep(for: .seconds(hangWatchdogSeconds))
      await release.open()
    }
    defer { watchdog.cancel() }
    let pod = Pod()
    let outer = top
    let first = Task { try await pod.resolve(outer) }
    _ = await entered.stream.next("the leaf's first build")
    let chained = await eventually { pod.engine.state.withLock { $0.waits.count == depth } }
    #expect(chained, "the chain never formed")
    // A thread of a dispatch queue has 512 KiB of stack on Apple platforms.
    await withCheckedContinuation { continuation in
      startThread(stackSize: 512 << 10) {
        pod.clearCachedInstances(forScope: LeafScope())
        continuation.resume()
      }
    }
    let afterChange = try await pod.resolve(outer)
    #expect(afterChange == 2, "joined the chain the clear made stale")
    await release.open()
    #expect(try await first.value == 1)
    #expect(try await pod.resolve(outer) == 2)
  }

  @Test("a build through a child pod, bound to be cached in it, is stale once the child clears it")
  func clearOfTheChildItGoesThrough() async throws {
    let feed = HeldFirstBuild()
    let config = Provider(name: "config") { _ in "root" }
    // Placed in the root, which owns its scope, but built from the child's own config: its
    // instance is the child's, and it reads that before it waits.
    let feedProvider = Provider(scope: LeafScope(), name: "feed") { pod in
      _ = pod.resolve(config)
      return feed.feed()
    }
    let profile = asyncProfile(resolvingOnThread: feedProvider)
    let child = Pod(parent: Pod(), overrides: [config.override { _ in "child" }])
    let first = Task { try await child.resolve(profile) }
    _ = await feed.entered.stream.next("the feed's first build")
    child.clearCachedInstances(forScope: LeafScope())
    let afterChange = try await child.resolve(profile)
    #expect(
      afterChange.dependencies.map(\.serial) == [2],
      "joined the build of the feed the child's clear made stale")
    _ = try await first.value
    #expect(try await child.resolve(profile) === afterChange)
  }

  @Test("a build found stale as it ends makes the async build around its caller stale at once")
  func staleFoundAtTheEnd() async throws {
    let feed = HeldFirstBuild()
    let config = Provider(name: "config") { _ in "root" }
    // Reads the child's config only after the clear: the build is found stale as it ends.
    let feedProvider = Provider(scope: LeafScope(), name: "feed") { pod in
      let serial = feed.next(releasedByLater: false)
      _ = pod.resolve(config)
      return Instance("feed", serial: serial)
    }
    let heldMiddle = HeldFirstBuild()
    let middle = Provider(name: "middle") { pod in
      let feed = pod.resolve(feedProvider)
      return Instance(
        "middle", serial: heldMiddle.next(releasedByLater: false), dependencies: [feed])
    }
    let profile = asyncProfile(resolvingOnThread: middle)
    let child = Pod(parent: Pod(), overrides: [config.override { _ in "child" }])
    let first = Task { try await child.resolve(profile) }
    _ = await feed.entered.stream.next("the feed's first build")
    child.clearCachedInstances(forScope: LeafScope())
    feed.release.signal()
    _ = await heldMiddle.entered.stream.next("the middle's first build holding its feed")
    // The stale feed has ended; the middle's build that took it still runs.
    let afterChange = try await child.resolve(profile)
    heldMiddle.release.signal()
    #expect(
      afterChange.dependencies.flatMap(\.dependencies).map(\.serial) == [2],
      "joined the build that took the feed the child's clear made stale")
    _ = try await first.value
  }

  @Test("an override in a child makes stale at once a build through it that read what it shadows")
  func overrideInTheChildItGoesThrough() async throws {
    let feed = HeldFirstBuild()
    let config = Provider(name: "config") { _ in "root" }
    // Placed in the root, and built there from the root's config, until the child overrides
    // it: from then on a resolve through the child must not be handed this build's value.
    let feedProvider = Provider(name: "feed") { pod in
      let value = pod.resolve(config)
      return Instance("feed from \(value)", serial: feed.next())
    }
    let profile = asyncProfile(resolvingOnThread: feedProvider)
    let child = Pod(parent: Pod())
    let first = Task { try await child.resolve(profile) }
    _ = await feed.entered.stream.next("the feed's first build")
    child.overrideProvider(config) { _ in "child" }
    let afterChange = try await child.resolve(profile)
    #expect(
      afterChange.dependencies.map(\.label) == ["feed from child"],
      "joined the build of the feed from the config the child overrides now")
    _ = try await first.value
    #expect(try await child.resolve(profile) === afterChange)
  }

  @Test("an override in a child makes stale at once a build through it of what it overrides")
  func overrideOfTheBuildThroughTheChild() async throws {
    let feed = HeldFirstBuild()
    // Placed in the root, which the child shares it with until it overrides it.
    let feedProvider = Provider(name: "feed") { _ in
      Instance("feed", serial: feed.next(releasedByLater: false))
    }
    let profile = asyncProfile(resolvingOnThread: feedProvider)
    let child = Pod(parent: Pod())
    let first = Task { try await child.resolve(profile) }
    _ = await feed.entered.stream.next("the feed's first build")
    child.overrideProvider(feedProvider) { _ in
      feed.release.signal()
      return Instance("child's feed", serial: 0)
    }
    let afterChange = try await child.resolve(profile)
    #expect(
      afterChange.dependencies.map(\.label) == ["child's feed"],
      "joined the build of the feed the child overrides now")
    _ = try await first.value
    #expect(try await child.resolve(profile) === afterChange)
  }
}
