import ProviderPod

/// One of the app's windows: a child pod of the app's pod that owns ``WindowScope``, and the
/// sign-up running in it.
///
/// The window's flow, session and screens are cached in the window's pod, so two windows
/// sign up at once without seeing each other's; what they are built from that is the app's
/// (the HTTP client, the configuration) is cached in the app's pod and shared. Clearing the
/// flow in one window never touches the other, and when a window goes away its pod goes with
/// it, disposing of what it cached.
@MainActor
final class Window {
  let number: Int
  /// The sign-up running in this window, on the window's pod.
  let flow: SignUpFlow

  /// The window's pod.
  var pod: Pod { flow.pod }
  /// How the trace and the prompt name it: `window 2`.
  var name: String { "window \(number)" }

  /// Opens a window on `appPod`, whose observer is `appTrace`; the code the window's flow
  /// shows calls its pod `podExpression`, by default the name ``podName`` gives it.
  init(
    number: Int, appPod: Pod, appTrace: TraceObserver, transcript: Transcript,
    podExpression: String? = nil
  ) {
    self.number = number
    let trace = TraceObserver(childOf: appTrace, podName: "window \(number)")
    let pod = Pod(parent: appPod, scopes: [WindowScope()], observer: trace)
    flow = SignUpFlow(
      pod: pod, trace: trace, transcript: transcript,
      podExpression: podExpression ?? Self.podName(number))
  }

  /// What the code the interactive mode shows calls window `number`'s pod: `window2`. The
  /// pod is a child of the app's, so code that said `pod` would name the wrong one.
  static func podName(_ number: Int) -> String { "window\(number)" }
}

/// The app as the interactive mode drives it: the app's pod at the root, one window open at
/// launch, more on demand, and a current window that the sign-up commands act on.
@MainActor
final class WindowedApp {
  typealias Refusal = SignUpFlow.Refusal

  /// The app's pod: its singletons are shared by every window.
  let pod: Pod
  /// Numbers instances across the app's pod and the windows' pods.
  let trace: TraceObserver
  /// The open windows, oldest first.
  private(set) var windows: [Window] = []
  private(set) var current: Window
  private let transcript: Transcript

  /// Launches the app with window 1 open.
  init(transcript: Transcript) {
    self.transcript = transcript
    let trace = TraceObserver(transcript: transcript, podName: "app")
    let pod = Pod(observer: trace)
    let first = Window(number: 1, appPod: pod, appTrace: trace, transcript: transcript)
    self.trace = trace
    self.pod = pod
    current = first
    windows = [first]
  }

  /// Opens a window with the next number and makes it the current one.
  @discardableResult
  func openWindow() -> Window {
    let number = (windows.map(\.number).max() ?? 0) + 1
    let code = "let \(Window.podName(number)) = Pod(parent: appPod, scopes: [WindowScope()])"
    let window = trace.show(code) {
      Window(number: number, appPod: pod, appTrace: trace, transcript: transcript)
    }
    windows.append(window)
    current = window
    say("opened \(window.name): a child pod of the app's, owning WindowScope and the sign-up below")
    say("now in \(window.name): \(window.flow.summary)")
    return window
  }

  /// Makes window `number` the current one.
  func switchToWindow(_ number: Int) throws(Refusal) {
    guard let window = windows.first(where: { $0.number == number }) else {
      throw Refusal(message: "there is no window \(number): \(openWindows)")
    }
    let already = window === current
    current = window
    say("\(already ? "already" : "now") in \(window.name): \(window.flow.summary)")
  }

  /// Lists the windows, marking the current one with `*`.
  func listWindows() {
    for window in windows {
      let mark = window === current ? "*" : " "
      // Continued under the summary's first word.
      say("\(mark) \(window.name)  \(window.flow.summary)", indent: "              ")
    }
  }

  /// Closes the current window: nothing holds its pod any more, so the pod goes away with
  /// the instances it cached (each `onDiscard` runs; the app's instances stay). The window
  /// opened before it, or else the first one left, becomes the current one.
  ///
  /// The session's hook runs on the main actor, after the pod has gone: this waits for it, so
  /// that closing shows the hook running as finishing does.
  func closeCurrentWindow() async throws(Refusal) {
    guard windows.count > 1 else {
      throw Refusal(message: "\(current.name) is the last window: 'quit' leaves the demo")
    }
    let closed = removeCurrentWindow()
    let held =
      closed.held.isEmpty ? "nothing of its own" : "the \(closed.held.count) instances it cached"
    say("closed \(closed.name): its pod goes away with \(held)")
    for (label, scope) in closed.held { say("  \(label.padded(to: 40)) \(scope)") }
    if let session = closed.session {
      for _ in 0..<100 where !session.isClosed { await Task.yield() }
      if session.isClosed {
        say("✓ \(closed.sessionLabel)'s onDiscard closed it: its email and name are erased")
      }
    }
    say("now in \(current.name): \(current.flow.summary)")
  }

  /// Takes the current window out of the app and returns what closing it showed; the window
  /// and its pod are gone when this returns, since nothing else holds them.
  private func removeCurrentWindow() -> (
    name: String, held: [(label: String, scope: String)], session: SignUpSession?,
    sessionLabel: String
  ) {
    let closing = current
    let index = windows.firstIndex { $0 === closing }!
    let trace = closing.flow.trace
    let held = closing.pod.dependencyGraph().nodes.filter { trace.holds($0.provider) }
      .map { (label: trace.label($0.provider), scope: $0.scope) }
    windows.remove(at: index)
    current = windows[max(0, index - 1)]
    return (
      closing.name, held, closing.flow.session, trace.label(signUpSessionProvider.name)
    )
  }

  /// `windows 1 and 3 are open`.
  private var openWindows: String {
    let numbers = windows.map { String($0.number) }
    guard numbers.count > 1 else { return "only window \(numbers[0]) is open" }
    return "windows \(numbers.dropLast().joined(separator: ", ")) and \(numbers.last!) are open"
  }

  /// Writes a line, broken to fit the terminal: summaries hold what the user typed.
  private func say(_ line: String, indent: String = "    ") {
    transcript.write(("  " + line).fitted(indent: indent))
  }
}
