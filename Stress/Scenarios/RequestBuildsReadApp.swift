import Dispatch
import ProviderPod

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Request pods on ten threads, sixteen threads in all, whose builds read the app's instances
/// of every kind the pod stores differently (a class with no hook, a class with a hook, a
/// struct holding a class, an existential holding either, a singleton built from a scoped
/// one, a weakly cached class), one of them twice in the same build, some from a build that
/// then fails; while other threads clear those instances,
/// override them on the app's pod and take the overrides away, resolve an async instance of the
/// app, release request pods made on other threads, and resolve through contexts kept past
/// their builds, and through the pods those contexts give while their own threads let go of
/// them. Some requests are observed, some have a child of their own that builds the
/// handler. Each value carries a check of its own contents, so a copy of freed storage shows
/// as a broken check (or a crash under ASan); once a change of the plain class has returned,
/// no request that starts afterwards may be built from the one it replaced.
enum RequestBuildsReadApp {
  static let report = Report(scenario: "request-builds-read-app")
  static let parts = Ledger("app-part", exact: false, report: report)
  static let handlers = Ledger("handler", exact: false, report: report)
  static let asyncs = Ledger("async-part", exact: false, report: report)

  static let app = Locked<Pod?>(nil)

  struct AppScope: ProviderScope {}
  struct RequestScope: ProviderScope {}

  protocol Intact: Sendable { var isIntact: Bool { get } }

  final class Part: Tracked, Intact, @unchecked Sendable {
    let check = 0x5EED
    var isIntact: Bool { check == 0x5EED && serial > 0 }
  }

  /// A struct whose copy retains a class and a string buffer.
  struct Pair: Intact {
    let part: Part
    let text: String
    init(_ part: Part) {
      self.part = part
      text = "pair-\(part.serial)"
    }
    var isIntact: Bool { part.isIntact && text == "pair-\(part.serial)" }
  }

  final class Handler: Tracked, @unchecked Sendable {
    let plain: Part
    let parts: [any Intact]
    init(plain: Part, parts: [any Intact]) {
      self.plain = plain
      self.parts = parts
      super.init(handlers)
    }
    var isIntact: Bool { plain.isIntact && parts.allSatisfy(\.isIntact) }
  }

  /// Stored as the instance itself: no hook, a class.
  static let plainProvider = Provider<Part>(name: "app-plain") { _ in Part(parts) }
  /// Stored in a box: its hook.
  static let hookedProvider = Provider<Part>(
    name: "app-hooked", onDiscard: { $0.discarded() }
  ) { _ in Part(parts) }
  static let pairProvider = Provider<Pair>(scope: AppScope(), name: "app-pair") { _ in
    Pair(Part(parts))
  }
  static let existentialProvider = Provider<any Intact>(name: "app-existential") { _ in
    let part = Part(parts)
    return part.serial % 2 == 0 ? part : Pair(part)
  }
  /// A singleton built from a scoped instance: a clear of the scope discards it too.
  static let derivedProvider = Provider<Pair>(name: "app-derived") { context in
    Pair(context.resolve(pairProvider).part)
  }
  /// Cached only while something outside the pod holds it: read under the exclusive lock.
  static let weakProvider = Provider<Part>(scope: WeakScope(), name: "app-weak") { _ in
    Part(parts)
  }
  struct Refused: Error {}
  /// A request's build that reads the app's values and then fails half the time: what it was
  /// built from goes with its failed build.
  static let failingProvider = ThrowingProvider<Part>(
    scope: RequestScope(), name: "request-failing"
  ) { context in
    let plain = context.resolve(plainProvider)
    let pair = context.resolve(pairProvider)
    if plain.serial % 2 == 1 { throw Refused() }
    return pair.part
  }
  static let asyncProvider = AsyncProvider<Part>(name: "app-async") { _ in
    await Task.yield()
    return Part(asyncs)
  }

  /// Contexts of handler builds, resolved through by another thread once the build is over.
  static let keptContexts = Locked<[BuildContext]>([])
  /// Request pods made on one thread, let go of on another.
  static let handedOver = Locked<[(Pod, Handler)]>([])

  static let handlerProvider = Provider<Handler>(scope: RequestScope(), name: "handler") {
    context in
    let plain = context.resolve(plainProvider)
    // The same app instance twice in one build: recorded once, copied twice.
    let again = context.resolve(plainProvider)
    let parts: [any Intact] = [
      again, context.resolve(hookedProvider), context.resolve(pairProvider),
      context.resolve(existentialProvider), context.resolve(derivedProvider),
      context.resolve(weakProvider),
    ]
    if let part = try? context.resolve(failingProvider) {
      report.check(part.isIntact, "a request's failing build read a broken struct")
    }
    // Not from a request that is shut down: a shut-down pod builds nothing, and stops the
    // program that resolves through it.
    if plain.serial % 8 == 0, !Serving.shutsDown {
      // Half of them know their pod before they are kept: asked from the build.
      if plain.serial % 16 == 0 {
        report.check(context.pod != nil, "a build's context did not know its live pod")
      }
      keptContexts.withLock { if $0.count < 64 { $0.append(context) } }
    }
    return Handler(plain: plain, parts: parts)
  }

  /// Whether the request being served is shut down at its end.
  enum Serving {
    @TaskLocal static var shutsDown = false
  }

  /// The oldest serial of the plain class a request that starts now may see.
  static let plainFloor = Floor()
  /// Whether the app's pod overrides the plain class; only one thread changes that.
  static let plainOverridden = Locked(false)

  final class QuietObserver: PodObserver, @unchecked Sendable {
    func pod(_ pod: Pod, didReport event: PodEvent) {}
  }

  static let scenario = Scenario(
    name: "request-builds-read-app",
    summary: "request builds on 10 of 16 threads reading app values of every kind beside changes",
    report: report, run: { duration, _ in await run(for: duration) })

  static func run(for duration: Duration) async {
    do {
      let pod = Pod()
      app.withLock { $0 = pod }
      race(in: pod, until: Deadline(after: duration))
      app.withLock { $0 = nil }
      plainOverridden.withLock { $0 = false }
      keptContexts.withLock { $0 = [] }
      handedOver.withLock { $0 = [] }
    }
    await settle([parts, handlers, asyncs])
  }

  private static func race(in pod: Pod, until deadline: Deadline) {
    let served = Locked(0)
    onThreads(16) { index in
      var operations = 0
      var requests = 0
      var random = FastRandom(seed: index + 101)
      while !deadline.hasPassed {
        // Counted only when something was done: the hand-over threads often find nothing.
        var did = true
        switch index {
        case 10: clear(pod, random.next(4))
        case 11: override(pod, random.next(6))
        case 12: resolveAsync(pod)
        case 13: did = releaseHandedOver()
        case 14: did = resolveThroughKeptContext()
        case 15:
          // A change and a release at once, on one more thread than the others.
          if random.next(2) == 0 { clear(pod, random.next(4)) } else { did = releaseHandedOver() }
        default:
          let style = random.next(8)
          Serving.$shutsDown.withValue(style == 6) { serve(style) }
          requests += 1
        }
        if did { operations += 1 }
      }
      report.add(operations: operations)
      served.withLock { $0 += requests }
    }
    report.note("\(served.value) requests")
  }

  private static func serve(_ style: Int) {
    guard let app = app.value else { return }
    let floor = plainFloor.current
    let request = Pod(
      parent: app, scopes: [RequestScope()], observer: style == 1 ? QuietObserver() : nil)
    // A request's own child, which builds the request's handler in the request.
    let handler =
      style == 2
      ? Pod(parent: request).resolve(handlerProvider) : request.resolve(handlerProvider)
    check(handler, floor: floor)
    let again = request.resolve(handlerProvider)
    check(again, floor: floor)
    switch style {
    case 3, 4:
      handedOver.withLock { $0.append((request, again)) }
    case 5:
      request.clearCachedInstances(forScope: RequestScope())
      check(request.resolve(handlerProvider), floor: floor)
    case 6:
      request.shutDownAndWait(report: report)
    default: break
    }
  }

  private static func check(_ handler: Handler, floor: Int) {
    report.check(handler.isIntact, "handler#\(handler.serial) holds a broken app value")
    report.check(
      handler.plain.serial >= floor,
      "handler#\(handler.serial) built from app-plain#\(handler.plain.serial), "
        + "after a change at #\(floor) had returned")
  }

  private static func clear(_ pod: Pod, _ which: Int) {
    let serial = nextSerial()
    switch which {
    case 0:
      pod.clearCachedInstance(of: plainProvider)
      plainFloor.raise(to: serial)
    case 1: pod.clearCachedInstance(of: hookedProvider)
    case 2: pod.clearCachedInstances(forScope: AppScope())
    default: pod.clearCachedInstance(of: existentialProvider)
    }
    sched_yield()
  }

  private static func override(_ pod: Pod, _ which: Int) {
    let serial = nextSerial()
    switch which {
    case 0:
      pod.overrideProvider(plainProvider) { _ in Part(parts) }
      plainFloor.raise(to: serial)
      plainOverridden.withLock { $0 = true }
    case 1:
      // Taking away an override that is not there changes nothing.
      guard plainOverridden.value else { break }
      pod.removeOverrideProvider(plainProvider)
      plainFloor.raise(to: serial)
      plainOverridden.withLock { $0 = false }
    case 2: pod.overrideProvider(hookedProvider, withValue: Part(parts))
    case 3: pod.removeOverrideProvider(hookedProvider)
    case 4: pod.overrideProvider(existentialProvider, withValue: Pair(Part(parts)))
    default: pod.removeOverrideProvider(existentialProvider)
    }
    sched_yield()
  }

  private static func resolveAsync(_ pod: Pod) {
    pod.clearCachedInstance(of: asyncProvider)
    let done = DispatchSemaphore(value: 0)
    Task {
      do {
        let part = try await pod.resolve(asyncProvider)
        report.check(part.isIntact, "an async app value is broken")
      } catch {
        report.check(false, "an async resolve threw \(error)")
      }
      done.signal()
    }
    done.wait()
  }

  private static func releaseHandedOver() -> Bool {
    let taken = handedOver.withLock { list -> (Pod, Handler)? in list.popLast() }
    guard let (request, handler) = taken else {
      sched_yield()
      return false
    }
    report.check(handler.isIntact, "a handed-over handler is broken")
    _ = request.resolve(hookedProvider)
    return true
  }

  private static func resolveThroughKeptContext() -> Bool {
    let taken = keptContexts.withLock { list -> BuildContext? in list.popLast() }
    guard let context = taken else {
      sched_yield()
      return false
    }
    report.check(context.resolve(plainProvider).isIntact, "a kept context read a broken class")
    report.check(context.resolve(pairProvider).isIntact, "a kept context read a broken struct")
    report.check(
      context.resolve(existentialProvider).isIntact, "a kept context read a broken existential")
    // The request's pod, asked for as its own thread may be letting go of it: the pod, alive
    // for as long as it is held here, or nil.
    if let pod = context.pod {
      report.check(pod.resolve(plainProvider).isIntact, "a kept context's pod read a broken class")
    }
    return true
  }
}
