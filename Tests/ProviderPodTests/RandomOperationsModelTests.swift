import Foundation
import Testing

@testable import ProviderPod

/// Thousands of random resolves, overrides, removals and clears on a small provider graph with
/// a family in it, each checked against a plain reference model of caching, the scope tree,
/// discarding dependents, overrides and events, and of disposal: every cached instance is
/// disposed exactly once, dependents first.
@Suite("Random operations against a reference model")
struct RandomOperationsModelTests {
  /// Fixed seeds, plus `PROVIDERPOD_MODEL_SEED` to replay one from a failure message.
  static let seeds = modelSeeds(replayingFrom: "PROVIDERPOD_MODEL_SEED")

  /// Builders resolve through what they are given, or through the pod itself, the way an
  /// app that keeps its pod in a global does: the pod must see the same dependencies.
  enum BuilderStyle: String, CaseIterable, CustomTestStringConvertible {
    case context, capturedPod
    var testDescription: String { rawValue }
  }

  @Test(
    "the pod agrees with the model, and its bookkeeping is sound, after every step",
    arguments: seeds, BuilderStyle.allCases)
  func podAgreesWithModel(seed: UInt64, style: BuilderStyle) {
    var world = ModelWorld(seed: seed, capturedPod: style == .capturedPod)
    for step in 0..<4_000 {
      if let failure = world.step() {
        Issue.record(
          "seed \(seed), step \(step): \(failure) (replay: PROVIDERPOD_MODEL_SEED=\(seed))")
        return
      }
      let violations = world.pod!.invariantViolations
      if !violations.isEmpty {
        Issue.record("seed \(seed), step \(step): engine bookkeeping: \(violations)")
        return
      }
    }
    #expect(world.resolvesChecked > 1_000)
    if let failure = world.finish() {
      Issue.record("seed \(seed), at the end: \(failure) (replay: PROVIDERPOD_MODEL_SEED=\(seed))")
    }
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
  let scope: ScopeChoice?  // nil: the provider's (or family's) own
}

/// Late-bound provider table, so builders can name providers created after them. Indices
/// below `familyMembers` are members of one family, the rest plain providers.
private final class ProviderTable: @unchecked Sendable {
  var providers: [Provider<Instance>] = []
  var family: ProviderFamily<Int, Instance>!
  let familyMembers = 2
  /// Set when builders resolve through the pod itself rather than their context.
  weak var capturedPod: Pod?

  func provider(_ index: Int) -> Provider<Instance> {
    index < familyMembers ? family(index) : providers[index - familyMembers]
  }
}

/// Every instance disposed, in order, and how often each was.
private final class DisposalRecord: @unchecked Sendable {
  private let lock = Shared<[Instance]>([])
  func record(_ instance: Instance) { lock.withLock { $0.append(instance) } }
  func take() -> [Instance] {
    lock.withLock { all in
      defer { all = [] }
      return all
    }
  }
}

private struct ModelWorld {
  let count = 10
  var random: SplitMix64
  let table = ProviderTable()
  var baseScope: [ScopeChoice] = []
  var baseDependencies: [[Int]] = []
  var variants: [[Variant]] = []
  var familyScope: ScopeChoice
  var familyVariants: [ScopeChoice?] = []
  let counters: [Counter]
  let recorder = EventRecorder()
  let disposals = DisposalRecord()
  var pod: Pod?

  // The model.
  var overrides: [Int: Int] = [:]
  var familyOverride: Int?
  var cache: [Int: (instance: Instance, dependencies: Set<Int>, scope: ScopeChoice)] = [:]
  var maxSerial: [Int: Int] = [:]
  var resolvesChecked = 0
  /// Every instance the model saw cached, with how often it was disposed.
  var everCached: [ObjectIdentifier: (instance: Instance, disposed: Int)] = [:]

  init(seed: UInt64, capturedPod: Bool = false) {
    random = SplitMix64(seed: seed)
    counters = (0..<count).map { _ in Counter() }
    familyScope = .singleton
    familyScope = randomScope()
    familyVariants = (0..<2).map { _ in random.next(below: 2) == 0 ? nil : randomScope() }
    for index in 0..<count {
      let isMember = index < table.familyMembers
      baseScope.append(isMember ? familyScope : randomScope())
      baseDependencies.append(isMember ? [] : randomDependencies(below: index))
      variants.append(
        (0..<2).map { _ in
          let scope: ScopeChoice? = random.next(below: 2) == 0 ? nil : randomScope()
          return Variant(
            dependencies: isMember ? [] : randomDependencies(below: index), scope: scope)
        })
    }
    let (table, counters, disposals) = (table, counters, disposals)
    table.family = ProviderFamily(
      scope: familyScope.scope, name: "family", onDiscard: { disposals.record($0) }
    ) { _, argument in
      Instance("p\(argument):base", serial: counters[argument].next())
    }
    for index in table.familyMembers..<count {
      table.providers.append(
        Provider(
          scope: baseScope[index].scope, name: "p\(index)",
          onDiscard: { disposals.record($0) }, makeBuilder(index, nil)))
    }
    pod = Pod(observer: recorder)
    // The whole tree's bookkeeping checked after every step, not only now and then.
    pod!.checkBookkeepingAfterEveryChange()
    if capturedPod { table.capturedPod = pod }
  }

  private mutating func randomScope() -> ScopeChoice {
    ScopeChoice.allCases[random.next(below: ScopeChoice.allCases.count)]
  }

  private mutating func randomDependencies(below index: Int) -> [Int] {
    (0..<index).filter { _ in random.next(below: 3) == 0 }.prefix(3).map { $0 }
  }

  private func makeBuilder(_ index: Int, _ variant: Int?) -> @Sendable (BuildContext) -> Instance {
    let dependencies = variant.map { variants[index][$0].dependencies } ?? baseDependencies[index]
    let label = "p\(index):" + (variant.map { "v\($0)" } ?? "base")
    let (table, counter) = (table, counters[index])
    return { context in
      let resolver: any ProviderResolver = table.capturedPod ?? context
      let built = dependencies.map { resolver.resolve(table.provider($0)) }
      return Instance(label, serial: counter.next(), dependencies: built)
    }
  }

  private func label(_ index: Int) -> String {
    if let variant = overrides[index] { return "p\(index):v\(variant)" }
    if index < table.familyMembers, let variant = familyOverride { return "p\(index):f\(variant)" }
    return "p\(index):base"
  }

  private func scope(of index: Int) -> ScopeChoice {
    if let variant = overrides[index] { return variants[index][variant].scope ?? baseScope[index] }
    if index < table.familyMembers, let variant = familyOverride {
      return familyVariants[variant] ?? familyScope
    }
    return baseScope[index]
  }

  private func dependencies(of index: Int) -> [Int] {
    overrides[index].map { variants[index][$0].dependencies } ?? baseDependencies[index]
  }

  /// One random operation; returns what went wrong, if anything.
  mutating func step() -> String? {
    let pod = self.pod!
    let index = random.next(below: count)
    let provider = table.provider(index)
    let members = Array(0..<table.familyMembers)
    _ = recorder.take()
    switch random.next(below: 14) {
    case 0, 1:
      let scopeChoice = randomScope()
      pod.clearCachedInstances(forScope: scopeChoice.scope)
      let cleared = cache.filter { scopeChoice.clears.contains($0.value.scope) }.map(\.key)
      return checkDiscards(modelDiscard(Set(cleared)), "clear \(scopeChoice.name)")
    case 2:
      let variant = random.next(below: 2)
      if let scope = variants[index][variant].scope {
        pod.overrideProvider(provider, scope: scope.scope, with: makeBuilder(index, variant))
      } else {
        pod.overrideProvider(provider, with: makeBuilder(index, variant))
      }
      overrides[index] = variant
      return checkDiscards(modelDiscard([index]), "override p\(index) with v\(variant)")
    case 3:
      pod.removeOverrideProvider(provider)
      guard overrides.removeValue(forKey: index) != nil else {
        return checkDiscards([], "remove a missing override of p\(index)")
      }
      return checkDiscards(modelDiscard([index]), "remove override of p\(index)")
    case 4:
      let variant = random.next(below: 2)
      let (counters, label) = (counters, "f\(variant)")
      let build: @Sendable (BuildContext, Int) -> Instance = { _, argument in
        Instance("p\(argument):\(label)", serial: counters[argument].next())
      }
      if let scope = familyVariants[variant] {
        pod.overrideProvider(table.family, scope: scope.scope, with: build)
      } else {
        pod.overrideProvider(table.family, with: build)
      }
      familyOverride = variant
      return checkDiscards(modelDiscard(Set(members)), "override the family with f\(variant)")
    case 5:
      pod.removeOverrideProvider(table.family)
      guard familyOverride != nil else {
        return checkDiscards([], "remove a missing family override")
      }
      familyOverride = nil
      return checkDiscards(modelDiscard(Set(members)), "remove the family override")
    case 6:
      pod.clearCachedInstance(of: provider)
      return checkDiscards(modelDiscard([index]), "clear p\(index)")
    case 7:
      pod.clearCachedInstances(of: table.family)
      return checkDiscards(modelDiscard(Set(members)), "clear the family")
    default:
      let instance = pod.resolve(provider)
      resolvesChecked += 1
      var failure: String?
      _ = verify(instance, index, &failure)
      if failure == nil, !disposals.take().isEmpty { failure = "a resolve disposed something" }
      return failure.map { "resolve p\(index): \($0)" }
    }
  }

  /// Drops the pod: everything still cached is disposed; nothing was disposed twice.
  mutating func finish() -> String? {
    let remaining = cache.map(\.value.instance)
    cache = [:]
    pod = nil
    if let failure = checkDisposals(remaining, "dropping the pod") { return failure }
    for (instance, disposed) in everCached.values where disposed != 1 {
      return "\(instance) was disposed \(disposed) times"
    }
    return nil
  }

  /// Discards `keys` and, transitively, every cached instance built from them.
  private mutating func modelDiscard(_ keys: Set<Int>) -> [Instance] {
    var discarded: [Instance] = []
    var pending = Array(keys)
    var invalid = keys
    while let key = pending.popLast() {
      if let entry = cache.removeValue(forKey: key) { discarded.append(entry.instance) }
      for (other, entry) in cache where entry.dependencies.contains(key) && !invalid.contains(other)
      {
        invalid.insert(other)
        pending.append(other)
      }
    }
    return discarded
  }

  private mutating func checkDiscards(_ expected: [Instance], _ operation: String) -> String? {
    let reported = recorder.events.compactMap { event -> String? in
      if case .discarded(let provider, _, _) = event { provider } else { nil }
    }
    let expectedNames = expected.map { instance in
      let index = Int(instance.label.dropFirst().prefix { $0 != ":" })!
      return index < table.familyMembers ? "family(\(index))" : "p\(index)"
    }.sorted()
    guard reported.sorted() == expectedNames else {
      return "\(operation): discarded \(reported.sorted()), model says \(expectedNames)"
    }
    return checkDisposals(expected, operation)
  }

  /// The hooks ran for exactly `expected`, each instance before those it was built from.
  private mutating func checkDisposals(_ expected: [Instance], _ operation: String) -> String? {
    let disposed = disposals.take()
    let ids = disposed.map(ObjectIdentifier.init)
    guard Set(ids) == Set(expected.map(ObjectIdentifier.init)), ids.count == expected.count else {
      return "\(operation): disposed \(disposed), model says \(expected)"
    }
    for instance in disposed { everCached[ObjectIdentifier(instance)]?.disposed += 1 }
    let position = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
    for instance in disposed {
      for dependency in allDependencies(of: instance) {
        if let later = position[ObjectIdentifier(dependency)],
          later < position[ObjectIdentifier(instance)]!
        {
          return "\(operation): \(dependency) was disposed before \(instance), built from it"
        }
      }
    }
    return nil
  }

  private func allDependencies(of instance: Instance) -> [Instance] {
    instance.dependencies + instance.dependencies.flatMap(allDependencies)
  }

  /// Checks one resolved instance (and what it was built from) against the model, updating
  /// the model as the pod should have. Returns the providers its owner now depends on.
  private mutating func verify(
    _ node: Instance, _ index: Int, _ failure: inout String?
  ) -> Set<Int> {
    guard failure == nil else { return [] }
    let expectedLabel = label(index)
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
    everCached[ObjectIdentifier(node)] = (node, 0)
    return [index]
  }
}
