import Testing

@testable import ProviderPod

// A request pod's own override is built and cached in the pod beside its siblings' work, and
// listed under the override's scope, not its provider's: a clear of that scope on the app's
// pod must reach it.

private struct OverrideSessionScope: ProviderScope {}

@Suite("A request pod's override in a scope of its own")
struct RequestOverrideScopeTests {
  @Test("a clear of the override's scope on the app's pod reaches what the request built")
  func appClearReachesRequestOverrideInItsScope() {
    let client = Provider(name: "client") { _ in Instance("app's client", serial: 0) }
    let built = Counter()
    let app = Pod()
    _ = app.resolve(client)
    func request() -> Pod {
      Pod(
        parent: app,
        overrides: [
          client.override(scope: OverrideSessionScope()) { _ in
            Instance("request's client", serial: built.next())
          }
        ])
    }
    // The app's first child joins it through its lock, which makes the lists its children
    // join beside one another from then on.
    _ = request().resolve(client)
    let request = request()
    let before = app.exclusiveSectionsEntered
    let first = request.resolve(client)
    // Built and cached beside the siblings' work, where the scope it is listed under is the
    // frame's.
    #expect(app.exclusiveSectionsEntered == before)
    #expect(first.label == "request's client")
    #expect(request.resolve(client) === first)
    app.clearCachedInstances(forScope: OverrideSessionScope())
    let second = request.resolve(client)
    #expect(second !== first, "the clear of the override's scope missed the request's instance")
    #expect(second.serial == first.serial + 1)
    #expect(app.resolve(client).label == "app's client")
    #expect(app.invariantViolations == [])
  }
}
