import ProviderPod

/// The default mode: a sign-up walked through step by step, printing what the pod does.
enum ScriptedTour {
  /// Runs the tour; returns false if any step was refused (which would be a bug).
  @discardableResult
  static func run(transcript: Transcript) async -> Bool {
    let trace = TraceObserver(transcript: transcript)
    let pod = Pod(observer: trace)
    let flow = SignUpFlow(pod: pod, transcript: transcript)
    let write = { (line: String) in transcript.write(line) }

    write(
      """
      ProviderPod demo: a sign-up flow
      ================================
      Every dependency below is a global provider declared next to its type; there is no
      registration. Each provider has a scope that decides how long its instance lives:

        SingletonScope        AppConfiguration, HTTPClient, AnalyticsLog   the whole app
        SignUpFlowScope       SignUpSession, SignUpService                 one sign-up
        ├─ EmailStepScope     EmailValidator, EmailStepViewModel           the email screen
        └─ ProfileStepScope   NameValidator, ProfileStepViewModel          the profile screen

      Clearing a scope discards its instances and those of its child scopes, and anything
      built from them. Instances carry a number (SignUpSession#2) so you can see what was
      reused and what is new.   + built   = reused   - discarded   ~ overridden
      """)

    var ok = true
    write("")
    write(
      "0. The app starts and loads its sign-up configuration (an AsyncProvider).".padded(to: 60))
    do {
      // Two screens ask at once: the load runs once, both get its result.
      async let first = pod.resolve(signUpConfigurationProvider)
      async let second = pod.resolve(signUpConfigurationProvider)
      let (a, b) = try await (first, second)
      write("  two screens asked at once; both got \(a) and \(b): one load, shared")
    } catch {
      transcript.write("error: \(error)", to: .error)
      ok = false
    }

    func step(_ number: Int, _ narration: String, _ command: String, _ action: () throws -> Void) {
      write("")
      write("\(number). \(narration)".padded(to: 60) + "> \(command)")
      do { try action() } catch {
        transcript.write("error: \(error)", to: .error)
        ok = false
      }
    }

    step(1, "The user taps \"Sign up\".", "start") { try flow.start() }
    step(2, "They enter their email and continue.", "email ada@example.com") {
      try flow.enterEmail("ada@example.com")
    }
    step(3, "They go back from the profile screen.", "back") { try flow.back() }
    step(4, "They fill in the profile screen again.", "profile Ada Lovelace") {
      try flow.enterName("Ada Lovelace")
    }
    step(5, "They finish.", "finish") { _ = try flow.finish() }
    step(6, "Another sign-up starts: new flow, same singletons.", "start") { try flow.start() }

    write("")
    write("7. A test builds the same graph on a second pod, with a fake HTTP client:")
    write(
      "     let testPod = Pod(overrides: [httpClientProvider.override { _ in RecordingHTTPClient() }])"
    )
    write("   (each pod has its own instances, so the test pod numbers them from 1 again)")
    let testPod = Pod(
      overrides: [
        httpClientProvider.override { pod in
          RecordingHTTPClient(label: pod.label("RecordingHTTPClient", provider: "HTTPClient"))
        }
      ],
      observer: trace)
    let testFlow = SignUpFlow(pod: testPod, transcript: transcript)
    do {
      try testFlow.start()
      try testFlow.enterEmail("test@example.com")
      try testFlow.enterName("Test User")
      let service = testPod.resolve(signUpServiceProvider)
      write("  \(service) on the test pod talks to \(service.client); the live pod's is untouched.")
      write("")
      write("8. The test removes its override: what was built from the fake goes too.")
      write("     testPod.removeOverrideProvider(httpClientProvider)")
      testPod.removeOverrideProvider(httpClientProvider)
      try testFlow.finish()
    } catch {
      transcript.write("error: \(error.message)", to: .error)
      ok = false
    }

    write("")
    write("9. The live pod's dependency graph now (an instance <- what it was built from):")
    for line in pod.labeledGraphLines() {
      write("     " + line)
    }
    write("   (swift run ExampleCLI --graph mermaid, or --graph dot, draws it.)")
    write("")
    write(
      """
      What happened: the singletons were built once and reused by both sign-ups. Finishing
      cleared the flow scope and, through the scope tree, both step scopes, so the second
      sign-up started with an empty SignUpSession#2 and fresh screens, not Ada's leftovers:
      one clear, and nothing stale survives. The test pod had its own instances and its own
      fake, and removing the fake also discarded what had been built from it.
      Try it yourself: swift run ExampleCLI --interactive
      """)
    return ok
  }
}
