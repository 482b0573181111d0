import ProviderPod

private let service = Provider { _ in Service() }
private let newService = Provider(scope: AlwaysCreateNewScope()) { _ in Service() }

private let newRoot = Provider(scope: AlwaysCreateNewScope()) { _ in ChainRoot() }
private let new1 = Provider(scope: AlwaysCreateNewScope()) { pod in L1(pod.resolve(newRoot)) }
private let new2 = Provider(scope: AlwaysCreateNewScope()) { pod in L2(pod.resolve(new1)) }
private let new3 = Provider(scope: AlwaysCreateNewScope()) { pod in L3(pod.resolve(new2)) }
private let new4 = Provider(scope: AlwaysCreateNewScope()) { pod in L4(pod.resolve(new3)) }
private let new5 = Provider(scope: AlwaysCreateNewScope()) { pod in L5(pod.resolve(new4)) }
private let new6 = Provider(scope: AlwaysCreateNewScope()) { pod in L6(pod.resolve(new5)) }
private let new7 = Provider(scope: AlwaysCreateNewScope()) { pod in L7(pod.resolve(new6)) }
private let new8 = Provider(scope: AlwaysCreateNewScope()) { pod in L8(pod.resolve(new7)) }
private let new9 = Provider(scope: AlwaysCreateNewScope()) { pod in L9(pod.resolve(new8)) }

private let cachedRoot = Provider { _ in ChainRoot() }
private let cached1 = Provider { pod in L1(pod.resolve(cachedRoot)) }
private let cached2 = Provider { pod in L2(pod.resolve(cached1)) }
private let cached3 = Provider { pod in L3(pod.resolve(cached2)) }
private let cached4 = Provider { pod in L4(pod.resolve(cached3)) }
private let cached5 = Provider { pod in L5(pod.resolve(cached4)) }
private let cached6 = Provider { pod in L6(pod.resolve(cached5)) }
private let cached7 = Provider { pod in L7(pod.resolve(cached6)) }
private let cached8 = Provider { pod in L8(pod.resolve(cached7)) }
private let cached9 = Provider { pod in L9(pod.resolve(cached8)) }

private let hundred = (0..<100).map { index in Provider { _ in Service(value: index) } }
private let root100 = Provider { pod in Root100(hundred.map { pod.resolve($0) }) }

/// A custom scope such as a screen's: what workloads 8 and 9 cache and clear.
private struct ScreenScope: ProviderScope {}
private let screenService = Provider(scope: ScreenScope()) { _ in Service() }

/// Provider `i` builds a node from provider `i - 1`.
private let deepChainProviders: [Provider<Node>] = {
  var chain: [Provider<Node>] = []
  for _ in 0..<10_000 {
    let below = chain.last
    chain.append(Provider { pod in Node(below.map { pod.resolve($0) }) })
  }
  return chain
}()

/// Workload 12: always-new chains of generated providers, each building a node from the one
/// below, made once per depth.
private func alwaysNewChain(depth: Int) -> Provider<Node> {
  var top: Provider<Node>?
  for _ in 0..<depth {
    let below = top
    top = Provider(scope: AlwaysCreateNewScope()) { pod in Node(below.map { pod.resolve($0) }) }
  }
  return top!
}
private let alwaysNewChains = [10, 100, 1_000].map { (depth: $0, top: alwaysNewChain(depth: $0)) }

/// Workload 11: a request scope, a handler in it built from two app singletons.
private struct RequestScope: ProviderScope {}
private let repository = Provider { _ in Service(value: 1) }
private let mailer = Provider { _ in Service(value: 2) }
private let requestHandler = Provider(scope: RequestScope()) { pod in
  RequestHandler(pod.resolve(repository), pod.resolve(mailer))
}

/// One request: a child pod that owns the request scope, the handler resolved, the pod released.
@inline(never)
func handleRequest(in app: Pod) -> Int {
  let requestPod = Pod(parent: app, scopes: [RequestScope()])
  return requestPod.resolve(requestHandler).first.value
}

/// The same handler, built from instances of its own instead of the app's: a request that
/// reads nothing of the app's pod, so it writes nothing into the app's slots and takes the
/// tree's lock three times (its build, its finish, its release) instead of five.
private let selfContainedHandler = Provider(scope: RequestScope()) { _ in
  RequestHandler(Service(value: 1), Service(value: 2))
}

/// A request whose handler reads nothing of the app's: what the tree's lock costs a request
/// apart from what it records in the app's slots.
@inline(never)
func handleSelfContainedRequest(in app: Pod) -> Int {
  let requestPod = Pod(parent: app, scopes: [RequestScope()])
  return requestPod.resolve(selfContainedHandler).first.value
}

/// A request as the server guide makes one: a pod that owns the request scope, is given the
/// request's data and observed (by an observer that logs nothing at this level), whose handler
/// is built from the request's connection (returned to its pool by a cleanup hook) and an app
/// singleton, and which is shut down, its connection returned, before the response goes out.
private struct QuietObserver: PodObserver {
  func pod(_ pod: Pod, didReport event: PodEvent) {}
}
private let quietObserver = QuietObserver()
private let requestUser = Provider<Int>(scope: RequestScope()) { _ in 0 }
private let requestConnection = Provider(
  scope: RequestScope(), onDiscard: { (connection: Service) in consume(connection.value) }
) { pod in Service(value: pod.resolve(requestUser)) }
private let guidedHandler = Provider(scope: RequestScope()) { pod in
  RequestHandler(pod.resolve(requestConnection), pod.resolve(repository))
}

/// One request as the server guide makes it (see above), in the caller's task.
func handleGuidedRequest(in app: Pod, user: Int) async -> Int {
  let requestPod = Pod(
    parent: app, scopes: [RequestScope()], overrides: [requestUser.override(withValue: user)],
    observer: quietObserver)
  let value = requestPod.resolve(guidedHandler).second.value
  try? await requestPod.shutdown()
  return value
}

struct ProviderPodWorkloads: Workloads {
  let name = "ProviderPod"

  func cachedSingleton(_ effort: Effort) -> Double? {
    let pod = Pod()
    _ = pod.resolve(service)
    return measure(effort, operations: 2_000_000) { count in
      for _ in 0..<count { consume(pod.resolve(service)) }
    }
  }

  func alwaysNew(_ effort: Effort) -> Double? {
    let pod = Pod()
    return measure(effort, operations: 1_000_000) { count in
      for _ in 0..<count { consume(pod.resolve(newService)) }
    }
  }

  func newChain(_ effort: Effort) -> Double? {
    let pod = Pod()
    return measure(effort, operations: 100_000) { count in
      for _ in 0..<count { consume(pod.resolve(new9)) }
    }
  }

  func cachedChain(_ effort: Effort) -> Double? {
    let pod = Pod()
    _ = pod.resolve(cached9)
    return measure(effort, operations: 2_000_000) { count in
      for _ in 0..<count { consume(pod.resolve(cached9)) }
    }
  }

  func cachedSingletonTwoThreads(_ effort: Effort) -> Double? {
    let pod = Pod()
    _ = pod.resolve(service)
    return measureConcurrently(effort, threads: 2, operations: 2_000_000) { count in
      var total = 0
      for _ in 0..<count { total &+= pod.resolve(service).value }
      return total
    }
  }

  func newContainerWith100(_ effort: Effort) -> Double? {
    measure(effort, operations: 5_000) { count in
      for _ in 0..<count { consume(Pod().resolve(root100)) }
    }
  }

  func storeNth(_ effort: Effort, distinct: Int) -> Double? {
    let providers = (0..<distinct).map { index in Provider { _ in Service(value: index) } }
    return measureFreshContainers(effort, distinct: distinct) {
      let pod = Pod()
      for provider in providers { consume(pod.resolve(provider)) }
    }
  }

  func scopedResolveAndClear(_ effort: Effort, singletons: Int) -> Double? {
    let providers = (0..<singletons).map { index in Provider { _ in Service(value: index) } }
    let pod = Pod()
    for provider in providers { consume(pod.resolve(provider)) }
    defer { withExtendedLifetime(providers) {} }
    return measure(effort, operations: 100_000) { count in
      for _ in 0..<count {
        consume(pod.resolve(screenService))
        pod.clearCachedInstances(forScope: ScreenScope())
      }
    }
  }

  func clearScope(_ effort: Effort, size: Int) -> Double? {
    let providers = (0..<size).map { index in
      Provider(scope: ScreenScope()) { _ in Service(value: index) }
    }
    return measureFreshContainers(
      effort, distinct: size, instances: 50_000,
      prepare: {
        let pod = Pod()
        for provider in providers { consume(pod.resolve(provider)) }
        return pod
      }
    ) { pod in
      pod.clearCachedInstances(forScope: ScreenScope())
    }
  }

  func deepChain(_ effort: Effort) -> Double? {
    let top = deepChainProviders[deepChainProviders.count - 1]
    return measure(effort, operations: 1) { count in
      for _ in 0..<count { consume(Pod().resolve(top)) }
    }
  }

  func newChain(_ effort: Effort, depth: Int) -> Double? {
    guard let top = alwaysNewChains.first(where: { $0.depth == depth })?.top else { return nil }
    let pod = Pod()
    return measure(effort, operations: 2_000_000 / depth) { count in
      for _ in 0..<count { consume(pod.resolve(top)) }
    }
  }

  func childPerRequest(_ effort: Effort) -> Double? {
    let app = Pod()
    _ = handleRequest(in: app)
    return measure(effort, operations: 200_000) { count in
      for _ in 0..<count { consume(handleRequest(in: app)) }
    }
  }

  func childPerRequestTwoThreads(_ effort: Effort) -> Double? {
    let app = Pod()
    _ = handleRequest(in: app)
    return measureConcurrently(effort, threads: 2, operations: 200_000) { count in
      var total = 0
      for _ in 0..<count { total &+= handleRequest(in: app) }
      return total
    }
  }
}

/// Five request services, each built from the two app singletons: a request that does more
/// than workload 11's.
private let requestServices = (0..<5).map { _ in
  Provider(scope: RequestScope()) { pod in
    RequestHandler(pod.resolve(repository), pod.resolve(mailer))
  }
}

/// One request of workload 15: a child pod, its five services resolved, the pod released.
@inline(never)
private func handleRequestWithFiveServices(in app: Pod) -> Int {
  let requestPod = Pod(parent: app, scopes: [RequestScope()])
  return requestServices.reduce(0) { $0 + requestPod.resolve($1).first.value }
}

extension ProviderPodWorkloads {
  func newContainer(_ effort: Effort, dependencies: Int) -> Double? {
    let providers = (0..<dependencies).map { index in Provider { _ in Service(value: index) } }
    let root = Provider { pod in Root100(providers.map { pod.resolve($0) }) }
    return measure(effort, operations: 500_000 / dependencies) { count in
      for _ in 0..<count { consume(Pod().resolve(root)) }
    }
  }

  func childPerRequestWithFiveServices(_ effort: Effort) -> Double? {
    let app = Pod()
    _ = handleRequestWithFiveServices(in: app)
    return measure(effort, operations: 100_000) { count in
      for _ in 0..<count { consume(handleRequestWithFiveServices(in: app)) }
    }
  }
}
