import Foundation
import ProviderPod
import Testing

/// Thousands of random resolves, overrides, removals and clears on a small provider graph,
/// each checked against a plain reference model of rules S2–S5 and S9.
@Suite("Random operations against a reference model")
struct RandomOperationsModelTests {
  /// Fixed seeds, plus `PROVIDERPOD_MODEL_SEED` to replay one from a failure message.
  static let seeds: [UInt64] = {
    var seeds: [UInt64] = [1, 2, 3, 42, 2026, 0xC0FFEE]
    if let extra = ProcessInfo.processInfo.environment["PROVIDERPOD_MODEL_SEED"],
      let seed = UInt64(extra)
    {
      seeds.append(seed)
    }
    return seeds
  }()

  @Test("the pod agrees with the model after every step", arguments: seeds)
  func podAgreesWithModel(seed: UInt64) {
    var world = ModelWorld(seed: seed)
    for step in 0..<4_000 {
      if let failure = world.step() {
        Issue.record(
          "seed \(seed), step \(step): \(failure) (replay: PROVIDERPOD_MODEL_SEED=\(seed))")
        return
      }
    }
    #expect(world.resolvesChecked > 1_000)
  }
}

private enum ScopeChoice: CaseIterable {
  case singleton, alwaysNew, flow, step, otherStep, leaf, unrelated

  var scope: any ProviderScope {
    switch self {
    case .singleton: SingletonScope()
    case .alwaysNew: AlwaysCreateNewScope()
    case .flow: FlowScope()
    case .step: StepScope()
    case .otherStep: OtherStepScope()
    case .leaf: LeafScope()
    case .unrelated: UnrelatedScope()
    }
  }

  var name: String { String(describing: type(of: scope)) }

  /// What clearing this scope discards directly (the test's scope tree, by hand).
  var clears: Set<ScopeChoice> {
    switch self {
    case .singleton, .alwaysNew: []
    case .flow: [.flow, .step, .leaf, .otherStep]
    case .step: [.step, .leaf]
    case .otherStep: [.otherStep]
    case .leaf: [.leaf]
    case .unrelated: [.unrelated]
    }
  }
}

private struct Variant {
  let dependencies: [Int]
  let scope: ScopeChoice?  // nil: the provider's own
}

/// Late-bound provider table, so builders can name providers created after them.
private final class ProviderTable: @unchecked Sendable {
  var providers: [Provider<Instance>] = []
}

private struct ModelWorld {
  let count = 8
  var random: SplitMix64
  let table = ProviderTable()
  var baseScope: [ScopeChoice] = []
  var baseDependencies: [[Int]] = []
  var variants: [[Variant]] = []
  let counters: [Counter]
  let recorder = EventRecorder()
  let pod: Pod

  // The model.
  var overrides: [Int: Int] = [:]
  var cache: [Int: (instance: Instance, dependencies: Set<Int>, scope: ScopeChoice)] = [:]
  var maxSerial: [Int: Int] = [:]
  var resolvesChecked = 0

  init(seed: UInt64) {
    random = SplitMix64(seed: seed)
    counters = (0..<count).map { _ in Counter() }
    pod = Pod(observer: recorder)
    for index in 0..<count {
      baseScope.append(ScopeChoice.allCases[random.next(below: ScopeChoice.allCases.count)])
      baseDependencies.append(randomDependencies(below: index))
      variants.append(
        (0..<2).map { _ in
          let scope: ScopeChoice? =
            random.next(below: 2) == 0
            ? nil : ScopeChoice.allCases[random.next(below: ScopeChoice.allCases.count)]
          return Variant(dependencies: randomDependencies(below: index), scope: scope)
        })
    }
    for index in 0..<count {
      table.providers.append(
        Provider(scope: baseScope[index].scope, name: "p\(index)", makeBuilder(index, nil)))
    }
  }

  private mutating func randomDependencies(below index: Int) -> [Int] {
    (0..<index).filter { _ in random.next(below: 3) == 0 }.prefix(3).map { $0 }
  }

  private func makeBuilder(_ index: Int, _ variant: Int?) -> @Sendable (Pod) -> Instance {
    let dependencies = variant.map { variants[index][$0].dependencies } ?? baseDependencies[index]
    let label = label(index, variant)
    let (table, counter) = (table, counters[index])
    return { pod in
      let built = dependencies.map { pod.resolve(table.providers[$0]) }
      return Instance(label, serial: counter.next(), dependencies: built)
    }
  }

  private func label(_ index: Int, _ variant: Int?) -> String {
    "p\(index):" + (variant.map { "v\($0)" } ?? "base")
  }

  private func scope(of index: Int) -> ScopeChoice {
    overrides[index].flatMap { variants[index][$0].scope } ?? baseScope[index]
  }

  private func dependencies(of index: Int) -> [Int] {
    overrides[index].map { variants[index][$0].dependencies } ?? baseDependencies[index]
  }

  /// One random operation; returns what went wrong, if anything.
  mutating func step() -> String? {
    let index = random.next(below: count)
    let provider = table.providers[index]
    _ = recorder.take()
    switch random.next(below: 10) {
    case 0, 1:
      let scopeChoice = ScopeChoice.allCases[random.next(below: ScopeChoice.allCases.count)]
      pod.clearCachedInstances(forScope: scopeChoice.scope)
      let cleared = cache.filter { scopeChoice.clears.contains($0.value.scope) }.map(\.key)
      return checkDiscards(modelDiscard(Set(cleared)), "clear \(scopeChoice.name)")
    case 2:
      let variant = random.next(below: 2)
      let override = variants[index][variant]
      if let scope = override.scope {
        pod.overrideProvider(provider, scope: scope.scope, with: makeBuilder(index, variant))
      } else {
        pod.overrideProvider(provider, with: makeBuilder(index, variant))
      }
      overrides[index] = variant
      return checkDiscards(modelDiscard([index]), "override p\(index) with v\(variant)")
    case 3:
      pod.removeOverrideProvider(provider)
      guard overrides.removeValue(forKey: index) != nil else {
        return recorder.events.isEmpty ? nil : "removing a missing override reported events"
      }
      return checkDiscards(modelDiscard([index]), "remove override of p\(index)")
    default:
      let instance = pod.resolve(provider)
      resolvesChecked += 1
      var failure: String?
      _ = verify(instance, index, &failure)
      return failure.map { "resolve p\(index): \($0)" }
    }
  }

  /// Discards `keys` and, transitively, every cached instance built from them (S4).
  private mutating func modelDiscard(_ keys: Set<Int>) -> Set<Int> {
    var discarded: Set<Int> = []
    var pending = Array(keys)
    var invalid = keys
    while let key = pending.popLast() {
      if cache.removeValue(forKey: key) != nil { discarded.insert(key) }
      for (other, entry) in cache where entry.dependencies.contains(key) && !invalid.contains(other)
      {
        invalid.insert(other)
        pending.append(other)
      }
    }
    return discarded
  }

  private func checkDiscards(_ expected: Set<Int>, _ operation: String) -> String? {
    let reported = recorder.events.compactMap { event -> String? in
      if case .discarded(let provider, _, _) = event { provider } else { nil }
    }
    let expectedNames = expected.map { "p\($0)" }.sorted()
    guard reported.sorted() == expectedNames else {
      return "\(operation): discarded \(reported.sorted()), model says \(expectedNames)"
    }
    return nil
  }

  /// Checks one resolved instance (and what it was built from) against the model, updating
  /// the model as the pod should have. Returns the providers its owner now depends on.
  private mutating func verify(
    _ node: Instance, _ index: Int, _ failure: inout String?
  ) -> Set<Int> {
    guard failure == nil else { return [] }
    let expectedLabel = label(index, overrides[index])
    guard node.label == expectedLabel else {
      failure = "p\(index) built by \(node.label), expected \(expectedLabel)"
      return []
    }
    let scopeChoice = scope(of: index)
    if scopeChoice != .alwaysNew, let cached = cache[index] {
      if node !== cached.instance {
        failure = "p\(index) rebuilt as \(node), expected cached \(cached.instance)"
      }
      return [index]
    }
    guard node.serial > maxSerial[index, default: 0] else {
      failure = "p\(index) reused \(node), expected a fresh instance"
      return []
    }
    maxSerial[index] = node.serial
    let expectedDependencies = dependencies(of: index)
    guard node.dependencies.count == expectedDependencies.count else {
      failure =
        "p\(index) has \(node.dependencies.count) dependencies, expected \(expectedDependencies)"
      return []
    }
    var brought: Set<Int> = []
    for (child, childIndex) in zip(node.dependencies, expectedDependencies) {
      brought.formUnion(verify(child, childIndex, &failure))
    }
    if scopeChoice == .alwaysNew { return brought.union([index]) }
    cache[index] = (node, brought, scopeChoice)
    return [index]
  }
}
