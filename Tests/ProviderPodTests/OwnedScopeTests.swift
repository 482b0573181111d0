import Testing

@testable import ProviderPod

/// A server's request: each request's pod holds its own instances, and no other pod may.
private struct OwnedRequestScope: ProviderScope {
  static let requiresOwningPod = true
}

/// A scope that does not ask for an owner: the root pod may hold its instances.
private struct OpenFlowScope: ProviderScope {}

private final class RequestCache: Sendable {
  let serial: Int
  init(serial: Int) { self.serial = serial }
}

private let requestSerials = Counter()
private let requestCacheProvider = Provider(scope: OwnedRequestScope(), name: "requestCache") { _ in
  RequestCache(serial: requestSerials.next())
}
private let requestCacheLine = #line - 3
private let asyncRequestCacheProvider = AsyncProvider(
  scope: OwnedRequestScope(), name: "asyncCache"
) {
  _ in RequestCache(serial: requestSerials.next())
}
private let flowProvider = Provider(scope: OpenFlowScope(), name: "flow") { _ in
  RequestCache(serial: requestSerials.next())
}
/// A singleton built from a request's instance: it belongs to the request too.
private let handlerProvider = Provider(name: "handler") { pod in
  [pod.resolve(requestCacheProvider)]
}

@Suite("Scopes only a pod given them may hold")
struct OwnedScopeTests {
  @Test("each pod given the scope holds its own instance, shared by the pods below it")
  func eachOwnerHasItsOwn() {
    let app = Pod()
    let first = Pod(parent: app, scopes: [OwnedRequestScope()])
    let second = Pod(parent: app, scopes: [OwnedRequestScope()])
    let firstCache = first.resolve(requestCacheProvider)
    #expect(first.resolve(requestCacheProvider) === firstCache)
    #expect(second.resolve(requestCacheProvider) !== firstCache)
    let below = Pod(parent: first)
    #expect(below.resolve(requestCacheProvider) === firstCache)
    #expect(app.dependencyGraph().nodes.isEmpty, "the app's pod holds nothing of a request")
  }

  @Test("what is built from a request's instance stays in the request's pod")
  func dependentsStayWithTheOwner() {
    let app = Pod()
    let first = Pod(parent: app, scopes: [OwnedRequestScope()])
    let second = Pod(parent: app, scopes: [OwnedRequestScope()])
    #expect(first.resolve(handlerProvider)[0] !== second.resolve(handlerProvider)[0])
    #expect(app.dependencyGraph().nodes.isEmpty)
  }

  @Test("a scope that does not ask for an owner is cached in the root pod as before")
  func otherScopesUnchanged() {
    let app = Pod()
    let child = Pod(parent: app)
    #expect(child.resolve(flowProvider) === app.resolve(flowProvider))
  }

  @Test("resolved through a root pod, it stops with the provider, the scope and the fix")
  func rootPodStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Pod().resolve(requestCacheProvider)
    }
    let message = standardError(result)
    #expect(message.contains("requestCache (OwnedScopeTests.swift:\(requestCacheLine))"))
    #expect(message.contains("is in OwnedRequestScope, whose instances live only in a pod given"))
    #expect(message.contains("through a root pod, which owns no scope"))
    #expect(message.contains("Pod(parent: pod, scopes: [OwnedRequestScope()])"))
  }

  @Test("resolved through a child that does not own it, it stops and names the child")
  func childWithoutTheScopeStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let app = Pod()
      _ = Pod(parent: app, scopes: [OpenFlowScope()]).resolve(handlerProvider)
    }
    #expect(
      standardError(result).contains(
        "a child pod that does not own OwnedRequestScope, nor do the pods above it"))
  }

  @Test("an async provider in such a scope stops the same way")
  func asyncStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = try? await Pod().resolve(asyncRequestCacheProvider)
    }
    #expect(standardError(result).contains("asyncCache"))
  }

  @Test("an override that moves a provider into such a scope is held to it")
  func overrideIntoTheScope() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let pod = Pod(overrides: [
        flowProvider.override(scope: OwnedRequestScope()) { _ in
          RequestCache(serial: 0)
        }
      ])
      _ = pod.resolve(flowProvider)
    }
    #expect(standardError(result).contains("flow ("))
  }
}
