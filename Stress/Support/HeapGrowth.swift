import PodStressHeap

/// What a loop that should leave nothing behind costs the heap per operation, measured as an
/// app would see it: the allocator's bytes in use after a warm-up and at the end, over the
/// operations in between. A leak of one small object per operation shows as hundreds of bytes;
/// a sound loop as a few, either way, from tables that grow and shrink in bursts.
struct HeapGrowth {
  let operations: Int
  let bytesPerOperation: Double

  /// Operations before the first reading: enough for frame lists, tables and the runtime's
  /// caches to reach their working size, and for a pod's sweep of its table to have run.
  static let warmUp = 5_000
  /// Fewer measured operations than this judge nothing: a table's one regrowth would weigh
  /// too much.
  static let enough = 20_000
  /// More bytes per operation than this is a leak; the leaks this looks for were 600 and more.
  static let limit = 128.0

  /// Runs `operation` until the deadline (the warm-up at least), on this thread alone.
  static func measure(until deadline: Deadline, _ operation: () -> Void) -> HeapGrowth {
    for _ in 0..<warmUp { operation() }
    let before = pod_stress_heap_bytes_in_use()
    var operations = 0
    // The clock is read every few operations only: each reading costs about as much as one.
    repeat {
      for _ in 0..<64 { operation() }
      operations += 64
    } while !deadline.hasPassed
    let after = pod_stress_heap_bytes_in_use()
    let grown = Double(after - before)
    return HeapGrowth(operations: operations, bytesPerOperation: grown / Double(operations))
  }

  /// Reports the growth, and fails the scenario when it is a leak.
  func check(in report: Report, what: String) {
    let rounded = (bytesPerOperation * 10).rounded() / 10
    report.note("\(rounded) heap bytes per \(what)")
    report.add(operations: operations + Self.warmUp)
    guard operations >= Self.enough else {
      report.note("too few operations (\(operations)) to judge")
      return
    }
    report.check(
      bytesPerOperation <= Self.limit,
      "the heap grew by \(rounded) bytes per \(what) over \(operations) of them")
  }
}
