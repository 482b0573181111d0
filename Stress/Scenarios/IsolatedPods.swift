import Dispatch
import ProviderPod

/// Tests isolating one global pod while the app uses it: threads outside any isolation read
/// the global pod's instances; tasks and threads each isolate it with an override of their
/// own, resolve through the global pod (also from child tasks, child pods, and a builder that
/// reaches the global), override and clear through it, and end. What is checked: inside an
/// isolation, every resolve through the global pod gives that isolation's own value and
/// nothing another's; outside, the global pod's value never changes; what an isolation built
/// is gone with it.
enum IsolatedPods {
  static let report = Report(scenario: "isolated-pods")

  /// Kept in a global, as the code under test reaches an app's pod.
  static let app = Pod()

  final class Greeting: Sendable {
    let text: String
    init(_ text: String) { self.text = text }
  }

  static let nameProvider = Provider(name: "name") { _ in "global" }
  /// Built through the global pod, not its context: the resolve is nested in the build of
  /// whichever pod the global stands for on this task.
  static let greetingProvider = Provider(name: "greeting") { _ in
    Greeting("hello \(app.resolve(nameProvider))")
  }

  static let scenario = Scenario(
    name: "isolated-pods",
    summary: "tasks and threads isolating one global pod while threads read it outside",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    let deadline = Deadline(after: duration)
    // The threads are started from a Dispatch thread: waiting for them on one of the few
    // threads that run tasks would leave the isolating tasks none.
    async let threads: Void = withCheckedContinuation { done in
      DispatchQueue.global().async {
        onThreads(4) { thread in
          if thread < 2 {
            readOutside(until: deadline)
          } else {
            isolateOnThread(thread, until: deadline)
          }
        }
        done.resume()
      }
    }
    let taskRounds = await withTaskGroup(of: Int.self) { group in
      for worker in 0..<4 {
        group.addTask {
          var round = 0
          while !deadline.hasPassed {
            round += 1
            await isolate(as: "task-\(worker)-\(round)")
          }
          return round
        }
      }
      var total = 0
      for await rounds in group { total += rounds }
      return total
    }
    await threads
    report.add(operations: taskRounds)
    report.note("\(taskRounds) isolations on tasks")
    report.check(taskRounds > 0, "no task isolated the pod while the threads ran")
    report.check(app.resolve(nameProvider) == "global", "the global pod kept an isolation's name")
  }

  /// One isolation, async: its own name everywhere the global pod is reached from its task.
  static func isolate(as name: String) async {
    await app.withIsolation(overrides: [nameProvider.override(withValue: name)]) { testPod in
      let expected = "hello \(name)"
      report.check(app.resolve(greetingProvider).text == expected, "\(name) saw another's")
      let fromChildren = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<3 {
          group.addTask { app.resolve(greetingProvider).text == expected }
        }
        return await group.reduce(true) { $0 && $1 }
      }
      report.check(fromChildren, "a child task of \(name) saw another's")
      let request = Pod(parent: app)
      report.check(request.parent === testPod, "a child pod of \(name) was not made from its pod")
      report.check(request.resolve(greetingProvider).text == expected, "\(name)'s child pod")
      // Changes through the global pod reach only this isolation's pod.
      app.clearCachedInstance(of: greetingProvider)
      app.overrideProvider(nameProvider, withValue: name + "!")
      report.check(
        app.resolve(greetingProvider).text == expected + "!", "\(name)'s override went elsewhere")
    }
  }

  /// Isolations on a thread with no task: the synchronous form.
  static func isolateOnThread(_ thread: Int, until deadline: Deadline) {
    var round = 0
    while !deadline.hasPassed {
      round += 1
      let name = "thread-\(thread)-\(round)"
      app.withIsolation(overrides: [nameProvider.override(withValue: name)]) { _ in
        for _ in 0..<10 {
          report.check(
            app.resolve(greetingProvider).text == "hello \(name)", "\(name) saw another's")
        }
      }
    }
    report.add(operations: round)
  }

  /// A thread outside any isolation: the global pod's own instance, always.
  static func readOutside(until deadline: Deadline) {
    var reads = 0
    while !deadline.hasPassed {
      for _ in 0..<100 {
        let text = app.resolve(greetingProvider).text
        if text != "hello global" { report.fail("outside, the global pod gave \(text)") }
      }
      reads += 100
    }
    report.add(operations: reads)
  }
}
