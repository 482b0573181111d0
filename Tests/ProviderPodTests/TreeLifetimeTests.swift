import Dispatch
import Testing

@testable import ProviderPod

/// The lock and state a tree of pods shares (the app's pod and its request pods) belong to the
/// app pod's tables, which every pod of the tree and every context kept past its build holds
/// through its own: they last while any of those does, and go with the last of them, on
/// whichever thread lets go of it.
@Suite("A tree's lock lasts as long as its pods and their contexts")
struct TreeLifetimeTests {
  private let repository = Provider(name: "repository") { _ in Counted() }
  private let fresh = Provider(scope: AlwaysCreateNewScope(), name: "fresh") { _ in Counted() }

  /// A request-scoped provider whose instance keeps its builder's context, as a view model
  /// that resolves lazily does.
  private var handler: Provider<ContextKeeper> {
    let repository = self.repository
    return Provider(scope: AppRequestScope(), name: "handler") { context in
      _ = context.resolve(repository)
      return ContextKeeper(context)
    }
  }

  @Test("the lock goes with the last pod, whichever of the app and a request goes last")
  func lockGoesWithLastPod() {
    for requestGoesLast in [false, true] {
      weak var lock: Locked<EngineState>?
      weak var record: PodRecord?
      do {
        var app: Pod? = Pod()
        var request: Pod? = Pod(parent: app!, scopes: [AppRequestScope()])
        _ = request!.resolve(repository)
        lock = app!.engine.pod.tree
        record = app!.engine.pod
        #expect(lock != nil)
        if requestGoesLast {
          app = nil
          // The request keeps the app's pod, and with it the tree.
          #expect(lock != nil)
          request = nil
        } else {
          request = nil
          #expect(lock != nil)
          app = nil
        }
        _ = (app, request)
      }
      #expect(lock == nil, "request goes last: \(requestGoesLast)")
      #expect(record == nil, "request goes last: \(requestGoesLast)")
    }
  }

  @Test("contexts on 8 threads resolve while the app's pod goes with the last request")
  func contextsOnThreadsOutliveTheApp() {
    let handler = self.handler
    let fresh = self.fresh
    let holder = PodHolder()
    holder.pod = Pod()
    weak let lock: Locked<EngineState>? = holder.pod.engine.pod.tree
    let rounds = 200
    let resolved = Counter()
    let wrong = Counter()
    let started = DispatchSemaphore(value: 0)
    let appReleased = DispatchSemaphore(value: 0)
    onThreadsUntilTheyEnd(8) { index in
      var contexts: [BuildContext] = []
      var request: Pod? = Pod(parent: holder.pod, scopes: [AppRequestScope()])
      started.signal()
      // Every thread holds a request (and so the app's pod) before the app's own reference
      // goes: from then on the last request to go takes the app's pod with it.
      if index == 0 {
        for _ in 0..<8 { _ = waitOrFail(started, "every thread's first request") }
        holder.pod = nil
        for _ in 0..<7 { appReleased.signal() }
      } else {
        _ = waitOrFail(appReleased, "the app's own reference to go")
      }
      for round in 0..<rounds {
        contexts.append(request!.resolve(handler).context)
        // The next request is made from the one before's parent, kept alive by it.
        let next =
          round + 1 < rounds ? Pod(parent: request!.parent!, scopes: [AppRequestScope()]) : nil
        request = next
        // Contexts of requests that went, some of them the app's last, resolve on.
        if let context = contexts.randomElement() {
          let made = context.resolve(fresh)
          if made.serial <= 0 { wrong.next() }
          resolved.next()
        }
      }
      contexts.removeAll()
    }
    #expect(resolved.value == 8 * rounds)
    #expect(wrong.value == 0)
    #expect(lock == nil)
  }
}

/// An instance with a serial of its own, to tell one build from the next.
private final class Counted: Sendable {
  private static let serials = Counter()
  let serial: Int
  init() { serial = Counted.serials.next() }
}
