import CallgrindToggles
import Foundation

/// Where results go so the optimiser cannot drop the work that made them.
nonisolated(unsafe) var sink: UInt = 0

@inline(never)
func consume<T: AnyObject>(_ object: T) {
  sink &+= UInt(bitPattern: ObjectIdentifier(object))
}

@inline(never)
func consume(_ value: Int) {
  sink &+= UInt(bitPattern: value)
}

/// Operations run inside the timed parts, for instructions per operation under callgrind.
nonisolated(unsafe) var operationsMeasured = 0

/// Runs `body` as a timed part: timed by the clock and, under callgrind, counted.
func timed(operations: Int, _ body: () -> Void) -> Duration {
  callgrind_toggles_start()
  let elapsed = ContinuousClock().measure(body)
  callgrind_toggles_stop()
  operationsMeasured += operations
  return elapsed
}

/// How much work each measurement does.
struct Effort {
  var repetitions: Int
  var warmups: Int
  /// Multiplies the iteration counts; 1 for a real run.
  var scale: Double

  static let full = Effort(repetitions: 15, warmups: 3, scale: 1)
  static let quick = Effort(repetitions: 3, warmups: 1, scale: 0.01)

  func iterations(_ count: Int) -> Int { max(1, Int(Double(count) * scale)) }

  /// For a workload whose single operation takes a second or more.
  var slow: Effort {
    Effort(repetitions: max(1, repetitions / 3), warmups: min(warmups, 1), scale: scale)
  }
}

/// Median nanoseconds per operation of `body`, which runs `operations` operations per call.
func measure(
  _ effort: Effort, operations: Int, _ body: (Int) -> Void
) -> Double {
  let operations = effort.iterations(operations)
  for _ in 0..<effort.warmups { body(operations) }
  var samples: [Double] = []
  for _ in 0..<effort.repetitions {
    let elapsed = timed(operations: operations) { body(operations) }
    samples.append(nanoseconds(elapsed) / Double(operations))
  }
  return median(samples)
}

/// Median per-thread nanoseconds per operation when `threads` threads each run `body` at once.
func measureConcurrently(
  _ effort: Effort, threads: Int, operations: Int, _ body: @escaping @Sendable (Int) -> Int
) -> Double {
  let operations = effort.iterations(operations)
  var samples: [Double] = []
  for repetition in 0..<(effort.warmups + effort.repetitions) {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let results = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
    nonisolated(unsafe) let shared = results
    for index in 0..<threads {
      done.enter()
      Thread {
        start.wait()
        shared[index] = body(operations)
        done.leave()
      }.start()
    }
    let elapsed = timed(operations: operations * threads) {
      for _ in 0..<threads { start.signal() }
      done.wait()
    }
    for value in results { consume(value) }
    results.deallocate()
    if repetition >= effort.warmups {
      samples.append(nanoseconds(elapsed) / Double(operations))
    }
  }
  return median(samples)
}

func nanoseconds(_ duration: Duration) -> Double {
  let (seconds, attoseconds) = duration.components
  return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted[sorted.count / 2]
}
