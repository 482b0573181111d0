#if SwiftDependencies
  import Dependencies

  private enum ServiceKey: DependencyKey {
    static let liveValue = Service()
  }

  private enum MakeServiceKey: DependencyKey {
    static let liveValue: @Sendable () -> Service = { Service() }
  }

  extension DependencyValues {
    fileprivate var benchmarkService: Service {
      get { self[ServiceKey.self] }
      set { self[ServiceKey.self] = newValue }
    }
    fileprivate var makeBenchmarkService: @Sendable () -> Service {
      get { self[MakeServiceKey.self] }
      set { self[MakeServiceKey.self] = newValue }
    }
  }

  private struct ServiceUser: Sendable {
    @Dependency(\.benchmarkService) var service
    @Dependency(\.makeBenchmarkService) var makeService
  }

  /// swift-dependencies keys dependencies by type, with one value per key and context: there is
  /// no container to create, no always-new scope (a closure dependency is the idiom), and
  /// chains or 100 distinct dependencies would need a hand-written type per link.
  struct SwiftDependenciesWorkloads: Workloads {
    let name = "swift-dependencies"

    func cachedSingleton(_ effort: Effort) -> Double? {
      let user = ServiceUser()
      return measure(effort, operations: 200_000) { count in
        for _ in 0..<count { consume(user.service) }
      }
    }

    func alwaysNew(_ effort: Effort) -> Double? {
      let user = ServiceUser()
      return measure(effort, operations: 200_000) { count in
        for _ in 0..<count { consume(user.makeService()) }
      }
    }

    func cachedSingletonTwoThreads(_ effort: Effort) -> Double? {
      let user = ServiceUser()
      return measureConcurrently(effort, threads: 2, operations: 100_000) { count in
        var total = 0
        for _ in 0..<count { total &+= user.service.value }
        return total
      }
    }
  }
#else
  /// Built without the `SwiftDependencies` trait (the static build of `Benchmarks/scaling`): the
  /// column stays, empty.
  struct SwiftDependenciesWorkloads: Workloads {
    let name = "swift-dependencies"
  }
#endif
