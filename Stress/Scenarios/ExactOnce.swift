import Dispatch
import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One build per instance generation: rounds of threads and tasks that all resolve an
/// uncached provider at once (plain, a family's members, async with retries, a warm-up among
/// them) must share one build each and all get its instance. Nothing clears during a round,
/// so every instance is cached, and every one is disposed of once its pod goes.
enum ExactOnce {
  static let report = Report(scenario: "exact-once")
  static let plain = Ledger("round", exact: true, report: report)
  static let members = Ledger("member", exact: true, report: report)
  static let asyncs = Ledger("async-round", exact: true, report: report)

  struct RoundScope: ProviderScope {}
  struct Flaky: Error {}

  final class Instance: Tracked, @unchecked Sendable {}
  final class AsyncInstance: Tracked, @unchecked Sendable {}

  /// Builder runs per provider name since the round began.
  static let builds = Locked([String: Int]())
  /// `.built` events per provider name since the round began, from observed pods.
  static let builtEvents = Locked([String: Int]())
  static let flakiness = Locked(FastRandom(seed: 7))

  struct CountingObserver: PodObserver {
    func pod(_ pod: Pod, didReport event: PodEvent) {
      if case .built(let provider, _) = event {
        builtEvents.withLock { $0[provider, default: 0] += 1 }
      }
    }
  }

  static func built(_ name: String) { builds.withLock { $0[name, default: 0] += 1 } }

  static let roundProvider = Provider(
    scope: RoundScope(), name: "round", onDiscard: { $0.discarded() }
  ) { _ in
    built("round")
    // Gives the other threads time to arrive while the build runs.
    sched_yield()
    return Instance(plain)
  }

  static let memberProvider = ProviderFamily(
    scope: RoundScope(), name: "member", onDiscard: { $0.discarded() }
  ) { (_, index: Int) in
    built("member(\(index))")
    sched_yield()
    return Instance(members)
  }

  /// Fails a third of its attempts, so the callers share retries as well as the build.
  static let asyncProvider = AsyncProvider(
    scope: RoundScope(), name: "async-round",
    retry: .exponentialBackoff(
      initialDelay: .zero, maxAttempts: 12, retryIf: { $0 is Flaky },
      sleep: { _ in
        try Task.checkCancellation()
        await Task.yield()
      }),
    onDiscard: { $0.discarded() }
  ) { _ in
    await Task.yield()
    if flakiness.withLock({ $0.next(3) }) == 0 { throw Flaky() }
    built("async-round")
    return AsyncInstance(asyncs)
  }

  static let scenario = Scenario(
    name: "exact-once",
    summary: "rounds of threads and tasks resolving one uncached provider: one build each",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration)
    var operations = 0
    do {
      let pods = [Pod(), Pod(observer: CountingObserver())]
      var round = 0
      while !deadline.hasPassed {
        let pod = pods[round % 2]
        pod.clearCachedInstances(forScope: RoundScope())
        builds.withLock { $0 = [:] }
        builtEvents.withLock { $0 = [:] }
        operations += await play(round: round, in: pod, observed: round % 2 == 1)
        round += 1
      }
    }
    report.add(operations: operations)
    await settle([plain, members, asyncs])
  }

  /// One round; returns how many operations it made.
  private static func play(round: Int, in pod: Pod, observed: Bool) async -> Int {
    let threads = 4
    let seen = Locked([String: Set<Int>]())
    DispatchQueue.concurrentPerform(iterations: threads) { index in
      let instance = pod.resolve(roundProvider)
      let member = pod.resolve(memberProvider(index % 2))
      seen.withLock {
        $0["round", default: []].insert(instance.serial)
        $0["member(\(index % 2))", default: []].insert(member.serial)
      }
    }
    let asyncCallers = 4
    let failures = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<asyncCallers {
        group.addTask {
          guard let instance = try? await pod.resolve(asyncProvider) else { return 1 }
          seen.withLock { _ = $0["async-round", default: []].insert(instance.serial) }
          return 0
        }
      }
      // A warm-up joins the same builds instead of starting its own.
      group.addTask { (try? await pod.warmUp(asyncProvider, roundProvider)) == nil ? 1 : 0 }
      return await group.reduce(0, +)
    }
    let builds = builds.value
    let events = builtEvents.value
    for (name, serials) in seen.value {
      report.check(
        serials.count == 1,
        "round \(round): \(name) resolved at once gave \(serials.count) different instances")
      report.check(
        builds[name] == 1, "round \(round): \(name) was built \(builds[name] ?? 0) times, not once")
      if observed {
        report.check(
          events[name] == 1,
          "round \(round): \(name) reported built \(events[name] ?? 0) times, not once")
      }
    }
    // Retries exhausted (one chance in 3^12) is allowed: all callers then fail together.
    report.check(
      failures == 0 || seen.value["async-round"] == nil,
      "round \(round): some callers of one async build got its instance and others an error")
    return threads * 2 + asyncCallers + 2
  }
}
