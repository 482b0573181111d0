import Swinject

struct SwinjectWorkloads: Workloads {
  let name = "Swinject"

  func cachedSingleton(_ effort: Effort) -> Double? {
    let container = Container()
    container.register(Service.self) { _ in Service() }.inObjectScope(.container)
    _ = container.resolve(Service.self)
    return measure(effort, operations: 200_000) { count in
      for _ in 0..<count { consume(container.resolve(Service.self)!) }
    }
  }

  func alwaysNew(_ effort: Effort) -> Double? {
    let container = Container()
    container.register(Service.self) { _ in Service() }.inObjectScope(.transient)
    return measure(effort, operations: 200_000) { count in
      for _ in 0..<count { consume(container.resolve(Service.self)!) }
    }
  }

  private func chain(_ scope: ObjectScope) -> Container {
    let container = Container()
    container.register(ChainRoot.self) { _ in ChainRoot() }.inObjectScope(scope)
    container.register(L1.self) { r in L1(r.resolve(ChainRoot.self)!) }.inObjectScope(scope)
    container.register(L2.self) { r in L2(r.resolve(L1.self)!) }.inObjectScope(scope)
    container.register(L3.self) { r in L3(r.resolve(L2.self)!) }.inObjectScope(scope)
    container.register(L4.self) { r in L4(r.resolve(L3.self)!) }.inObjectScope(scope)
    container.register(L5.self) { r in L5(r.resolve(L4.self)!) }.inObjectScope(scope)
    container.register(L6.self) { r in L6(r.resolve(L5.self)!) }.inObjectScope(scope)
    container.register(L7.self) { r in L7(r.resolve(L6.self)!) }.inObjectScope(scope)
    container.register(L8.self) { r in L8(r.resolve(L7.self)!) }.inObjectScope(scope)
    container.register(L9.self) { r in L9(r.resolve(L8.self)!) }.inObjectScope(scope)
    return container
  }

  func newChain(_ effort: Effort) -> Double? {
    let container = chain(.transient)
    return measure(effort, operations: 20_000) { count in
      for _ in 0..<count { consume(container.resolve(L9.self)!) }
    }
  }

  func cachedChain(_ effort: Effort) -> Double? {
    let container = chain(.container)
    _ = container.resolve(L9.self)
    return measure(effort, operations: 200_000) { count in
      for _ in 0..<count { consume(container.resolve(L9.self)!) }
    }
  }

  func cachedSingletonTwoThreads(_ effort: Effort) -> Double? {
    let container = Container()
    container.register(Service.self) { _ in Service() }.inObjectScope(.container)
    // Swinject needs a synchronized resolver for use from several threads.
    let resolver = UncheckedBox(container.synchronize())
    _ = resolver.value.resolve(Service.self)
    return measureConcurrently(effort, threads: 2, operations: 100_000) { count in
      var total = 0
      for _ in 0..<count { total &+= resolver.value.resolve(Service.self)!.value }
      return total
    }
  }

  func newContainerWith100(_ effort: Effort) -> Double? {
    // A new container has to be registered before it can resolve: that is timed too.
    measure(effort, operations: 500) { count in
      for _ in 0..<count {
        let container = Container()
        for index in 0..<100 {
          container.register(Service.self, name: "s\(index)") { _ in Service(value: index) }
            .inObjectScope(.container)
        }
        container.register(Root100.self) { r in
          Root100((0..<100).map { r.resolve(Service.self, name: "s\($0)")! })
        }.inObjectScope(.container)
        consume(container.resolve(Root100.self)!)
      }
    }
  }

  func storeNth(_ effort: Effort, distinct: Int) -> Double? {
    let names = (0..<distinct).map { "s\($0)" }
    // Registration is set up outside the timed part; only the first resolves are timed.
    return measureFreshContainers(
      effort, distinct: distinct,
      prepare: {
        let container = Container()
        for (index, name) in names.enumerated() {
          container.register(Service.self, name: name) { _ in Service(value: index) }
            .inObjectScope(.container)
        }
        return container
      }
    ) { container in
      for name in names { consume(container.resolve(Service.self, name: name)!) }
    }
  }
}

extension SwinjectWorkloads {
  /// Swinject's equivalent of a custom scope: an `ObjectScope` with permanent storage, which
  /// `resetObjectScope` clears.
  static let screenScope = ObjectScope(storageFactory: PermanentStorage.init, description: "screen")

  func scopedResolveAndClear(_ effort: Effort, singletons: Int) -> Double? {
    let container = Container()
    for index in 0..<singletons {
      container.register(Service.self, name: "s\(index)") { _ in Service(value: index) }
        .inObjectScope(.container)
      _ = container.resolve(Service.self, name: "s\(index)")
    }
    container.register(Service.self, name: "screen") { _ in Service() }
      .inObjectScope(Self.screenScope)
    return measure(effort, operations: 10_000_000 / max(100, singletons)) { count in
      for _ in 0..<count {
        consume(container.resolve(Service.self, name: "screen")!)
        container.resetObjectScope(Self.screenScope)
      }
    }
  }

  func clearScope(_ effort: Effort, size: Int) -> Double? {
    let names = (0..<size).map { "s\($0)" }
    return measureFreshContainers(
      effort, distinct: size, instances: 50_000,
      prepare: {
        let container = Container()
        for (index, name) in names.enumerated() {
          container.register(Service.self, name: name) { _ in Service(value: index) }
            .inObjectScope(Self.screenScope)
          _ = container.resolve(Service.self, name: name)
        }
        return container
      }
    ) { container in
      container.resetObjectScope(Self.screenScope)
    }
  }

  // No deep chain: Swinject stops resolving at a depth of 200 (its `maxResolutionDepth`).

  /// Transient nodes registered by name, each resolving the one below; only up to a depth of
  /// 100, for the same reason.
  func newChain(_ effort: Effort, depth: Int) -> Double? {
    guard depth <= 100 else { return nil }
    let names = (0..<depth).map { "n\($0)" }
    let container = Container()
    for (index, name) in names.enumerated() {
      let below = index == 0 ? nil : names[index - 1]
      container.register(Node.self, name: name) { r in
        Node(below.map { r.resolve(Node.self, name: $0)! })
      }.inObjectScope(.transient)
    }
    let top = names[depth - 1]
    return measure(effort, operations: 200_000 / depth) { count in
      for _ in 0..<count { consume(container.resolve(Node.self, name: top)!) }
    }
  }

  /// A child container per request, as Swinject's users make one: the request's handler is
  /// registered in the child, the singletons in the parent.
  private func handleRequest(app: Container) -> Int {
    let request = Container(parent: app)
    request.register(RequestHandler.self) { r in
      RequestHandler(r.resolve(Repository.self)!.service, r.resolve(Mailer.self)!.service)
    }.inObjectScope(.container)
    return request.resolve(RequestHandler.self)!.first.value
  }

  func requestApp() -> Container {
    let app = Container()
    app.register(Repository.self) { _ in Repository() }.inObjectScope(.container)
    app.register(Mailer.self) { _ in Mailer() }.inObjectScope(.container)
    return app
  }

  func childPerRequest(_ effort: Effort) -> Double? {
    let app = requestApp()
    _ = handleRequest(app: app)
    return measure(effort, operations: 50_000) { count in
      for _ in 0..<count { consume(handleRequest(app: app)) }
    }
  }
}

/// Swinject's resolvers are not marked Sendable; the synchronized one is thread-safe.
struct UncheckedBox<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

extension SwinjectWorkloads {
  func newContainer(_ effort: Effort, dependencies: Int) -> Double? {
    let names = (0..<dependencies).map { "s\($0)" }
    // A new container has to be registered before it can resolve: that is timed too.
    return measure(effort, operations: 50_000 / dependencies) { count in
      for _ in 0..<count {
        let container = Container()
        for (index, name) in names.enumerated() {
          container.register(Service.self, name: name) { _ in Service(value: index) }
            .inObjectScope(.container)
        }
        container.register(Root100.self) { r in
          Root100(names.map { r.resolve(Service.self, name: $0)! })
        }.inObjectScope(.container)
        consume(container.resolve(Root100.self)!)
      }
    }
  }

  func childPerRequestWithFiveServices(_ effort: Effort) -> Double? {
    let app = Container()
    app.register(Repository.self) { _ in Repository() }.inObjectScope(.container)
    app.register(Mailer.self) { _ in Mailer() }.inObjectScope(.container)
    let names = (0..<5).map { "service\($0)" }
    func handle() -> Int {
      let request = Container(parent: app)
      for name in names {
        request.register(RequestHandler.self, name: name) { r in
          RequestHandler(r.resolve(Repository.self)!.service, r.resolve(Mailer.self)!.service)
        }.inObjectScope(.container)
      }
      return names.reduce(0) { $0 + request.resolve(RequestHandler.self, name: $1)!.first.value }
    }
    _ = handle()
    return measure(effort, operations: 20_000) { count in
      for _ in 0..<count { consume(handle()) }
    }
  }
}
