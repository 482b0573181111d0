#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The app-like client: it imports ProviderPod without `@testable`, so a release build
// specialises and inlines the library's generic resolve here, as an app's build does. The
// tests cannot see what that inlining does to lifetimes; this can.

let options: Options
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed): options = parsed
case .failure(let error):
  if let message = error.message { complain("PodStress: \(message)") }
  complain(Options.usage)
  exit(error.message == nil ? 0 : 2)
}

if options.list {
  for scenario in allScenarios { say("\(scenario.name): \(scenario.summary)") }
  exit(0)
}

let chosen = allScenarios.filter { options.scenario == nil || $0.name == options.scenario }
if chosen.isEmpty {
  let names = allScenarios.map(\.name).joined(separator: ", ")
  complain("PodStress: no scenario \(options.scenario ?? ""); there are \(names)")
  exit(2)
}

let share = Duration.seconds(options.seconds / Double(chosen.count))
var operations = 0
var failures = 0
for scenario in chosen {
  let start = ContinuousClock.now
  await scenario.run(share, options.inProcess)
  let took = ContinuousClock.now - start
  let report = scenario.report
  if options.inProcess { exit(report.failures == 0 ? 0 : 1) }
  operations += report.operations
  failures += report.failures
  let verdict = report.failures == 0 ? "ok" : "\(report.failures) FAILURES"
  let notes = report.notes.map { ", \($0)" }.joined()
  say("\(scenario.name): \(report.operations) operations in \(took)\(notes), \(verdict)")
}
say("PodStress: \(chosen.count) scenarios, \(operations) operations, \(failures) failures")
exit(failures == 0 ? 0 : 1)
