import CallgrindToggles
import Foundation
import ProviderPod
import Swinject

/// How discarding and caching scale with what is discarded or cached: a clear of k instances
/// for k from 100 to 100,000, an override in a parent reaching k instances in a child, and the
/// heap each cached instance costs. Kept apart from `Workloads` so that rows added elsewhere
/// merge without touching these.
protocol ScalingWorkloads {
  /// Nanoseconds per discarded instance: an override added in a parent pod discards the
  /// parent's instance and the `size` instances a child built from it.
  func overrideReachingChildren(_ effort: Effort, size: Int) -> Double?
  /// Heap bytes per instance while `count` cached singletons are held, the instances included.
  func bytesPerCachedInstance(count: Int) -> Double?
}

extension ScalingWorkloads {
  func overrideReachingChildren(_ effort: Effort, size: Int) -> Double? { nil }
  func bytesPerCachedInstance(count: Int) -> Double? { nil }
}

/// Heap bytes in use, from the allocator's own statistics (nil where there are none).
func heapBytesInUse() -> Int? {
  #if canImport(Darwin)
    var statistics = malloc_statistics_t()
    malloc_zone_statistics(nil, &statistics)
    return statistics.size_in_use
  #else
    let bytes = heap_bytes_in_use()
    return bytes < 0 ? nil : Int(bytes)
  #endif
}

/// Heap bytes per item that `fill` adds and keeps until `hold` is done with what it made.
func bytesPerItem<Made>(count: Int, fill: () -> Made) -> Double? {
  guard let before = heapBytesInUse() else { return nil }
  let made = fill()
  guard let after = heapBytesInUse() else { return nil }
  withExtendedLifetime(made) {}
  return Double(after - before) / Double(count)
}

private struct PageScope: ProviderScope {}

extension ProviderPodWorkloads: ScalingWorkloads {
  func overrideReachingChildren(_ effort: Effort, size: Int) -> Double? {
    let base = Provider { _ in Service() }
    let providers = (0..<size).map { index in
      Provider(scope: PageScope()) { pod in Service(value: pod.resolve(base).value + index) }
    }
    return measureFreshContainers(
      effort, distinct: size + 1, instances: 50_000,
      prepare: {
        let parent = Pod()
        let child = Pod(parent: parent, scopes: [PageScope()])
        for provider in providers { consume(child.resolve(provider)) }
        return (parent, child)
      }
    ) { pods in
      pods.0.overrideProvider(base) { @Sendable _ in Service(value: 2) }
    }
  }

  func bytesPerCachedInstance(count: Int) -> Double? {
    let providers = (0..<count).map { index in Provider { _ in Service(value: index) } }
    defer { withExtendedLifetime(providers) {} }
    let pod = Pod()
    return bytesPerItem(count: count) {
      for provider in providers { consume(pod.resolve(provider)) }
      return pod
    }
  }
}

extension SwinjectWorkloads: ScalingWorkloads {
  // No override reaching children: registering again in a parent container leaves what a
  // child container has cached.

  func bytesPerCachedInstance(count: Int) -> Double? {
    let container = Container()
    let names = (0..<count).map { "s\($0)" }
    for (index, name) in names.enumerated() {
      container.register(Service.self, name: name) { _ in Service(value: index) }
        .inObjectScope(.container)
    }
    return bytesPerItem(count: count) {
      for name in names { consume(container.resolve(Service.self, name: name)!) }
      return container
    }
  }
}

extension MutexDictionaryWorkloads: ScalingWorkloads {
  /// A plain `[ObjectIdentifier: AnyObject]` entry and its instance.
  func bytesPerCachedInstance(count: Int) -> Double? {
    let keyObjects = (0..<count).map { _ in Key() }
    let keys = keyObjects.map(ObjectIdentifier.init)
    defer { withExtendedLifetime(keyObjects) {} }
    return bytesPerItem(count: count) {
      var table: [ObjectIdentifier: AnyObject] = [:]
      for (index, key) in keys.enumerated() { table[key] = Service(value: index) }
      return table
    }
  }
}

/// The rows, after every other row of the table.
func scalingRows(_ effort: Effort) -> [Row] {
  [
  Row(title: "9. clear a scope of 100 (per instance)") { $0.clearScope(effort, size: 100) },
  Row(title: "9. clear a scope of 10,000 (per instance)") {
    $0.clearScope(effort, size: 10_000)
  },
  Row(title: "9. clear a scope of 100,000 (per instance)") {
    $0.clearScope(effort, size: 100_000)
  },
  Row(title: "13. parent override reaching 1,000 child instances (per instance)") {
    ($0 as? any ScalingWorkloads)?.overrideReachingChildren(effort, size: 1_000)
  },
  Row(title: "13. parent override reaching 100,000 child instances (per instance)") {
    ($0 as? any ScalingWorkloads)?.overrideReachingChildren(effort, size: 100_000)
  },
  Row(title: "16. bytes per cached instance, 100,000 singletons (bytes, not ns)") {
    ($0 as? any ScalingWorkloads)?.bytesPerCachedInstance(count: 100_000)
  },
  ]
}

/// How the clear and the override scale from k = 1,000 to k = 100,000, and the bytes against
/// a dictionary.
func printScalingSummary(rows: [Row], results: [[Double?]]) {
  func value(_ title: String, column: Int = 0) -> Double? {
    rows.firstIndex { $0.title.hasPrefix(title) }.flatMap { results[$0][column] }
  }
  if let small = value("9. clear a scope of 1,000"), let large = value("9. clear a scope of 100,000")
  {
    print(
      "ProviderPod clear per instance, k = 100,000 vs k = 1,000: \(ratio(large, small))"
        + " (budget: 1.2x).")
  }
  if let small = value("13. parent override reaching 1,000"),
    let large = value("13. parent override reaching 100,000")
  {
    print(
      "ProviderPod parent override per child instance, k = 100,000 vs k = 1,000:"
        + " \(ratio(large, small)) (budget: 1.2x).")
  }
  if let ours = value("16. bytes per cached instance"),
    let dictionary = value("16. bytes per cached instance", column: 5)
  {
    print(
      "ProviderPod bytes per cached instance vs a dictionary entry and the instance:"
        + " \(ratio(ours, dictionary)) (budget: 2x).")
  }
}
