/// The command line: `PodStress [--seconds N] [--scenario NAME] [--list]`.
struct Options {
  /// The whole run's time, shared out between the scenarios that run.
  var seconds = 12.0
  var scenario: String?
  var list = false
  /// Set by a repro scenario for the fresh process it starts: race here, report only failures.
  var inProcess = false

  static let usage = """
    usage: PodStress [--seconds N] [--scenario NAME] [--list]
      --seconds N      how long the whole run races, shared by its scenarios (default 12)
      --scenario NAME  run one scenario only, for bisecting
      --list           print the scenarios and exit
    """

  /// A `UsageError` without a message is a request for help, which is not a failure.
  static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
    var options = Options()
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "--seconds":
        guard let text = rest.popFirst(), let seconds = Double(text), seconds > 0 else {
          return .failure(UsageError("--seconds needs a positive number"))
        }
        options.seconds = seconds
      case "--scenario":
        guard let name = rest.popFirst() else {
          return .failure(UsageError("--scenario needs a name"))
        }
        options.scenario = name
      case "--in-process":
        options.inProcess = true
      case "--list":
        options.list = true
      case "--help", "-h":
        return .failure(UsageError(nil))
      default:
        return .failure(UsageError("unknown argument \(argument)"))
      }
    }
    return .success(options)
  }
}

struct UsageError: Error {
  let message: String?
  init(_ message: String?) { self.message = message }
}
