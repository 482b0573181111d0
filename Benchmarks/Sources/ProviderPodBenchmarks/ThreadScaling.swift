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

/// How long each phase of a measurement runs: a warm-up (first builds, the allocator's
/// per-thread caches), then the samples, whose median is reported.
private func phaseSeconds(_ effort: Effort) -> [Double] {
  let sample = 0.1 * effort.scale
  return [sample / 2] + Array(repeating: sample, count: effort.scale < 1 ? 1 : 5)
}

/// What the threads of one measurement share: which phase runs, which was told to stop, and
/// what each phase did.
private final class Phases: Sendable {
  let ready = Atomic<Int>(0)
  /// The phase the threads may run; -1 until the first starts.
  let running = Atomic<Int>(-1)
  /// The last phase told to stop.
  let stopped = Atomic<Int>(-1)
  let results: Mutex<[Result]>

  /// Operations done in a phase, the threads' sums, and when the last thread stopped.
  struct Result {
    var threads = 0
    var operations = 0
    var total = 0
    var end: ContinuousClock.Instant?
  }

  init(count: Int) { results = Mutex(Array(repeating: Result(), count: count)) }
}

/// Aggregate operations per second when `threads` threads run `threadCase` at once, the median
/// over the samples. The same threads run every phase, so that nothing of theirs starts cold
/// in a sample. A phase's rate is every thread's operations over the time from its start until
/// the last thread stopped. Not the sum of each thread's own rate: with more threads than free
/// cores, threads that ran one after the other would each report a full core's rate.
func scalingThroughput(_ threadCase: ThreadCase, threads: Int, effort: Effort) -> Double {
  let seconds = phaseSeconds(effort)
  let phases = Phases(count: seconds.count)
  let finished = DispatchGroup()
  for _ in 0..<threads {
    finished.enter()
    Thread {
      let body = threadCase.prepare()
      phases.ready.add(1, ordering: .releasing)
      for phase in seconds.indices {
        while phases.running.load(ordering: .acquiring) < phase { sched_yield() }
        var operations = 0
        var total = 0
        repeat {
          total &+= body(threadCase.chunk)
          operations += threadCase.chunk
        } while phases.stopped.load(ordering: .relaxed) < phase
        let end = ContinuousClock.now
        phases.results.withLock { results in
          results[phase].threads += 1
          results[phase].operations += operations
          results[phase].total &+= total
          results[phase].end = max(results[phase].end ?? end, end)
        }
      }
      finished.leave()
    }.start()
  }
  while phases.ready.load(ordering: .acquiring) < threads { usleep(100) }
  var rates: [Double] = []
  for (phase, duration) in seconds.enumerated() {
    let start = ContinuousClock.now
    phases.running.store(phase, ordering: .releasing)
    Thread.sleep(forTimeInterval: duration)
    phases.stopped.store(phase, ordering: .relaxed)
    while phases.results.withLock({ $0[phase].threads }) < threads { usleep(50) }
    let result = phases.results.withLock { $0[phase] }
    consume(result.total)
    if phase > 0 {
      rates.append(Double(result.operations) / (nanoseconds(result.end! - start) / 1e9))
    }
  }
  finished.wait()
  return median(rates)
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
  // Three significant figures: with two, a change of a few percent (what one round of work
  // on a request pod moves) did not show between 1.2 and 1.3 million a second.
  let format = millions >= 10 ? "%.1f" : millions >= 1 ? "%.2f" : "%.3f"
  return String(format: format, millions)
}

/// The section: aggregate throughput at each thread count, and its ratio to one thread.
func runThreadScaling(_ cases: [ThreadCase], threadCounts: [Int], effort: Effort) {
  let columns = threadCounts.map { $0 == 1 ? "1 thread" : "\($0) threads" }
  print("")
  print(
    "Scaling with threads: aggregate millions of operations per second, all threads together"
      + " (\(effort.scale < 1 ? "QUICK RUN, not for comparison" : "median of 5 samples of 0.1 s after a warm-up"))"
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
