#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How a run of this executable in a process of its own ended.
enum ProcessEnd: Equatable {
  case exited(Int32)
  case signalled(Int32)
}

/// Runs this executable again with `arguments`, sharing stdout and stderr, and waits for it.
///
/// The reported crashes came within the first tenth of a second of a process or not at all:
/// measured here, a repro that had not crashed by then ran clean for its remaining seconds,
/// also with new threads and a new pod every tenth of a second. So the repros race in fresh
/// processes, many short ones, rather than in one long one.
func runAgain(_ arguments: [String]) -> ProcessEnd {
  let argv = ([CommandLine.arguments[0]] + arguments).map { strdup($0) } + [nil]
  defer { for argument in argv { free(argument) } }
  var pid = pid_t()
  // The environment carries the sanitizers' options to the child.
  let spawned = posix_spawnp(&pid, argv[0]!, nil, nil, argv, currentEnvironment())
  precondition(spawned == 0, "PodStress: could not start \(CommandLine.arguments[0]) (\(spawned))")
  var status: Int32 = 0
  while waitpid(pid, &status, 0) == -1 {}
  // WIFEXITED and friends are macros Swift cannot import.
  let signal = status & 0x7f
  return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
}

/// `environ`, which Swift 6 will not read directly: it is a mutable C global.
private func currentEnvironment() -> UnsafePointer<UnsafeMutablePointer<CChar>?>? {
  guard let symbol = dlsym(nil, "environ") else { return nil }
  return UnsafePointer(
    symbol.assumingMemoryBound(to: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?.self)
      .pointee)
}

/// A repro scenario's `run`: in a fresh process per slice of `duration` unless `inProcess`
/// (which the driver passes to those processes).
func inFreshProcesses(
  _ name: String, report: Report, race: @escaping @Sendable (Duration) async -> Void
) -> @Sendable (Duration, Bool) async -> Void {
  { duration, inProcess in
    if inProcess { return await race(duration) }
    let slice = Duration.milliseconds(250)
    let deadline = Deadline(after: duration)
    var runs = 0
    repeat {
      runs += 1
      let seconds = Double(slice.components.attoseconds) / 1e18
      let end = runAgain(["--scenario", name, "--seconds", "\(seconds)", "--in-process"])
      report.add(operations: 1)
      switch end {
      case .exited(0): continue
      case .exited(let status):
        report.fail("fresh process \(runs) found violations (exit status \(status))")
      case .signalled(let signal):
        report.fail("fresh process \(runs) crashed with signal \(signal)")
      }
      return
    } while !deadline.hasPassed
  }
}
