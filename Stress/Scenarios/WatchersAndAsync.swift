import ProviderPod

/// Watchers and async builds: tasks follow a provider with `instances(of:)`, others resolve
/// an async provider (built from it, failing and retrying) and warm it up, while a thread
/// clears, overrides and removes overrides. No element a watcher gets and no async result
/// may be older than a change that completed before it asked.
enum WatchersAndAsync {
  static let report = Report(scenario: "watchers-async")
  static let feeds = Ledger("feed", exact: false, report: report)
  static let overriddenFeeds = Ledger("overridden-feed", exact: false, report: report)
  static let profiles = Ledger("profile", exact: false, report: report)

  struct FeedScope: ProviderScope {}
  struct Flaky: Error {}

  final class Feed: Tracked, @unchecked Sendable {}

  final class Profile: Tracked, @unchecked Sendable {
    let feed: Feed
    init(feed: Feed) {
      self.feed = feed
      super.init(profiles)
    }
  }

  static let flakiness = Locked(FastRandom(seed: 11))

  static let feedProvider = Provider(
    scope: FeedScope(), name: "feed", onDiscard: { $0.discarded() }
  ) { _ in Feed(feeds) }

  /// Fails a quarter of its attempts; the callers share the retries.
  static let profileProvider = AsyncProvider<Profile>(
    scope: FeedScope(), name: "profile",
    retry: .exponentialBackoff(
      initialDelay: .microseconds(50), maxDelay: .microseconds(400), maxAttempts: 6,
      retryIf: { $0 is Flaky }),
    onDiscard: { $0.discarded() }
  ) { pod in
    let feed = pod.resolve(feedProvider)
    await Task.yield()
    if flakiness.withLock({ $0.next(4) }) == 0 { throw Flaky() }
    return Profile(feed: feed)
  }

  struct Floors: Sendable {
    let feed = Floor()
    let profile = Floor()
  }

  static let scenario = Scenario(
    name: "watchers-async",
    summary: "instances(of:) watchers and async builds with retries against clears and overrides",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration)
    do {
      let pod = Pod()
      let floors = Floors()
      let tasks =
        (0..<2).map { _ in Task { await watch(pod, floors) } }
        + (0..<2).map { index in Task { await resolve(pod, floors, warmingUp: index == 0) } }
      change(pod, floors, until: deadline)
      for task in tasks { task.cancel() }
      for task in tasks { report.add(operations: await task.value) }
    }
    await settle([feeds, overriddenFeeds, profiles])
  }

  /// Follows the feed until cancelled; returns how many elements it got.
  private static func watch(_ pod: Pod, _ floors: Floors) async -> Int {
    var elements = 0
    var iterator = pod.instances(of: feedProvider).makeAsyncIterator()
    var last: Feed?
    while true {
      let floor = floors.feed.current
      guard let feed = await iterator.next() else { return elements }
      elements += 1
      // The sequence may repeat the instance it handed out last when a discard raced it.
      if feed !== last {
        report.check(
          feed.serial >= floor, "a watcher got feed#\(feed.serial) after a change at #\(floor)")
      }
      last = feed
    }
  }

  /// Resolves the async provider until cancelled; returns how many resolves it made.
  private static func resolve(_ pod: Pod, _ floors: Floors, warmingUp: Bool) async -> Int {
    var operations = 0
    while !Task.isCancelled {
      let floor = (floors.profile.current, floors.feed.current)
      operations += 1
      if warmingUp, operations % 8 == 0 {
        try? await pod.warmUp(profileProvider, feedProvider)
        continue
      }
      guard let profile = try? await pod.resolve(profileProvider) else { continue }
      report.check(
        profile.serial >= floor.0,
        "profile#\(profile.serial) handed out after a change at #\(floor.0)")
      report.check(
        profile.feed.serial >= floor.1,
        "profile#\(profile.serial) built from feed#\(profile.feed.serial), "
          + "handed out after a change to the feed at #\(floor.1)")
    }
    return operations
  }

  /// The single writer, on a thread of its own so that the tasks keep both cores' pool.
  private static func change(_ pod: Pod, _ floors: Floors, until deadline: Deadline) {
    onThreads(1) { _ in
      var random = FastRandom(seed: 5)
      var isOverridden = false
      var operations = 0
      while !deadline.hasPassed {
        let serial = nextSerial()
        switch random.next(4) {
        case 0:
          pod.clearCachedInstances(forScope: FeedScope())
        case 1:
          pod.overrideProvider(feedProvider) { _ in Feed(overriddenFeeds) }
          isOverridden = true
        case 2:
          pod.removeOverrideProvider(feedProvider)
          // Removing an override that is not there discards nothing.
          guard isOverridden else { continue }
          isOverridden = false
        default:
          pod.clearCachedInstance(of: profileProvider)
          floors.profile.raise(to: serial)
          operations += 1
          continue
        }
        floors.feed.raise(to: serial)
        floors.profile.raise(to: serial)
        operations += 1
      }
      report.add(operations: operations)
    }
  }
}
