import ProviderPod

/// The default mode: a sign-up walked through step by step. Each step says why, then runs the
/// app's code and shows what the pod did.
@MainActor
enum ScriptedTour {
  static let introduction = """
    ProviderPod demo: a sign-up flow
    ================================
    An app's sign-up: an email screen, then a profile screen. Each dependency is a
    global provider declared next to its type, in ExampleCLI/SignUpDemo/Providers.swift:
    nothing is registered. A provider's scope says how long the pod keeps its
    instance:

      scope                  instances it holds                  which live for
      SingletonScope         AppConfiguration, HTTPClient,       the whole app
                             SignUpConfiguration, SignUpService
      WindowScope            (each window's pod owns it: step 7) one window
      └─ SignUpFlowScope     SignUpSession,                      one sign-up
                             EmailAvailability(address)
         ├─ EmailStepScope   EmailValidator, EmailStepViewModel  the email screen
         └─ ProfileStepScope NameValidator, ProfileStepViewModel the profile screen

    Clearing a scope discards its instances, those of its child scopes, and whatever
    was built from them. Each step says why, runs the app's code (▸) and shows what
    the pod did:
      + built   - discarded   ~ override
      = reused (already cached: handed out, not rebuilt)
    Instances are numbered in the order the pod built them: SignUpSession#2 is the
    second.
    """

  /// Runs the tour; returns false if any step was refused (which would be a bug).
  @discardableResult
  static func run(transcript: Transcript) async -> Bool {
    let flow = SignUpFlow(transcript: transcript)
    let pod = flow.pod
    var ok = true
    // Lines that hold labels and summaries can outgrow the terminal: continued two columns
    // further in than they start.
    func write(_ line: String) {
      let indent = String(repeating: " ", count: line.prefix { $0 == " " }.count + 2)
      transcript.write(line.fitted(indent: indent))
    }
    func step(
      _ number: Int, _ title: String, command: String? = nil, why: String,
      _ action: () async throws -> Void
    ) async {
      write("")
      write(
        command.map { "\(number). \(title)".padded(to: 44) + "> \($0)" } ?? "\(number). \(title)")
      // One paragraph, broken for the terminal's width rather than where it was typed.
      write("  " + why.split(separator: "\n").joined(separator: " "))
      do { try await action() } catch {
        transcript.write("error: \(error)", to: .error)
        ok = false
      }
    }

    write(introduction)

    await step(
      0, "The app launches.",
      why: """
        Why: two screens need the server's sign-up configuration at launch. It is an
        AsyncProvider, so screens that ask while it loads share one load. The server is
        still starting and refuses the first request: the provider's retry policy tries
        again after a back-off, once for both screens.
        """
    ) {
      let (home, banner) = try await flow.trace.showAwaiting(
        """
        async let home = pod.resolve(signUpConfigurationProvider)
        async let banner = pod.resolve(signUpConfigurationProvider)
        """
      ) {
        async let home = pod.resolve(signUpConfigurationProvider)
        async let banner = pod.resolve(signUpConfigurationProvider)
        return try await (home, banner)
      }
      let label = flow.trace.label(signUpConfigurationProvider.name)
      write(
        home === banner
          ? "  home and banner hold the same \(label) (terms \(home.termsVersion)): one load"
          : "  home and banner hold different instances")
    }

    await step(
      1, "The user taps \"Sign up\".", command: "start",
      why: """
        Why: the form data belongs to this sign-up only, so SignUpSession lives in
        SignUpFlowScope, and each screen's state in that screen's scope. Resolving the email
        screen's view model builds what it needs.
        """
    ) { try flow.start() }

    await step(
      2, "They enter their email and continue.", command: "email ada@example.com",
      why: """
        Why: the server is asked once per address whether it is free. EmailAvailability is a
        ProviderFamily: one member per address, kept in SignUpFlowScope for this sign-up.
        The profile screen opens on top; the email screen stays.
        """
    ) { try flow.enterEmail("ada@example.com") }

    await step(
      3, "They go back.", command: "back",
      why: """
        Why: a screen that was left should not keep its state, so that the next visit starts
        fresh; the email screen underneath is still open and stays as it was. Going back
        clears the profile screen's scope, which holds only that screen's instances.
        """
    ) { try flow.back() }

    await step(
      4, "They fill in the profile screen again.", command: "profile Ada Lovelace",
      why: """
        Why: the profile screen is new, so its view model and validator are built again
        (#2); the session and the app's configuration were kept, so they are reused.
        """
    ) { try flow.enterName("Ada Lovelace") }

    await step(
      5, "They finish.", command: "finish",
      why: """
        Why: nothing of Ada's sign-up should stay in memory once it is sent. One clear of
        SignUpFlowScope discards the session, the address checks and, through the scope
        tree, both screens; the session's onDiscard erases its data.
        """
    ) { try await flow.finish() }

    await step(
      6, "Another sign-up starts.", command: "start",
      why: """
        Why: it must begin empty while the app-wide instances carry on: a new SignUpSession#2
        and new screens, the same HTTPClient#1 and configuration (see the graph in step 10).
        """
    ) { try flow.start() }

    await step(
      7, "The user opens two windows and signs up in both.",
      why: """
        Why: each window runs a sign-up of its own, but a pod holds one instance of a scope:
        one SignUpSession. So each window gets a child pod that owns WindowScope and the
        sign-up scopes below it, while everything else stays the app pod's, shared by both.
        Finishing in one window must leave the other alone. From here on each line says
        which pod did it ([app], [window 1]); numbers count on across the app's pods.
        """
    ) {
      let (first, second) = flow.trace.show(
        """
        let firstWindow = Pod(parent: pod, scopes: [WindowScope()])
        let secondWindow = Pod(parent: pod, scopes: [WindowScope()])
        """
      ) {
        (
          Window(
            number: 1, appPod: pod, appTrace: flow.trace, transcript: transcript,
            podExpression: "firstWindow"),
          Window(
            number: 2, appPod: pod, appTrace: flow.trace, transcript: transcript,
            podExpression: "secondWindow")
        )
      }
      let (firstWindow, secondWindow) = (first.pod, second.pod)
      write("  [window 1] > start")
      try first.flow.start()
      write("  [window 2] > start")
      try second.flow.start()

      let (firstSession, secondSession) = flow.trace.show(
        """
        firstWindow.resolve(signUpSessionProvider)
          !== secondWindow.resolve(signUpSessionProvider)
        """
      ) {
        (firstWindow.resolve(signUpSessionProvider), secondWindow.resolve(signUpSessionProvider))
      }
      let (firstLabel, secondLabel) = (
        first.flow.trace.label(signUpSessionProvider.name),
        second.flow.trace.label(signUpSessionProvider.name)
      )
      write(
        firstSession !== secondSession
          ? "  ✓ a session per window: \(firstLabel) and \(secondLabel) are two instances"
          : "  ✗ both windows hold \(firstLabel)")
      let shared = try await flow.trace.showAwaiting(
        """
        try await firstWindow.resolve(signUpConfigurationProvider)
          === secondWindow.resolve(signUpConfigurationProvider)
        """
      ) {
        try await firstWindow.resolve(signUpConfigurationProvider)
          === secondWindow.resolve(signUpConfigurationProvider)
      }
      let configuration = flow.trace.label(signUpConfigurationProvider.name)
      write(
        shared
          ? "  ✓ one singleton for both: the app's \(configuration) is the same instance"
          : "  ✗ the windows hold different configurations")

      write("  (trace off while window 1 fills in its sign-up and window 2 its email)")
      flow.trace.isEnabled = false
      write("  [window 1] > email grace@example.com")
      try first.flow.enterEmail("grace@example.com")
      write("  [window 1] > profile Grace Hopper")
      try first.flow.enterName("Grace Hopper")
      write("  [window 2] > email alan@example.com")
      try second.flow.enterEmail("alan@example.com")
      flow.trace.isEnabled = true

      write("  [window 1] > finish")
      try await first.flow.finish()
      write("  [window 2] after window 1 finished")
      let kept = flow.trace.show("secondWindow.resolve(signUpSessionProvider)") {
        secondWindow.resolve(signUpSessionProvider)
      }
      write(
        kept === secondSession && kept.email == "alan@example.com"
          ? "  ✓ window 2 is untouched:\n    \(second.flow.summary)"
          : "  ✗ window 2 lost its sign-up")
    }

    let fake = RecordingHTTPClient()
    var testFlow: SignUpFlow?
    await step(
      8, "A test runs the same screens against a fake server.",
      why: """
        Why: a test must not reach the network or disturb the app's pod. It makes a pod of
        its own that overrides HTTPClient with a fake; that pod keeps and numbers its own
        instances, from #1, so its HTTPClient#1 is the fake.
        """
    ) {
      let testTrace = TraceObserver(transcript: transcript)
      let testPod = testTrace.show(
        """
        let fake = RecordingHTTPClient()
        let testPod = Pod(overrides: [httpClientProvider.override(withValue: fake)])
        """,
        override: "added"
      ) { Pod(overrides: [httpClientProvider.override(withValue: fake)], observer: testTrace) }
      let flow = SignUpFlow(
        pod: testPod, trace: testTrace, transcript: transcript, podExpression: "testPod")
      testFlow = flow
      write("  (trace off while the test repeats steps 1, 2 and 4)")
      testTrace.isEnabled = false
      try flow.start()
      try flow.enterEmail("test@example.com")
      try flow.enterName("Test User")
      testTrace.isEnabled = true
      try await flow.finish()
      write("  the fake recorded the requests a test would check:")
      for request in fake.requests { write("    " + request) }
    }

    await step(
      9, "The test removes its override.",
      why: """
        Why: nothing built from the fake may outlive it. Removing the override discards the
        fake and everything built from it; the next resolve builds the app's own client.
        """
    ) {
      guard let testFlow else { return }
      let trace = testFlow.trace
      let testPod = testFlow.pod
      trace.show("testPod.removeOverrideProvider(httpClientProvider)", override: "removed") {
        testPod.removeOverrideProvider(httpClientProvider)
      }
      let service = trace.show("testPod.resolve(signUpServiceProvider)") {
        testPod.resolve(signUpServiceProvider)
      }
      write(
        "  \(trace.label(signUpServiceProvider.name)) sends through \(type(of: service.client))")
    }

    await step(
      10, "The app's pod now.",
      why: """
        Why: to see what the app holds between sign-ups: every cached instance and what it
        was built from (an instance <- its dependencies). Only the second sign-up is left.
        """
    ) {
      for line in flow.trace.labeledGraphLines(of: pod) { write("    " + line) }
      write("  (swift run ExampleCLI --graph mermaid, or --graph dot, draws it.)")
    }

    write("")
    write("Try it yourself: swift run ExampleCLI --interactive")
    return ok
  }
}
