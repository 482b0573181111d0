import Foundation
import Synchronization

/// One workload of the thread-scaling section: every thread runs it at once, for a fixed time.
struct ThreadCase: Sendable {
  let title: String
  /// The column of the side-by-side table it belongs to, for `--library`.
  let library: String
  /// Operations between two looks at the stop flag: a few microseconds' worth.
  let chunk: Int
  /// Runs on each thread before the clock starts (a per-thread child pod is made here) and
  /// returns that thread's loop: it runs `count` operations and returns something computed from
  /// them, which the thread sums (a shared sink would be a shared write).
  let prepare: @Sendable () -> (_ count: Int) -> Int
}

/// The flags every thread of one sample reads, and what the threads report back.
private final class Sample: Sendable {
  let ready = Atomic<Int>(0)
  let go = Atomic<Bool>(false)
  let stop = Atomic<Bool>(false)
  /// Operations done, the threads' sums, and when the last thread stopped.
  let results = Mutex<(operations: Int, total: Int, end: ContinuousClock.Instant?)>((0, 0, nil))
}

/// Aggregate operations per second when `threads` threads run `threadCase` at once for about
/// `seconds`: every thread's operations over the time from the start until the last one
/// stopped. Not the sum of each thread's own rate: with more threads than free cores, threads
/// that ran one after the other would each report a full core's rate.
private func aggregateRate(_ threadCase: ThreadCase, threads: Int, seconds: Double) -> Double {
  let sample = Sample()
  let finished = DispatchGroup()
  for _ in 0..<threads {
    finished.enter()
    Thread {
      let body = threadCase.prepare()
      sample.ready.add(1, ordering: .releasing)
      while !sample.go.load(ordering: .acquiring) { sched_yield() }
      var operations = 0
      var total = 0
      repeat {
        total &+= body(threadCase.chunk)
        operations += threadCase.chunk
      } while !sample.stop.load(ordering: .relaxed)
      let end = ContinuousClock.now
      sample.results.withLock { results in
        results.operations += operations
        results.total &+= total
        results.end = max(results.end ?? end, end)
      }
      finished.leave()
    }.start()
  }
  while sample.ready.load(ordering: .acquiring) < threads { usleep(100) }
  let start = ContinuousClock.now
  sample.go.store(true, ordering: .releasing)
  Thread.sleep(forTimeInterval: seconds)
  sample.stop.store(true, ordering: .relaxed)
  finished.wait()
  let (operations, total, end) = sample.results.withLock { $0 }
  consume(total)
  return Double(operations) / (nanoseconds(end! - start) / 1e9)
}

/// Median aggregate operations per second over a few samples, after a warm-up at the same
/// number of threads (first builds, the allocator's per-thread caches).
func scalingThroughput(_ threadCase: ThreadCase, threads: Int, effort: Effort) -> Double {
  // 0.3 s per case and thread count in a full run: a warm-up and three samples of 0.1 s.
  let seconds = 0.1 * effort.scale
  _ = aggregateRate(threadCase, threads: threads, seconds: seconds / 2)
  let samples = effort.scale < 1 ? 1 : 3
  return median(
    (0..<samples).map { _ in aggregateRate(threadCase, threads: threads, seconds: seconds) })
}

/// The thread counts to measure: `--threads 1,2,16`, or 1, 2 and every core of the machine.
func scalingThreadCounts(_ option: String?) -> [Int] {
  if let option {
    let counts = option.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
    guard !counts.isEmpty, counts.allSatisfy({ ($0 ?? 0) > 0 }) else {
      FileHandle.standardError.write(
        Data(
          "ProviderPodBenchmarks: --threads takes positive thread counts separated by commas, such as --threads 1,2,16; got '\(option)'\n"
            .utf8))
      exit(2)
    }
    // The ratios are to one thread: it is always measured.
    return Array(Set(counts.compactMap { $0 } + [1])).sorted()
  }
  return Array(Set([1, 2, ProcessInfo.processInfo.activeProcessorCount])).sorted()
}

/// Millions of operations per second as the issue's table writes them.
private func formatMillions(_ perSecond: Double) -> String {
  let millions = perSecond / 1e6
  if millions >= 100 {
    var digits = String(Int(millions.rounded()))
    var grouped = ""
    while digits.count > 3 {
      grouped = "," + digits.suffix(3) + grouped
      digits.removeLast(3)
    }
    return digits + grouped
  }
  return String(format: millions >= 1 ? "%.1f" : "%.2f", millions)
}

/// The section: aggregate throughput at each thread count, and its ratio to one thread.
func runThreadScaling(_ cases: [ThreadCase], threadCounts: [Int], effort: Effort) {
  let columns = threadCounts.map { $0 == 1 ? "1 thread" : "\($0) threads" }
  print("")
  print(
    "Scaling with threads: aggregate millions of operations per second, all threads together"
      + " (\(effort.scale < 1 ? "QUICK RUN, not for comparison" : "median of 3 samples of 0.1 s after a warm-up"))"
  )
  print("")
  print("| workload | " + columns.joined(separator: " | ") + " |")
  print("| --- |" + String(repeating: " ---: |", count: columns.count))
  var measured: [(title: String, rates: [Double])] = []
  for threadCase in cases {
    let rates = threadCounts.map { scalingThroughput(threadCase, threads: $0, effort: effort) }
    measured.append((threadCase.title, rates))
    print("| \(threadCase.title) | " + rates.map(formatMillions).joined(separator: " | ") + " |")
  }
  guard let one = threadCounts.firstIndex(of: 1) else { return }
  print("")
  print("Against one thread (aggregate throughput at T threads / at 1 thread; linear is T):")
  print("")
  print("| workload | " + columns.joined(separator: " | ") + " |")
  print("| --- |" + String(repeating: " ---: |", count: columns.count))
  for (title, rates) in measured {
    print("| \(title) | " + rates.map { ratio($0, rates[one]) }.joined(separator: " | ") + " |")
  }
}
