import Benchmark
import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// ProviderPod's own workloads under package-benchmark: wall time with percentiles, and malloc
// counts, which are exact on any machine. CI checks the malloc counts against the committed
// `Thresholds/` (see ../../README.md); timing stays out of pass/fail.
//
// Names carry no spaces: package-benchmark names the threshold files after them and looks
// them up by the raw name.
//
// Each iteration of a cheap workload runs `batch` operations, so one allocation per
// operation would show as `batch` mallocs in every sample, not just in a few.

private let batch = 1_000

final class Service: @unchecked Sendable {
  let value: Int
  init(value: Int = 1) { self.value = value }
}

final class ChainRoot: @unchecked Sendable {}
final class Link<Previous>: @unchecked Sendable {
  let previous: Previous
  init(_ previous: Previous) { self.previous = previous }
}
typealias L1 = Link<ChainRoot>
typealias L2 = Link<L1>
typealias L3 = Link<L2>
typealias L4 = Link<L3>
typealias L5 = Link<L4>
typealias L6 = Link<L5>
typealias L7 = Link<L6>
typealias L8 = Link<L7>
typealias L9 = Link<L8>

final class Root100: @unchecked Sendable {
  let services: [Service]
  init(_ services: [Service]) { self.services = services }
}

/// A node of the deep chain: it holds the node below it (nil at the bottom).
final class Node: @unchecked Sendable {
  let below: Node?
  init(_ below: Node?) { self.below = below }
}

/// A custom scope such as a screen's: what the scope workloads cache and clear.
struct ScreenScope: ProviderScope {}

/// A request's scope, owned by a child pod per request (workload 11).
struct RequestScope: ProviderScope {}

/// What a request builds from two app singletons.
final class RequestHandler: @unchecked Sendable {
  let first: Service
  let second: Service
  init(_ first: Service, _ second: Service) {
    self.first = first
    self.second = second
  }
}

private let repository = Provider { _ in Service(value: 1) }
private let mailer = Provider { _ in Service(value: 2) }
private let requestHandler = Provider(scope: RequestScope()) { pod in
  RequestHandler(pod.resolve(repository), pod.resolve(mailer))
}

private let service = Provider { _ in Service() }
private let newService = Provider(scope: AlwaysCreateNewScope()) { _ in Service() }

private let newRoot = Provider(scope: AlwaysCreateNewScope()) { _ in ChainRoot() }
private let new1 = Provider(scope: AlwaysCreateNewScope()) { pod in L1(pod.resolve(newRoot)) }
private let new2 = Provider(scope: AlwaysCreateNewScope()) { pod in L2(pod.resolve(new1)) }
private let new3 = Provider(scope: AlwaysCreateNewScope()) { pod in L3(pod.resolve(new2)) }
private let new4 = Provider(scope: AlwaysCreateNewScope()) { pod in L4(pod.resolve(new3)) }
private let new5 = Provider(scope: AlwaysCreateNewScope()) { pod in L5(pod.resolve(new4)) }
private let new6 = Provider(scope: AlwaysCreateNewScope()) { pod in L6(pod.resolve(new5)) }
private let new7 = Provider(scope: AlwaysCreateNewScope()) { pod in L7(pod.resolve(new6)) }
private let new8 = Provider(scope: AlwaysCreateNewScope()) { pod in L8(pod.resolve(new7)) }
private let new9 = Provider(scope: AlwaysCreateNewScope()) { pod in L9(pod.resolve(new8)) }

private let cachedRoot = Provider { _ in ChainRoot() }
private let cached1 = Provider { pod in L1(pod.resolve(cachedRoot)) }
private let cached2 = Provider { pod in L2(pod.resolve(cached1)) }
private let cached3 = Provider { pod in L3(pod.resolve(cached2)) }
private let cached4 = Provider { pod in L4(pod.resolve(cached3)) }
private let cached5 = Provider { pod in L5(pod.resolve(cached4)) }
private let cached6 = Provider { pod in L6(pod.resolve(cached5)) }
private let cached7 = Provider { pod in L7(pod.resolve(cached6)) }
private let cached8 = Provider { pod in L8(pod.resolve(cached7)) }
private let cached9 = Provider { pod in L9(pod.resolve(cached8)) }

private let hundred = (0..<100).map { index in Provider { _ in Service(value: index) } }
private let root100 = Provider { pod in Root100(hundred.map { pod.resolve($0) }) }

private let screenService = Provider(scope: ScreenScope()) { _ in Service() }
private let singletons100 = (0..<100).map { index in Provider { _ in Service(value: index) } }
private let singletons10k = (0..<10_000).map { index in Provider { _ in Service(value: index) } }
private let screen1000 = (0..<1_000).map { index in
  Provider(scope: ScreenScope()) { _ in Service(value: index) }
}

/// The deep chain: provider `i` builds a node from provider `i - 1`.
private let deepChain: [Provider<Node>] = {
  var chain: [Provider<Node>] = []
  chain.reserveCapacity(10_000)
  for _ in 0..<10_000 {
    let below = chain.last
    chain.append(Provider { pod in Node(below.map { pod.resolve($0) }) })
  }
  return chain
}()

/// A pod that has cached every provider given.
private func pod(holding providers: [Provider<Service>]) -> Pod {
  let pod = Pod()
  for provider in providers { blackHole(pod.resolve(provider)) }
  return pod
}

/// CI sets `PROVIDERPOD_BENCHMARK_ALLOCATIONS` to count allocations only, in few iterations:
/// counts are exact, so a few samples are enough, and timing stays out of CI's pass/fail.
private let allocationsOnly = getenv("PROVIDERPOD_BENCHMARK_ALLOCATIONS") != nil
private let quick = allocationsOnly
private let metrics: [BenchmarkMetric] =
  allocationsOnly ? [.mallocCountTotal] : [.wallClock, .mallocCountTotal]

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: metrics,
    timeUnits: .nanoseconds,
    warmupIterations: quick ? 1 : 10,
    maxDuration: quick ? .milliseconds(200) : .seconds(2),
    maxIterations: quick ? 20 : 10_000
  )
  // A batch of operations per iteration: times read per operation.
  let batched = Benchmark.Configuration(
    metrics: metrics,
    timeUnits: .nanoseconds,
    warmupIterations: quick ? 1 : 10,
    scalingFactor: .kilo,
    maxDuration: quick ? .milliseconds(200) : .seconds(2),
    maxIterations: quick ? 20 : 10_000
  )

  // One pod per workload, made once: an iteration measures the operations, not the setup.
  let cachedPod = Pod()
  blackHole(cachedPod.resolve(service))
  blackHole(cachedPod.resolve(cached9))
  let alwaysNewPod = Pod()

  Benchmark("1-cached-singleton", configuration: batched) { _ in
    for _ in 0..<batch { blackHole(cachedPod.resolve(service)) }
  }

  Benchmark("2-always-new-small-class", configuration: batched) { _ in
    for _ in 0..<batch { blackHole(alwaysNewPod.resolve(newService)) }
  }

  Benchmark("3-chain-of-10-always-new", configuration: batched) { _ in
    for _ in 0..<batch { blackHole(alwaysNewPod.resolve(new9)) }
  }

  Benchmark("4-chain-of-10-all-cached", configuration: batched) { _ in
    for _ in 0..<batch { blackHole(cachedPod.resolve(cached9)) }
  }

  // A child pod's resolve of an instance it shares with its parent: the same lookup as the
  // parent's, so no allocation either.
  let appPod = Pod()
  let childPod = Pod(parent: appPod, scopes: [RequestScope()])
  blackHole(childPod.resolve(repository))

  Benchmark("11-child-pod-resolve-of-a-shared-instance", configuration: batched) { _ in
    for _ in 0..<batch { blackHole(childPod.resolve(repository)) }
  }

  Benchmark("11-child-pod-per-request") { _ in
    let requestPod = Pod(parent: appPod, scopes: [RequestScope()])
    blackHole(requestPod.resolve(requestHandler))
  }

  Benchmark("6-new-pod-and-root-with-100-deps") { benchmark in
    blackHole(Pod().resolve(root100))
  }

  Benchmark("7-fill-a-new-pod-with-10000-singletons") { benchmark in
    let pod = Pod()
    for provider in singletons10k { blackHole(pod.resolve(provider)) }
    // Releasing the pod is part of the cost of a pod that was filled.
  }

  let pod100 = pod(holding: singletons100)
  let pod10k = pod(holding: singletons10k)
  for (name, pod) in [("100", pod100), ("10000", pod10k)] {
    Benchmark("8-resolve-scoped-and-clear-scope-among-\(name)-singletons", configuration: batched) {
      _ in
      for _ in 0..<batch {
        blackHole(pod.resolve(screenService))
        pod.clearCachedInstances(forScope: ScreenScope())
      }
    }
  }

  Benchmark("9-clear-a-scope-of-1000", configuration: batched) { benchmark in
    // The scaling factor makes the time read per discarded instance.
    let pod = Pod()
    for provider in screen1000 { blackHole(pod.resolve(provider)) }
    benchmark.startMeasurement()
    pod.clearCachedInstances(forScope: ScreenScope())
    benchmark.stopMeasurement()
  }

  Benchmark(
    "10-deep-chain-of-10000-first-resolve",
    configuration: .init(
      metrics: metrics,
      timeUnits: .milliseconds,
      // One warm-up even in CI: a provider's first resolve ever sets up what it keeps for
      // later pods, which is not what this workload measures.
      warmupIterations: 1,
      maxDuration: quick ? .milliseconds(1) : .seconds(10),
      maxIterations: quick ? 1 : 20
    )
  ) { benchmark in
    let top = deepChain[deepChain.count - 1]
    let pod = Pod()
    benchmark.startMeasurement()
    blackHole(pod.resolve(top))
    benchmark.stopMeasurement()
  }
}
