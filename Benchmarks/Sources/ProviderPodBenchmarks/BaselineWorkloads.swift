import Synchronization

/// `lazy var`: the cheapest cached access Swift has (not thread-safe).
struct LazyVarWorkloads: Workloads {
  let name = "lazy var"

  final class Holder {
    lazy var service = Service()
    lazy var chainEnd: L9 = L9(L8(L7(L6(L5(L4(L3(L2(L1(ChainRoot())))))))))
  }

  func cachedSingleton(_ effort: Effort) -> Double? {
    let holder = Holder()
    return measure(effort, operations: 2_000_000) { count in
      for _ in 0..<count { consume(holder.service) }
    }
  }

  func cachedChain(_ effort: Effort) -> Double? {
    let holder = Holder()
    return measure(effort, operations: 2_000_000) { count in
      for _ in 0..<count { consume(holder.chainEnd) }
    }
  }
}

/// Calling the initializers directly: the floor for always-new.
struct InitializerWorkloads: Workloads {
  let name = "initializer"

  func alwaysNew(_ effort: Effort) -> Double? {
    measure(effort, operations: 1_000_000) { count in
      for _ in 0..<count { consume(Service()) }
    }
  }

  func newChain(_ effort: Effort) -> Double? {
    measure(effort, operations: 100_000) { count in
      for _ in 0..<count { consume(L9(L8(L7(L6(L5(L4(L3(L2(L1(ChainRoot())))))))))) }
    }
  }

  func newChain(_ effort: Effort, depth: Int) -> Double? {
    measure(effort, operations: 2_000_000 / depth) { count in
      for _ in 0..<count { consume(nodes(depth: depth)) }
    }
  }
}

/// A chain of `depth` nodes, each built from the one below, as a builder chain would.
@inline(never)
private func nodes(depth: Int) -> Node {
  Node(depth == 1 ? nil : nodes(depth: depth - 1))
}

/// A minimal container: a `Mutex<[ObjectIdentifier: Any]>` of instances.
final class MutexContainer: Sendable {
  private let instances = Mutex<[ObjectIdentifier: UncheckedBox<Any>]>([:])

  func resolve<Value>(_ key: ObjectIdentifier, _ make: () -> Value) -> Value {
    if let cached = instances.withLock({ $0[key] }) { return cached.value as! Value }
    let value = make()
    instances.withLock { $0[key] = UncheckedBox(value) }
    return value
  }

  /// Forgets every instance; they are released after the lock is dropped.
  func clear() {
    let removed = instances.withLock { instances in
      defer { instances = [:] }
      return instances
    }
    withExtendedLifetime(removed) {}
  }
}

/// Distinct keys for the mutex container.
final class Key: Sendable {}

/// Workload 11 by hand: the app's singletons in one mutex dictionary, each request's
/// instances in a dictionary of its own, dropped with the request.
@inline(never)
func handleRequest(app: MutexContainer) -> Int {
  var requestInstances: [ObjectIdentifier: Any] = [:]
  let handler = RequestHandler(
    app.resolve(ObjectIdentifier(Repository.self)) { Service(value: 1) },
    app.resolve(ObjectIdentifier(Mailer.self)) { Service(value: 2) })
  requestInstances[ObjectIdentifier(RequestHandler.self)] = handler
  return (requestInstances[ObjectIdentifier(RequestHandler.self)] as! RequestHandler).first.value
}

struct MutexDictionaryWorkloads: Workloads {
  let name = "Mutex dictionary"

  func childPerRequest(_ effort: Effort) -> Double? {
    let app = MutexContainer()
    _ = handleRequest(app: app)
    return measure(effort, operations: 200_000) { count in
      for _ in 0..<count { consume(handleRequest(app: app)) }
    }
  }

  func childPerRequestTwoThreads(_ effort: Effort) -> Double? {
    let app = MutexContainer()
    _ = handleRequest(app: app)
    return measureConcurrently(effort, threads: 2, operations: 200_000) { count in
      var total = 0
      for _ in 0..<count { total &+= handleRequest(app: app) }
      return total
    }
  }

  func cachedSingleton(_ effort: Effort) -> Double? {
    let container = MutexContainer()
    let key = ObjectIdentifier(Key.self)
    _ = container.resolve(key) { Service() }
    return measure(effort, operations: 2_000_000) { count in
      for _ in 0..<count { consume(container.resolve(key) { Service() }) }
    }
  }

  func cachedChain(_ effort: Effort) -> Double? {
    let container = MutexContainer()
    let key = ObjectIdentifier(L9.self)
    _ = container.resolve(key) { L9(L8(L7(L6(L5(L4(L3(L2(L1(ChainRoot()))))))))) }
    return measure(effort, operations: 2_000_000) { count in
      for _ in 0..<count {
        consume(container.resolve(key) { L9(L8(L7(L6(L5(L4(L3(L2(L1(ChainRoot()))))))))) })
      }
    }
  }

  func cachedSingletonTwoThreads(_ effort: Effort) -> Double? {
    let container = MutexContainer()
    let key = ObjectIdentifier(Key.self)
    _ = container.resolve(key) { Service() }
    return measureConcurrently(effort, threads: 2, operations: 2_000_000) { count in
      var total = 0
      for _ in 0..<count { total &+= container.resolve(key) { Service() }.value }
      return total
    }
  }

  func newContainerWith100(_ effort: Effort) -> Double? {
    let keyObjects = (0..<100).map { _ in Key() }  // alive, so their identifiers stay distinct
    let keys = keyObjects.map(ObjectIdentifier.init)
    let rootKey = ObjectIdentifier(Root100.self)
    defer { withExtendedLifetime(keyObjects) {} }
    return measure(effort, operations: 5_000) { count in
      for _ in 0..<count {
        let container = MutexContainer()
        consume(
          container.resolve(rootKey) {
            Root100(
              keys.enumerated().map { index, key in container.resolve(key) { Service(value: index) }
              })
          })
      }
    }
  }

  func storeNth(_ effort: Effort, distinct: Int) -> Double? {
    let keyObjects = (0..<distinct).map { _ in Key() }
    let keys = keyObjects.map(ObjectIdentifier.init)
    return measureFreshContainers(effort, distinct: distinct) {
      let container = MutexContainer()
      for (index, key) in keys.enumerated() {
        consume(container.resolve(key) { Service(value: index) })
      }
      withExtendedLifetime(keyObjects) {}
    }
  }
}

extension MutexDictionaryWorkloads {
  /// By hand, a scope is a container of its own: clearing it is emptying one dictionary.
  func scopedResolveAndClear(_ effort: Effort, singletons: Int) -> Double? {
    let keyObjects = (0..<singletons).map { _ in Key() }
    let singletonContainer = MutexContainer()
    for (index, key) in keyObjects.enumerated() {
      consume(singletonContainer.resolve(ObjectIdentifier(key)) { Service(value: index) })
    }
    let screen = MutexContainer()
    let key = ObjectIdentifier(Service.self)
    defer { withExtendedLifetime((keyObjects, singletonContainer)) {} }
    return measure(effort, operations: 100_000) { count in
      for _ in 0..<count {
        consume(screen.resolve(key) { Service() })
        screen.clear()
      }
    }
  }

  func clearScope(_ effort: Effort, size: Int) -> Double? {
    let keyObjects = (0..<size).map { _ in Key() }
    let keys = keyObjects.map(ObjectIdentifier.init)
    defer { withExtendedLifetime(keyObjects) {} }
    return measureFreshContainers(
      effort, distinct: size, instances: 50_000,
      prepare: {
        let container = MutexContainer()
        for (index, key) in keys.enumerated() {
          consume(container.resolve(key) { Service(value: index) })
        }
        return container
      }
    ) { container in
      container.clear()
    }
  }

  /// A builder that resolves the key below it, 10,000 deep, in a new container each time.
  func deepChain(_ effort: Effort) -> Double? {
    let keyObjects = (0..<10_000).map { _ in Key() }
    let keys = keyObjects.map(ObjectIdentifier.init)
    defer { withExtendedLifetime(keyObjects) {} }
    func node(_ index: Int, in container: MutexContainer) -> Node {
      container.resolve(keys[index]) { Node(index == 0 ? nil : node(index - 1, in: container)) }
    }
    return measure(effort, operations: 1) { count in
      for _ in 0..<count { consume(node(keys.count - 1, in: MutexContainer())) }
    }
  }
}

/// Workload 15 by hand: five request services from the app's two singletons, kept in the
/// request's own dictionary, and a handler from the five.
@inline(never)
private func handleRequestWithFiveServices(app: MutexContainer, keys: [ObjectIdentifier]) -> Int {
  var requestInstances: [ObjectIdentifier: Any] = [:]
  var total = 0
  for key in keys {
    let service = RequestHandler(
      app.resolve(ObjectIdentifier(Repository.self)) { Service(value: 1) },
      app.resolve(ObjectIdentifier(Mailer.self)) { Service(value: 2) })
    requestInstances[key] = service
    total += (requestInstances[key] as! RequestHandler).first.value
  }
  return total
}

extension MutexDictionaryWorkloads {
  func newContainer(_ effort: Effort, dependencies: Int) -> Double? {
    let keyObjects = (0..<dependencies).map { _ in Key() }  // alive, so identifiers stay distinct
    let keys = keyObjects.map(ObjectIdentifier.init)
    let rootKey = ObjectIdentifier(Root100.self)
    defer { withExtendedLifetime(keyObjects) {} }
    return measure(effort, operations: 500_000 / dependencies) { count in
      for _ in 0..<count {
        let container = MutexContainer()
        consume(
          container.resolve(rootKey) {
            Root100(
              keys.enumerated().map { index, key in
                container.resolve(key) { Service(value: index) }
              })
          })
      }
    }
  }

  func childPerRequestWithFiveServices(_ effort: Effort) -> Double? {
    let app = MutexContainer()
    let keyObjects = (0..<5).map { _ in Key() }
    let keys = keyObjects.map(ObjectIdentifier.init)
    defer { withExtendedLifetime(keyObjects) {} }
    _ = handleRequestWithFiveServices(app: app, keys: keys)
    return measure(effort, operations: 100_000) { count in
      for _ in 0..<count { consume(handleRequestWithFiveServices(app: app, keys: keys)) }
    }
  }
}
