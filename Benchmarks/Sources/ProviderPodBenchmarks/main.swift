import Foundation

/// The workloads of issue #4. A library returns nil where no fair mapping exists.
protocol Workloads {
  var name: String { get }
  func cachedSingleton(_ effort: Effort) -> Double?
  func alwaysNew(_ effort: Effort) -> Double?
  func newChain(_ effort: Effort) -> Double?
  func cachedChain(_ effort: Effort) -> Double?
  func cachedSingletonTwoThreads(_ effort: Effort) -> Double?
  func newContainerWith100(_ effort: Effort) -> Double?
  func storeNth(_ effort: Effort, distinct: Int) -> Double?
  func scopedResolveAndClear(_ effort: Effort, singletons: Int) -> Double?
  func clearScope(_ effort: Effort, size: Int) -> Double?
  func deepChain(_ effort: Effort) -> Double?
  func childPerRequest(_ effort: Effort) -> Double?
  func childPerRequestTwoThreads(_ effort: Effort) -> Double?
  func newChain(_ effort: Effort, depth: Int) -> Double?
  func newContainer(_ effort: Effort, dependencies: Int) -> Double?
  func childPerRequestWithFiveServices(_ effort: Effort) -> Double?
}

extension Workloads {
  func cachedSingleton(_ effort: Effort) -> Double? { nil }
  func alwaysNew(_ effort: Effort) -> Double? { nil }
  func newChain(_ effort: Effort) -> Double? { nil }
  func cachedChain(_ effort: Effort) -> Double? { nil }
  func cachedSingletonTwoThreads(_ effort: Effort) -> Double? { nil }
  func newContainerWith100(_ effort: Effort) -> Double? { nil }
  func storeNth(_ effort: Effort, distinct: Int) -> Double? { nil }
  func scopedResolveAndClear(_ effort: Effort, singletons: Int) -> Double? { nil }
  func clearScope(_ effort: Effort, size: Int) -> Double? { nil }
  func deepChain(_ effort: Effort) -> Double? { nil }
  func childPerRequest(_ effort: Effort) -> Double? { nil }
  func childPerRequestTwoThreads(_ effort: Effort) -> Double? { nil }
  func newChain(_ effort: Effort, depth: Int) -> Double? { nil }
  func newContainer(_ effort: Effort, dependencies: Int) -> Double? { nil }
  func childPerRequestWithFiveServices(_ effort: Effort) -> Double? { nil }
}

/// Nanoseconds per stored instance: fresh containers, each filled with `distinct` instances.
func measureFreshContainers(_ effort: Effort, distinct: Int, _ body: () -> Void) -> Double {
  measureFreshContainers(effort, distinct: distinct, prepare: { () }, { _ in body() })
}

/// Nanoseconds per instance: `body` handles `distinct` instances of what `prepare` (untimed)
/// made; about `instances` instances per repetition.
func measureFreshContainers<Prepared>(
  _ effort: Effort, distinct: Int, instances: Int = 200_000, prepare: () -> Prepared,
  _ body: (Prepared) -> Void
) -> Double {
  let rounds = effort.iterations(max(1, instances / distinct))
  var samples: [Double] = []
  for repetition in 0..<(effort.warmups + effort.repetitions) {
    var total = Duration.zero
    for _ in 0..<rounds {
      let prepared = prepare()
      total += timed(operations: distinct) { body(prepared) }
    }
    if repetition >= effort.warmups {
      samples.append(nanoseconds(total) / Double(rounds * distinct))
    }
  }
  return median(samples)
}

let arguments = CommandLine.arguments.dropFirst()
var effort = arguments.contains("--quick") ? Effort.quick : Effort.full
if let scale = arguments.firstIndex(of: "--scale").flatMap({ index in
  arguments.index(after: index) < arguments.endIndex
    ? Double(arguments[arguments.index(after: index)]) : nil
}) {
  effort.scale = scale
}
/// `--only 1,2,7` runs just those workloads, `--library ProviderPod` just one column (for profiling).
func option(_ name: String) -> String? {
  guard let index = arguments.firstIndex(of: name),
    arguments.index(after: index) < arguments.endIndex
  else { return nil }
  return arguments[arguments.index(after: index)]
}
let onlyWorkloads = option("--only").map { Set($0.split(separator: ",").compactMap { Int($0) }) }
/// `--row 9` runs only the ninth row of the table (rows 7 and 8 share a workload number).
let onlyRow = option("--row").flatMap { Int($0) }
/// `--warmups 0` skips warm-up runs (profiling a slow workload).
if let warmups = option("--warmups").flatMap({ Int($0) }) { effort.warmups = warmups }
let onlyLibrary = option("--library")
/// `--threads 1,2,16`: the thread counts of the thread-scaling section (default 1, 2 and every
/// core); `--scaling` runs that section alone, without the table.
let threadCounts = scalingThreadCounts(option("--threads"))
/// `--case "per request"`: only the scaling rows whose title contains it (for profiling).
let onlyCase = option("--case")
@MainActor func runScalingSection() {
  let cases = threadScalingCases().filter { onlyLibrary == nil || $0.library == onlyLibrary }
    .filter { onlyCase == nil || $0.title.contains(onlyCase!) }
  runThreadScaling(cases, threadCounts: threadCounts, effort: effort)
}
if arguments.contains("--scaling") {
  print("ProviderPod benchmarks: scaling with threads")
  print(
    "Machine: \(machine()); release build\(effort.scale < 1 ? "; QUICK RUN, not for comparison" : "")"
  )
  runScalingSection()
  print("")
  print("(sink \(sink % 10))")
  exit(0)
}
let libraries: [any Workloads] = [
  ProviderPodWorkloads(), SwinjectWorkloads(), SwiftDependenciesWorkloads(),
]
let baselines: [any Workloads] = [
  LazyVarWorkloads(), InitializerWorkloads(), MutexDictionaryWorkloads(),
]

struct Row {
  let title: String
  let run: (any Workloads) -> Double?
}

var rows: [Row] = [
  Row(title: "1. cached singleton") { $0.cachedSingleton(effort) },
  Row(title: "2. always-new small class") { $0.alwaysNew(effort) },
  Row(title: "3. chain of 10 always-new") { $0.newChain(effort) },
  Row(title: "4. chain of 10, all cached") { $0.cachedChain(effort) },
  Row(title: "5. cached singleton, 2 threads (per thread)") {
    $0.cachedSingletonTwoThreads(effort)
  },
  Row(title: "6. new container + root with 100 deps") { $0.newContainerWith100(effort) },
  Row(title: "7. store n-th instance, n = 100") { $0.storeNth(effort, distinct: 100) },
  Row(title: "7. store n-th instance, n = 1,000") { $0.storeNth(effort, distinct: 1_000) },
  Row(title: "7. store n-th instance, n = 10,000") { $0.storeNth(effort, distinct: 10_000) },
  Row(title: "8. resolve scoped + clear scope, N = 100") {
    $0.scopedResolveAndClear(effort, singletons: 100)
  },
  Row(title: "8. resolve scoped + clear scope, N = 10,000") {
    $0.scopedResolveAndClear(effort, singletons: 10_000)
  },
  Row(title: "9. clear a scope of 1,000 (per instance)") { $0.clearScope(effort, size: 1_000) },
  Row(title: "10. chain 10,000 deep, first resolve") { $0.deepChain(effort.slow) },
  Row(title: "11. child pod per request") { $0.childPerRequest(effort) },
  Row(title: "11. child pod per request, 2 threads (per thread)") {
    $0.childPerRequestTwoThreads(effort)
  },
  // Rows 16-18: how an always-new chain's cost grows with its depth (one provider per level,
  // all of one type, so that a chain of any depth can be generated).
  Row(title: "12. always-new chain of 10, generated") { $0.newChain(effort, depth: 10) },
  Row(title: "12. always-new chain of 100, generated") { $0.newChain(effort, depth: 100) },
  Row(title: "12. always-new chain of 1,000, generated") { $0.newChain(effort, depth: 1_000) },
  // How a new container's cost grows with what it builds, and a request that builds more.
  Row(title: "14. new container + root with 100 deps, generated") {
    $0.newContainer(effort, dependencies: 100)
  },
  Row(title: "14. new container + root with 1,000 deps, generated") {
    $0.newContainer(effort, dependencies: 1_000)
  },
  Row(title: "15. child pod per request, 5 request services") {
    $0.childPerRequestWithFiveServices(effort)
  },
]

func format(_ value: Double?) -> String {
  guard let value else { return "n/a" }
  return value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
}

func ratio(_ numerator: Double?, _ denominator: Double?) -> String {
  guard let numerator, let denominator, denominator > 0 else { return "" }
  return String(format: "%.2fx", numerator / denominator)
}

func machine() -> String {
  let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
  let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
    .map { String($0.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces) }
  #if arch(x86_64)
    let architecture = "x86_64"
  #elseif arch(arm64)
    let architecture = "arm64"
  #else
    let architecture = "unknown"
  #endif
  return "\(architecture), \(ProcessInfo.processInfo.activeProcessorCount) cores"
    + (model.map { ", \($0)" } ?? "")
}

rows += scalingRows(effort)
let all = libraries + baselines
print("ProviderPod benchmarks: median ns per operation over \(effort.repetitions) repetitions")
print(
  "Machine: \(machine()); release build\(effort.scale < 1 ? "; QUICK RUN, not for comparison" : "")"
)
print("")
print("| workload | " + all.map(\.name).joined(separator: " | ") + " |")
print("| --- |" + String(repeating: " ---: |", count: all.count))
var results: [[Double?]] = []
for (position, row) in rows.enumerated() {
  let number = Int(row.title.prefix { $0 != "." }) ?? 0
  if let onlyWorkloads, !onlyWorkloads.contains(number) {
    results.append(all.map { _ in nil })
    continue
  }
  if let onlyRow, onlyRow != position + 1 {
    results.append(all.map { _ in nil })
    continue
  }
  let values = all.map { library in
    onlyLibrary == nil || onlyLibrary == library.name ? row.run(library) : nil
  }
  results.append(values)
  print("| \(row.title) | " + values.map(format).joined(separator: " | ") + " |")
}
print("")
print("Ratios: each library against ProviderPod (above 1x: ProviderPod is faster), and ProviderPod")
print("against each baseline (the budget: at most 1.0x the Mutex dictionary for cached resolves,")
print("2x the initializer for always-new, 2x the Mutex dictionary for a new container).")
print("")
print(
  "| workload | Swinject / PP | swift-deps / PP | PP / lazy var | PP / initializer | PP / Mutex dict |"
)
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for (row, values) in zip(rows, results) {
  let pp = values[0]
  let cells = [
    ratio(values[1], pp), ratio(values[2], pp), ratio(pp, values[3]), ratio(pp, values[4]),
    ratio(pp, values[5]),
  ]
  print("| \(row.title) | " + cells.joined(separator: " | ") + " |")
}
if let first = results[6][0], let last = results[8][0] {
  print("")
  print("ProviderPod storage cost from n = 100 to n = 10,000: \(ratio(last, first)) (flat is 1x).")
}
if let one = results[0][0], let two = results[4][0] {
  print("ProviderPod cached resolve on 2 threads vs 1: \(ratio(two, one)) per thread (budget: 2x).")
}
if let small = results[9][0], let large = results[10][0] {
  print(
    "ProviderPod resolve scoped + clear, N = 10,000 vs N = 100: \(ratio(large, small))"
      + " (budget: 1.2x).")
}
if let ours = results[11][0], let swinject = results[11][1] {
  print(
    "ProviderPod clear of 1,000 per instance vs Swinject's: \(ratio(ours, swinject))"
      + " (budget: 1.0x).")
}
if let ours = results[13][0], let byHand = results[13][5] {
  print("ProviderPod child pod per request vs by hand: \(ratio(ours, byHand)) (budget: 2x).")
}
if let ours = results[14][0], let byHand = results[14][5] {
  print(
    "ProviderPod child pod per request on 2 threads vs by hand: \(ratio(ours, byHand))"
      + " (budget: 2x).")
}
if let ten = results[15][0], let hundred = results[16][0], let thousand = results[17][0] {
  print(
    "ProviderPod always-new chain of 100 vs 10: \(ratio(hundred, ten)), of 1,000 vs 100:"
      + " \(ratio(thousand, hundred)) (linear is 10x).")
}
printScalingSummary(rows: rows, results: results)
if onlyWorkloads == nil, onlyRow == nil { runScalingSection() }
print("")
print("(sink \(sink % 10); operations measured: \(operationsMeasured))")
