import Dispatch
import Testing

@testable import ProviderPod

/// A request pod's builders asking for their pod (`BuildContext.pod`): the pod while it lives,
/// nil once it has gone, whether or not anything asked before, and never a pod freed as the
/// question was asked on another thread.
@Suite("A request pod's builders find their pod")
struct RequestPodContextTests {
  /// An app pod and a request-scoped provider whose builder keeps its context in `kept`.
  private struct Fixture {
    let app = Pod()
    let kept = Shared<BuildContext?>(nil)
    let handler: Provider<Int>

    init() {
      let kept = self.kept
      handler = Provider(scope: AppRequestScope(), name: "handler") { context in
        kept.withLock { $0 = context }
        return 0
      }
    }

    func request() -> Pod { Pod(parent: app, scopes: [AppRequestScope()]) }
    var context: BuildContext { kept.withLock { $0 }! }
  }

  @Test("a request's context gives its pod while it lives, asked once or many times")
  func contextGivesTheRequestPod() {
    let fixture = Fixture()
    var request: Pod? = fixture.request()
    _ = request!.resolve(fixture.handler)
    let context = fixture.context
    #expect(context.pod === request)
    // Asked again, from the reference the first question left.
    #expect(context.pod === request)
    #expect(context.pod !== fixture.app)
    weak let gone = request
    request = nil
    #expect(gone == nil, "asking for the pod kept it alive")
    #expect(context.pod == nil)
    #expect(context.engine.pod.ownerAddress == nil, "the gone pod's address is still kept")
    #expect(fixture.app.invariantViolations.isEmpty)
  }

  @Test("a request's context never asked while its pod lived gives nil after")
  func contextAskedOnlyAfterThePodWent() {
    let fixture = Fixture()
    var request: Pod? = fixture.request()
    _ = request!.resolve(fixture.handler)
    weak let gone = request
    request = nil
    #expect(gone == nil)
    // Its address must be forgotten as it went: the pod's memory may be another object's now.
    #expect(fixture.context.engine.pod.ownerAddress == nil)
    #expect(fixture.context.pod == nil)
  }

  @Test("a grandchild's context gives the grandchild, and its parent stays the request")
  func grandchildContext() {
    let fixture = Fixture()
    let request = fixture.request()
    let inner = Pod(parent: request, scopes: [AppRequestScope()])
    _ = inner.resolve(fixture.handler)
    let found = fixture.context.pod
    #expect(found === inner)
    #expect(found?.parent === request)
  }

  @Test("a request's pod, asked for from a build it runs, resolves through it")
  func podFromInsideTheBuild() {
    let app = Pod()
    let leaf = instanceProvider("leaf", scope: AppRequestScope())
    let viaPod = Provider(scope: AppRequestScope(), name: "viaPod") { context in
      context.pod!.resolve(leaf)
    }
    let request = Pod(parent: app, scopes: [AppRequestScope()])
    #expect(request.resolve(viaPod) === request.resolve(leaf))
  }

  @Test(
    "a context asked for its pod as the pod goes on another thread gets the pod or nil, never one freed"
  )
  func askedAsThePodGoes() {
    let fixture = Fixture()
    for round in 0..<2_000 {
      var request: Pod? = fixture.request()
      _ = request!.resolve(fixture.handler)
      let context = fixture.context
      let identity = ObjectIdentifier(request!)
      weak let gone = request
      let start = DispatchSemaphore(value: 0)
      let found = Shared<Bool?>(nil)
      let asker = startThread {
        start.wait()
        // Given, the pod is alive for as long as it is held here, so its identity is the one
        // it had.
        let pod = context.pod
        found.withLock { $0 = pod.map { ObjectIdentifier($0) == identity } }
      }
      start.signal()
      request = nil
      guard waitOrFail(asker, "the thread asking for the pod") else { return }
      if let same = found.withLock({ $0 }) {
        #expect(same, "round \(round): the context gave another pod")
      }
      #expect(gone == nil, "round \(round): the request's pod outlived both threads")
      #expect(context.engine.pod.ownerAddress == nil, "round \(round)")
      #expect(context.pod == nil, "round \(round)")
    }
    #expect(fixture.app.invariantViolations.isEmpty)
  }
}
