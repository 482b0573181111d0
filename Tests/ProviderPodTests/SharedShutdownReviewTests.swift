import Dispatch
import Testing

@testable import ProviderPod

// A request pod (a child of the app's pod) shuts down beside its siblings' work, in a shared
// section of the tree's lock; a pod further down (a grandchild) still shuts down alone. What
// an app sees must not depend on which way the shutdown went: each test here runs the same
// story through a child of the app's pod and through a grandchild, and compares what each
// told its observers, in what order, and what its hooks did.

/// What a story told, line by line, from any thread.
private final class Transcript: Sendable {
  private let lines = Shared<[String]>([])

  func add(_ line: String) { lines.withLock { $0.append(line) } }
  var all: [String] { lines.withLock { $0 } }
}

/// An observer that writes the events it is told into a transcript, prefixed by whose it is.
private final class TranscriptObserver: PodObserver {
  let transcript: Transcript
  let who: String

  init(_ who: String, into transcript: Transcript) {
    self.transcript = transcript
    self.who = who
  }

  func pod(_ pod: Pod, didReport event: PodEvent) {
    transcript.add("\(who): \(event)")
  }
}

/// An instance that writes its deinit into a transcript.
private final class Noted: Sendable {
  let name: String
  let transcript: Transcript

  init(_ name: String, _ transcript: Transcript) {
    self.name = name
    self.transcript = transcript
  }

  deinit { transcript.add("deinit \(name)") }
}

/// The two places a request's pod can be: a child of the app's pod, which shuts down in a
/// shared section, and a grandchild, which shuts down alone.
private enum Placement: CaseIterable {
  case childOfApp
  case grandchild

  /// A pod owning `scopes` in this place below `app`, with the pod between them if any.
  func request(
    below app: Pod, scopes: [any ProviderScope], observer: (any PodObserver)?
  ) -> (request: Pod, between: Pod?) {
    switch self {
    case .childOfApp:
      return (Pod(parent: app, scopes: scopes, observer: observer), nil)
    case .grandchild:
      let between = Pod(parent: app)
      return (Pod(parent: between, scopes: scopes, observer: observer), between)
    }
  }
}

@Suite("A request pod's shared shutdown does what an exclusive one does")
struct SharedShutdownReviewTests {
  /// A request's own instance, with no hook, is let go of by its shutdown: its observer hears
  /// of the discard, then the instance goes, as for any pod.
  private func discardThenDeinit(_ placement: Placement) async throws -> [String] {
    let transcript = Transcript()
    let session = Provider(scope: StepScope(), name: "session") { _ in
      Noted("session", transcript)
    }
    let app = Pod()
    let (request, between) = placement.request(
      below: app, scopes: [StepScope()],
      observer: TranscriptObserver("request", into: transcript))
    _ = request.resolve(session)
    transcript.add("shutdown begins")
    let before = app.exclusiveSectionsEntered
    try await request.shutdown()
    if placement == .childOfApp {
      // The story must be the shared one, or it tells nothing.
      #expect(app.exclusiveSectionsEntered == before)
    }
    transcript.add("shutdown returned")
    #expect(app.invariantViolations == [])
    withExtendedLifetime(between) {}
    return transcript.all.filter {
      $0 != "request: \(PodEvent.built(provider: "session", scope: "StepScope"))"
    }
  }

  @Test("a request pod's shutdown reports a discard before the instance without a hook goes")
  func discardReportedBeforeTheInstanceGoes() async throws {
    let child = try await discardThenDeinit(.childOfApp)
    let grandchild = try await discardThenDeinit(.grandchild)
    #expect(child == grandchild)
    #expect(
      child == [
        "shutdown begins",
        "request: \(PodEvent.discarded(provider: "session", scope: "StepScope", reason: .podShutDown))",
        "deinit session",
        "shutdown returned",
      ])
  }

  /// An app singleton first built through the request pod, from the request's own session,
  /// while the request shuts down. Returns which observer heard of the singleton's build, and
  /// whether the app cached it.
  private func appBuildFromRequestInstance(_ placement: Placement) async throws -> [String] {
    let transcript = Transcript()
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let session = Provider(scope: StepScope(), name: "session") { _ in
      Instance("session", serial: 0)
    }
    let summaries = Counter()
    let summary = Provider<Instance>(name: "summary") { pod in
      let serial = summaries.next()
      let session = pod.resolve(session)
      if serial == 1 {
        entered.signal()
        _ = waitWithWatchdog(gate)
      }
      return Instance("summary", serial: serial, dependencies: [session])
    }
    let app = Pod(observer: TranscriptObserver("app", into: transcript))
    let (request, between) = placement.request(
      below: app, scopes: [StepScope()],
      observer: TranscriptObserver("request", into: transcript))
    let done = startThread { _ = request.resolve(summary) }
    guard waitOrFail(entered, "the summary's build") else { return [] }
    let before = app.exclusiveSectionsEntered
    try await request.shutdown()
    let shared = app.exclusiveSectionsEntered == before
    if placement == .childOfApp {
      transcript.add("shutdown took \(shared ? "a shared section" : "the exclusive side")")
    }
    gate.signal()
    guard waitOrFail(done, "the summary's thread") else { return [] }
    // Built from a request's session that went with the request: the app keeps none of it.
    transcript.add("app builds summary #\(app.resolve(summary).serial)")
    #expect(app.invariantViolations == [])
    withExtendedLifetime(between) {}
    return transcript.all.filter { $0.contains("summary") }
  }

  @Test("a request's shutdown stops an app build made from its instance, as a grandchild's does")
  func shutdownStopsAppBuildFromRequestInstance() async throws {
    let child = try await appBuildFromRequestInstance(.childOfApp)
    let grandchild = try await appBuildFromRequestInstance(.grandchild)
    #expect(child.filter { !$0.hasPrefix("shutdown took") } == grandchild)
    #expect(
      grandchild == [
        "app: \(PodEvent.built(provider: "summary", scope: "SingletonScope"))",
        "app: \(PodEvent.built(provider: "summary", scope: "SingletonScope"))",
        """
        app: \(PodEvent.captiveDependency(
          holder: "summary", holderScope: "SingletonScope", dependency: "session",
          dependencyScope: "StepScope"))
        """,
        "app builds summary #2",
      ])
  }
}

/// What a hook of the stories below throws.
private struct HookFailure: Error, CustomStringConvertible {
  let provider: String
  var description: String { "\(provider) failed to close" }
}

extension SharedShutdownReviewTests {
  /// A request with a hook of each kind, built one from the other: a main-actor screen from a
  /// handler with a synchronous hook, from a connection whose asynchronous hook throws.
  @MainActor
  private func hooksOfEveryKind(_ placement: Placement) async -> [String] {
    let transcript = Transcript()
    let connection = Provider(
      scope: StepScope(), name: "connection",
      onDiscard: { (_: Resource) in
        await Task.yield()
        transcript.add("close connection")
        throw HookFailure(provider: "connection")
      }
    ) { _ in Resource("connection") }
    let handler = Provider(
      scope: StepScope(), name: "handler",
      onDiscard: { (_: Resource) in transcript.add("close handler") }
    ) { pod in Resource("handler", builtFrom: [pod.resolve(connection)]) }
    let screen = MainActorProvider(
      scope: StepScope(), name: "screen",
      onDiscard: { (_: ScreenModel) in transcript.add("close screen") }
    ) { pod in ScreenModel(serial: 1, instance: Instance(pod.resolve(handler).name, serial: 1)) }
    let app = Pod()
    let (request, between) = placement.request(
      below: app, scopes: [StepScope()],
      observer: TranscriptObserver("request", into: transcript))
    _ = request.resolve(screen)
    transcript.add("shutdown begins")
    do {
      try await request.shutdown(timeout: .seconds(hangWatchdogSeconds))
      transcript.add("shutdown returned")
    } catch {
      let failures = error.failures.map { "\($0.provider): \($0.error)" }
      transcript.add("shutdown threw: \(failures), unfinished: \(error.unfinished)")
    }
    #expect(app.invariantViolations == [])
    #expect(app.childCount == (placement == .childOfApp ? 0 : 1))
    withExtendedLifetime(between) {}
    // The discards of one shutdown come in no particular order, for any pod; the hooks in
    // theirs.
    let lines = transcript.all.filter { !$0.hasPrefix("request: built") }
    let discards = lines.filter { $0.hasPrefix("request: discarded") }
    return discards.sorted() + lines.filter { !$0.hasPrefix("request: discarded") }
  }

  @Test("main-actor, synchronous and throwing hooks run and report as a grandchild's do")
  @MainActor
  func hooksOfEveryKindAsForAGrandchild() async {
    let child = await hooksOfEveryKind(.childOfApp)
    let grandchild = await hooksOfEveryKind(.grandchild)
    #expect(child == grandchild)
    #expect(child.filter { $0.hasPrefix("request: discarded") }.count == 3)
    #expect(
      child.filter { $0.hasPrefix("close") } == [
        "close screen", "close handler", "close connection",
      ]
    )
    #expect(child.last?.hasPrefix("shutdown threw") == true)
    #expect(child.last?.contains("connection failed to close") == true)
  }

  /// A request pod shut down before its first use, then asked for its graph, watched and
  /// overridden: a pod that is gone in every way.
  private func usedOnlyAfterShutdown(_ placement: Placement) async throws -> [String] {
    let transcript = Transcript()
    let session = Provider(scope: StepScope(), name: "session") { _ in
      Instance("session", serial: 0)
    }
    let app = Pod()
    let (request, between) = placement.request(
      below: app, scopes: [StepScope()],
      observer: TranscriptObserver("request", into: transcript))
    let before = app.exclusiveSectionsEntered
    try await request.shutdown()
    if placement == .childOfApp { #expect(app.exclusiveSectionsEntered == before) }
    transcript.add("alive: \(request.engine.isAlive)")
    transcript.add("graph: \(request.dependencyGraph().nodes.count) nodes")
    var instances = request.instances(of: session).makeAsyncIterator()
    transcript.add("watched: \(String(describing: await instances.next()))")
    request.overrideProvider(session) { _ in Instance("fake session", serial: 1) }
    request.removeOverrideProvider(session)
    request.clearCachedInstances(forScope: StepScope())
    try await request.shutdown()
    transcript.add("children of the app: \(app.childCount)")
    #expect(app.invariantViolations == [])
    withExtendedLifetime(between) {}
    return transcript.all
  }

  @Test("a request pod shut down before its first use is gone as a grandchild would be")
  func shutDownBeforeFirstUseAsForAGrandchild() async throws {
    let child = try await usedOnlyAfterShutdown(.childOfApp)
    let grandchild = try await usedOnlyAfterShutdown(.grandchild)
    #expect(
      child.filter { !$0.hasPrefix("children") } == grandchild.filter { !$0.hasPrefix("children") })
    #expect(child.contains("alive: false"))
    #expect(child.contains("children of the app: 0"))
  }

  /// Two tasks shut one request pod down at once while its asynchronous hook is held: the
  /// hook runs once, and each call returns only once it has.
  private func shutDownTwiceAtOnce(_ placement: Placement) async -> [String] {
    let transcript = Transcript()
    let hookStarted = OneShot()
    let release = OneShot()
    let connection = Provider(
      scope: StepScope(), name: "connection",
      onDiscard: { (_: Resource) in
        transcript.add("close connection")
        hookStarted.set()
        await release.wait()
      }
    ) { _ in Resource("connection") }
    let app = Pod()
    let (request, between) = placement.request(below: app, scopes: [StepScope()], observer: nil)
    _ = request.resolve(connection)
    let calls = (0..<2).map { _ in
      Task {
        do {
          try await request.shutdown()
        } catch {
          transcript.add("a shutdown threw \(error)")
        }
        // Returned before the hook ended: the shutdown did not wait for it.
        if !release.isSet { transcript.add("a shutdown returned early") }
      }
    }
    await withWatchdog("the connection's hook to start") { await hookStarted.wait() }
    release.set()
    for call in calls { await call.value }
    #expect(app.invariantViolations == [])
    withExtendedLifetime(between) {}
    return transcript.all
  }

  @Test("a request pod shut down twice at once closes once and both calls wait, as a grandchild")
  func shutDownTwiceAtOnceAsForAGrandchild() async {
    let child = await shutDownTwiceAtOnce(.childOfApp)
    let grandchild = await shutDownTwiceAtOnce(.grandchild)
    #expect(child == grandchild)
    #expect(child == ["close connection"])
  }
}

extension SharedShutdownReviewTests {
  /// An app singleton first built through the request pod, which reads the request's session
  /// only after the request has shut down. Returns the serial of the summary the app then
  /// hands out.
  private func appBuildReadsRequestAfterShutdown(_ placement: Placement) async throws -> Int {
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let sessions = Counter()
    let session = Provider(scope: StepScope(), name: "session") { _ in
      Instance("session", serial: sessions.next())
    }
    let summaries = Counter()
    let summary = Provider<Instance>(name: "summary") { pod in
      let serial = summaries.next()
      if serial == 1 {
        entered.signal()
        _ = waitWithWatchdog(gate)
      }
      return Instance("summary", serial: serial, dependencies: [pod.resolve(session)])
    }
    let app = Pod()
    let (request, between) = placement.request(
      below: app, scopes: [StepScope()], observer: nil)
    let done = startThread { _ = request.resolve(summary) }
    guard waitOrFail(entered, "the summary's build") else { return 0 }
    try await request.shutdown()
    gate.signal()
    guard waitOrFail(done, "the summary's thread") else { return 0 }
    #expect(app.invariantViolations == [])
    withExtendedLifetime(between) {}
    return app.resolve(summary).serial
  }

  @Test("an app build that reads a shut-down request's scope after its shutdown is not cached")
  func appBuildFromShutDownRequestScopeNotCached() async throws {
    for placement in Placement.allCases {
      // Built from the request's session: it must not outlive the request in the app.
      #expect(try await appBuildReadsRequestAfterShutdown(placement) == 2, "\(placement)")
    }
  }
}

/// An observer that, told of a reuse of `reused`, resolves `config` through the pod it
/// observes: from inside the build that read it.
private final class ResolvingObserver: PodObserver {
  let transcript: Transcript
  let config: Provider<Instance>
  let reused: String

  init(_ transcript: Transcript, resolving config: Provider<Instance>, on reused: String) {
    self.transcript = transcript
    self.config = config
    self.reused = reused
  }

  func pod(_ pod: Pod, didReport event: PodEvent) {
    transcript.add("\(event)")
    if case .reused(reused, _) = event {
      transcript.add("observer read \(pod.resolve(config))")
    }
  }
}

extension SharedShutdownReviewTests {
  /// A request whose observer resolves through it while it builds, then a clear of what the
  /// observer read, then the request's shutdown.
  private func observerResolvesDuringBuild(_ placement: Placement) async throws -> [String] {
    let transcript = Transcript()
    let configs = Counter()
    let config = Provider<Instance>(scope: FlowScope(), name: "config") { _ in
      Instance("config", serial: configs.next())
    }
    let connection = instanceProvider("connection", scope: StepScope())
    let handlers = Counter()
    let handler = Provider<Instance>(scope: StepScope(), name: "handler") { pod in
      Instance("handler", serial: handlers.next(), dependencies: [pod.resolve(connection)])
    }
    let app = Pod()
    _ = app.resolve(config)
    let (request, between) = placement.request(
      below: app, scopes: [StepScope()],
      observer: ResolvingObserver(transcript, resolving: config, on: "connection"))
    transcript.add("connection \(request.resolve(connection))")
    transcript.add("handler \(request.resolve(handler))")
    // What the observer read went into the handler: a clear of it reaches the handler.
    app.clearCachedInstances(forScope: FlowScope())
    transcript.add("handler \(request.resolve(handler))")
    let beforeShutdown = transcript.all.count
    try await request.shutdown()
    #expect(app.invariantViolations == [])
    withExtendedLifetime(between) {}
    // The discards of one shutdown come in no particular order, for any pod.
    let lines = transcript.all
    return lines.prefix(beforeShutdown) + lines.dropFirst(beforeShutdown).sorted()
  }

  @Test("an observer that resolves through its request pod while it builds, as a grandchild's")
  func observerResolvingDuringBuildAsForAGrandchild() async throws {
    let child = try await observerResolvesDuringBuild(.childOfApp)
    let grandchild = try await observerResolvesDuringBuild(.grandchild)
    #expect(child == grandchild)
    #expect(child.contains("handler handler#2"))
  }
}
