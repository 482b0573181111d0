import Dispatch
import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Request pods and their children that outlive what made them: short-lived threads make a
/// request pod of the app's pod kept in a global, and sometimes a child of it, use them or not,
/// hand them on and end. Other threads use them for the first time or again (a request and its
/// child on several threads at once), release them, shut some down, and keep the contexts of
/// what they built past the pods. The app's pod in the global is replaced by a new one now
/// and then, while its requests live on, and is cleared and overridden meanwhile; async
/// resolves through requests and their children run beside all of it. Whatever the pods build is disposed of once, and nothing is left alive:
/// a request's handler keeps its context, which keeps the request's tables, so a shut-down
/// request's record that held on to its handler's cleanup kept the handler for good.
enum OrphanedRequests {
  static let report = Report(scenario: "orphaned-requests")
  static let configs = Ledger("config", exact: false, report: report)
  static let handlers = Ledger("handler", exact: false, report: report)
  static let steps = Ledger("step", exact: false, report: report)

  struct ConfigScope: ProviderScope {}
  struct RequestScope: ProviderScope {
    var children: [any ProviderScope] { [StepScope()] }
  }
  struct StepScope: ProviderScope {}

  final class Config: Tracked, @unchecked Sendable {}
  /// Keeps its builder's context, which is used after the request's pod has gone.
  final class Handler: Tracked, @unchecked Sendable {
    let config: Config
    let context: BuildContext
    init(config: Config, context: BuildContext) {
      self.config = config
      self.context = context
      super.init(handlers)
    }
  }
  final class Step: Tracked, @unchecked Sendable {
    let handler: Handler
    init(handler: Handler) {
      self.handler = handler
      super.init(steps)
    }
  }

  /// A request pod, and sometimes a child of it, as a thread that has ended may have left them.
  struct Request: @unchecked Sendable {
    let pod: Pod
    let child: Pod?
  }

  static let app = Locked<Pod?>(nil)
  static let handedOn = Locked<[Request]>([])
  static let keptContexts = Locked<[BuildContext]>([])

  static let config = Provider(
    scope: ConfigScope(), name: "config", onDiscard: { $0.discarded() }
  ) { _ in Config(configs) }
  static let handler = Provider(
    scope: RequestScope(), name: "handler", onDiscard: { $0.discarded() }
  ) { context in Handler(config: context.resolve(config), context: context) }
  static let step = Provider(
    scope: StepScope(), name: "step", onDiscard: { $0.discarded() }
  ) { context in Step(handler: context.resolve(handler)) }
  /// Cached in the request: an async build that its pod holds, and shared sections wait out.
  static let asyncConfig = AsyncProvider(scope: RequestScope(), name: "async-config") {
    context in
    await Task.yield()
    return context.resolve(config)
  }

  static let scenario = Scenario(
    name: "orphaned-requests",
    summary:
      "request pods and their children outliving their threads, their app pod and themselves",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    app.withLock { $0 = Pod() }
    let deadline = Deadline(after: duration)
    onThreads(6) { index in
      var operations = 0
      var random = FastRandom(seed: index + 71)
      while !deadline.hasPassed {
        switch index {
        case 0:
          change(random.next(8))
          operations += 1
          if random.next(4) == 0 { sched_yield() }
        case 1, 2:
          // Short-lived threads that make requests and hand them on.
          let seed = random.next(1_000) * 3
          onThreads(3) { thread in make(seed: seed + thread) }
          operations += 3
        case 3, 4:
          operations += use(random.next(16))
        default:
          operations += resolveAsync()
        }
      }
      report.add(operations: operations)
    }
    handedOn.withLock { $0 = [] }
    keptContexts.withLock { $0 = [] }
    app.withLock { $0 = nil }
    await settle([configs, handlers, steps])
  }

  private static func change(_ which: Int) {
    switch which {
    case 0:
      // The app's pod is let go of (here, or by whichever thread holds it last) while its
      // requests and contexts kept from them live on.
      let old = app.withLock { pod -> Pod? in
        let old = pod
        pod = Pod()
        return old
      }
      withExtendedLifetime(old) {}
    case 1, 2:
      app.value?.overrideProvider(config) { _ in Config(configs) }
    case 3:
      app.value?.removeOverrideProvider(config)
    default:
      app.value?.clearCachedInstances(forScope: ConfigScope())
    }
  }

  /// On a thread that ends after this: a request pod, used here or not, and handed on.
  private static func make(seed: Int) {
    guard let app = app.value else { return }
    let pod = Pod(parent: app, scopes: [RequestScope()])
    var child: Pod?
    if seed % 3 == 0 { child = Pod(parent: pod, scopes: [StepScope()]) }
    if seed % 2 == 0 { checkHandler(of: pod, child: child) }
    if seed % 4 == 0, let child { checkStep(of: child, in: pod) }
    handedOn.withLock { requests in
      requests.append(Request(pod: pod, child: child))
      if requests.count > 64 { requests.removeFirst(8) }
    }
  }

  /// Takes a request that another thread handed on, uses it, and lets go of it (or shuts it
  /// down) here.
  private static func use(_ choice: Int) -> Int {
    if choice == 0 {
      // A context kept past its pod: it resolves like the pod would.
      let context = keptContexts.withLock { $0.popLast() }
      if let context {
        _ = context.resolve(config)
        _ = context.resolve(handler)
      }
      return 1
    }
    if choice >= 13 {
      // A request with a child, used here while it stays handed on: other threads use the same
      // pods at once. Never one without a child, which another thread may be shutting down.
      let shared = handedOn.withLock { requests in
        requests.isEmpty ? nil : requests[choice % requests.count]
      }
      guard let shared, let child = shared.child else { return 0 }
      checkStep(of: child, in: shared.pod)
      checkHandler(of: shared.pod, child: child)
      return 2
    }
    guard let request = handedOn.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
      sched_yield()
      return 0
    }
    if let child = request.child { checkStep(of: child, in: request.pod) }
    let kept = checkHandler(of: request.pod, child: request.child)
    if choice == 1, request.child == nil {
      // A shutdown instead of a release; the handler's context is not kept, since a resolve
      // through a shut-down pod stops the program.
      request.pod.shutDownAndWait(report: report)
      return 3
    }
    if choice < 6 {
      keptContexts.withLock { contexts in
        contexts.append(kept.context)
        if contexts.count > 64 { contexts.removeFirst(8) }
      }
    }
    return 2
  }

  /// An async resolve through a request, which closes the tree's shared sections meanwhile.
  private static func resolveAsync() -> Int {
    guard let request = handedOn.withLock({ $0.last }) else {
      sched_yield()
      return 0
    }
    let done = DispatchSemaphore(value: 0)
    Task.detached {
      do {
        _ = try await (request.child ?? request.pod).resolve(asyncConfig)
      } catch is ResolveAfterShutdownError {
        // Another thread shut the request down meanwhile.
      } catch {
        report.check(false, "an async resolve through a request failed: \(error)")
      }
      done.signal()
    }
    done.wait()
    return 1
  }

  @discardableResult
  private static func checkHandler(of pod: Pod, child: Pod?) -> Handler {
    let built = pod.resolve(handler)
    // Built through the child, if that resolved it first: the context is the child's.
    let from = built.context.pod
    report.check(
      from === pod || (child != nil && from === child),
      "a request's handler has another pod's context")
    return built
  }

  private static func checkStep(of child: Pod, in pod: Pod) {
    let built = child.resolve(step)
    let from = built.handler.context.pod
    report.check(
      from === pod || from === child,
      "a request's child built its step from a handler of another pod")
  }
}
