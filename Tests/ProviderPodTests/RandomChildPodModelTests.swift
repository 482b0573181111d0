import Foundation
import Testing

@testable import ProviderPod

/// Thousands of random operations on a small tree of pods (a root, children and grandchildren
/// made and released at random, each owning some of the test's scopes): resolves, overrides of
/// providers and of a family, their removal, and clears of scopes, providers and the family,
/// through any live pod. Each is checked against a reference model of the child-pod rules
/// (the child-pod rules): which pod's instance a resolve gives (shared or its own, cached or
/// fresh), what each pod reports, what each change discards in which pod, and that every
/// cached instance is disposed exactly once, dependents first, also when a child goes away.
///
/// The model knows nothing of the engine: it works out from the rules where each instance
/// belongs (the deepest pod that shadows anything it is built from) and keeps an instance only
/// while it is still what the rules would give.
@Suite("Random operations on a tree of pods against a reference model")
struct RandomChildPodModelTests {
  /// Fixed seeds, plus `PROVIDERPOD_TREE_MODEL_SEED` to replay one from a failure message.
  static let seeds = modelSeeds(replayingFrom: "PROVIDERPOD_TREE_MODEL_SEED")

  /// How builders resolve, and whether the pods are watched.
  ///
  /// A builder that resolves through a pod captured once (a global) cannot follow a tree: a
  /// build placed in a child would resolve through the captured pod's view, not the child's.
  /// So the pod style has each builder resolve through the pod the resolve went through
  /// (`context.pod`), the way a builder that captured its own pod would: the engine has to
  /// find the build from the thread, as for any captured pod.
  enum Style: String, CaseIterable, CustomTestStringConvertible {
    /// Through the context; every pod observed, events checked.
    case context
    /// Through `context.pod`, the pod itself; every pod observed, events checked.
    case pod
    /// Through the context, no observer anywhere: cached resolves take the fast path.
    case unobserved
    /// Through `context.pod`, no observer anywhere: the fast path has to see the build.
    case unobservedPod
    var testDescription: String { rawValue }

    var throughPod: Bool { self == .pod || self == .unobservedPod }
    var isObserved: Bool { self == .context || self == .pod }
  }

  @Test(
    "the tree agrees with the model, and its bookkeeping is sound, after every step",
    arguments: seeds, Style.allCases)
  func treeAgreesWithModel(seed: UInt64, style: Style) {
    var world = TreeWorld(seed: seed, style: style)
    let replay = "replay: PROVIDERPOD_TREE_MODEL_SEED=\(seed)"
    for step in 0..<3_000 {
      if let failure = world.step() ?? world.checkEngine() {
        Issue.record("seed \(seed), step \(step): \(failure) (\(replay))\n\(world.report)")
        return
      }
    }
    #expect(world.resolvesChecked > 800)
    #expect(world.podsMade > 50)
    #expect(world.sharedResolves > 100)
    #expect(world.ownResolves > 100)
    #expect(world.grandchildrenMade > 10)
    #expect(world.podsReleased > 50)
    #expect(world.chainedReleases > 3)
    #expect(world.rootAloneChecks > 50)
    #expect(world.throughDroppedPods > 10)
    if let failure = world.finish() {
      Issue.record("seed \(seed), at the end: \(failure) (\(replay))\n\(world.report)")
    }
  }
}

private enum TreeScope: CaseIterable, CustomStringConvertible {
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
  var description: String { name }

  /// The test's scope tree, by hand: this scope and its descendants.
  var subtree: Set<TreeScope> {
    switch self {
    case .singleton: [.singleton]
    case .alwaysNew: [.alwaysNew]
    case .flow: [.flow, .step, .leaf, .otherStep]
    case .step: [.step, .leaf]
    case .otherStep: [.otherStep]
    case .leaf: [.leaf]
    case .unrelated: [.unrelated]
    }
  }

  /// What clearing this scope discards directly: never the built-in scopes.
  var clears: Set<TreeScope> {
    self == .singleton || self == .alwaysNew ? [] : subtree
  }
}

private struct TreeVariant {
  let dependencies: [Int]
  let scope: TreeScope?  // nil: the provider's (or family's) own
}

/// Which builder makes a provider's instances as seen from a pod: the override a pod
/// installed (`install` numbers every installation, so replacing an override with the same
/// builder is still a change), or the provider's own, which is the root's (pod 0, install 0).
private struct Source: Hashable, CustomStringConvertible {
  let pod: Int
  let install: Int

  var description: String { install == 0 ? "own builder" : "pod \(pod)'s override #\(install)" }
}

/// A provider as a pod sees it.
private struct Effective {
  let label: String
  let dependencies: [Int]
  let scope: TreeScope
  let source: Source
}

/// What a cached instance was built from.
private enum Dependency: Hashable, CustomStringConvertible {
  /// A cached instance, in the pod that caches it.
  case cached(pod: Int, provider: Int, instance: ObjectIdentifier)
  /// An always-new provider, built by `source`'s builder: it has no instance to keep, so
  /// the builder is what was used.
  case alwaysNew(provider: Int, source: Source)

  var description: String {
    switch self {
    case .cached(let pod, let provider, _): "p\(provider) in pod \(pod)"
    case .alwaysNew(let provider, let source): "always-new p\(provider) by \(source)"
    }
  }
}

private struct TreeEntry {
  let instance: Instance
  let scope: TreeScope
  let source: Source
  let dependencies: Set<Dependency>
}

/// One pod of the model's tree.
private final class TreeNode {
  let id: Int
  let parent: TreeNode?
  let owned: Set<TreeScope>
  let recorder: EventRecorder?
  /// The test's reference to the pod; nil once dropped. A dropped pod lives on while a child
  /// of it does (a child keeps its parent alive).
  var handle: Pod?
  var children: [TreeNode] = []
  var overrides: [Int: (variant: Int, install: Int)] = [:]
  var familyOverride: (variant: Int, install: Int)?
  var cache: [Int: TreeEntry] = [:]
  /// The plain providers (not family members) this pod has cached an instance of: the pod
  /// keeps their slots for its life, so that clearing and rebuilding a scope costs no slot.
  var keptSlots: Set<Int> = []

  init(id: Int, parent: TreeNode?, owned: Set<TreeScope>, recorder: EventRecorder?) {
    self.id = id
    self.parent = parent
    self.owned = owned
    self.recorder = recorder
  }

  var depth: Int { parent.map { $0.depth + 1 } ?? 0 }

  /// This pod, its parent, and so on up to the root.
  var chain: [TreeNode] {
    var result: [TreeNode] = []
    var next: TreeNode? = self
    while let node = next {
      result.append(node)
      next = node.parent
    }
    return result
  }

  /// This pod and every live pod below it.
  var subtree: [TreeNode] { [self] + children.flatMap(\.subtree) }
}

/// Late-bound provider table, so builders can name providers created after them. Indices
/// below `familyMembers` are members of one family, the rest plain providers.
private final class TreeProviderTable: @unchecked Sendable {
  var providers: [Provider<Instance>] = []
  var family: ProviderFamily<Int, Instance>!
  let familyMembers = 2

  func provider(_ index: Int) -> Provider<Instance> {
    index < familyMembers ? family(index) : providers[index - familyMembers]
  }
}

/// Every instance disposed, in order.
private final class TreeDisposals: @unchecked Sendable {
  private let lock = Shared<[Instance]>([])
  func record(_ instance: Instance) { lock.withLock { $0.append(instance) } }
  func take() -> [Instance] {
    lock.withLock { all in
      defer { all = [] }
      return all
    }
  }
}

/// The providers as each pod sees them and where their instances belong, until the tree or
/// an override changes.
private final class RuleMemo {
  var effective: [Int: Effective] = [:]
  var home: [Int: TreeNode] = [:]

  func reset() {
    effective = [:]
    home = [:]
  }
}

/// What one pod should have reported during a step.
private struct ExpectedEvents {
  var built: [String] = []
  var reused: [String] = []
  var discarded: [String] = []
  var overridden: [String] = []
}

private struct TreeWorld {
  let count = 10
  let maxChildren = 3
  var random: SplitMix64
  let style: RandomChildPodModelTests.Style
  let table = TreeProviderTable()
  var baseScope: [TreeScope] = []
  var baseDependencies: [[Int]] = []
  var variants: [[TreeVariant]] = []
  var familyScope: TreeScope
  var familyVariants: [TreeScope?] = []
  let counters: [Counter]
  let disposals = TreeDisposals()

  // The model.
  let root: TreeNode
  var nextPodID = 1
  var nextInstall = 1
  var maxSerial: [Int: Int] = [:]
  /// Every instance the model saw cached, with how often it was disposed.
  var everCached: [ObjectIdentifier: (instance: Instance, disposed: Int)] = [:]
  var expected: [Int: ExpectedEvents] = [:]
  /// What the rules give, worked out once per change of the tree or of its overrides.
  let memo = RuleMemo()
  /// The latest operations, for failure messages.
  var history: [String] = []

  // Coverage.
  var resolvesChecked = 0
  var podsMade = 0
  /// Resolves through a child that got an ancestor's instance, and that got the child's own.
  var sharedResolves = 0
  var ownResolves = 0
  var grandchildrenMade = 0
  var podsReleased = 0
  /// Releases of a grandchild that took its dropped parent with it.
  var chainedReleases = 0
  /// Checks of what a root without children keeps.
  var rootAloneChecks = 0
  /// Operations through a pod the test dropped, kept alive by a child.
  var throughDroppedPods = 0

  init(seed: UInt64, style: RandomChildPodModelTests.Style) {
    random = SplitMix64(seed: seed)
    self.style = style
    counters = (0..<count).map { _ in Counter() }
    familyScope = .singleton
    root = TreeNode(
      id: 0, parent: nil, owned: [], recorder: style.isObserved ? EventRecorder() : nil)
    familyScope = randomScope()
    familyVariants = (0..<2).map { _ in random.next(below: 2) == 0 ? nil : randomScope() }
    for index in 0..<count {
      let isMember = index < table.familyMembers
      baseScope.append(isMember ? familyScope : randomScope())
      baseDependencies.append(isMember ? [] : randomDependencies(below: index))
      variants.append(
        (0..<2).map { _ in
          let scope: TreeScope? = random.next(below: 2) == 0 ? nil : randomScope()
          return TreeVariant(
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
    root.handle = Pod(observer: root.recorder)
    // The whole tree's bookkeeping checked after every step, not only now and then.
    root.handle!.checkBookkeepingAfterEveryChange()
  }

  private mutating func randomScope() -> TreeScope {
    TreeScope.allCases[random.next(below: TreeScope.allCases.count)]
  }

  private mutating func randomDependencies(below index: Int) -> [Int] {
    (0..<index).filter { _ in random.next(below: 3) == 0 }.prefix(3).map { $0 }
  }

  private func makeBuilder(_ index: Int, _ variant: Int?) -> @Sendable (BuildContext) -> Instance {
    let dependencies = variant.map { variants[index][$0].dependencies } ?? baseDependencies[index]
    let label = "p\(index):" + (variant.map { "v\($0)" } ?? "base")
    let (table, counter, throughPod) = (table, counters[index], style.throughPod)
    return { context in
      let resolver: any ProviderResolver = throughPod ? context.pod! : context
      let built = dependencies.map { resolver.resolve(table.provider($0)) }
      return Instance(label, serial: counter.next(), dependencies: built)
    }
  }

  private func makeFamilyBuilder(_ variant: Int) -> @Sendable (BuildContext, Int) -> Instance {
    let (counters, label) = (counters, "f\(variant)")
    return { _, argument in
      Instance("p\(argument):\(label)", serial: counters[argument].next())
    }
  }

  private func name(_ index: Int) -> String {
    index < table.familyMembers ? "family(\(index))" : "p\(index)"
  }

  // MARK: The rules

  /// The provider as `pod` sees it: the nearest pod's override (a member's own before its
  /// family's in each pod), else the provider's own builder.
  private func effective(_ index: Int, in pod: TreeNode) -> Effective {
    let key = pod.id * count + index
    if let known = memo.effective[key] { return known }
    let found = lookUpEffective(index, in: pod)
    memo.effective[key] = found
    return found
  }

  private func lookUpEffective(_ index: Int, in pod: TreeNode) -> Effective {
    for node in pod.chain {
      if let override = node.overrides[index] {
        let variant = variants[index][override.variant]
        return Effective(
          label: "p\(index):v\(override.variant)", dependencies: variant.dependencies,
          scope: variant.scope ?? baseScope[index],
          source: Source(pod: node.id, install: override.install))
      }
      if index < table.familyMembers, let override = node.familyOverride {
        return Effective(
          label: "p\(index):f\(override.variant)", dependencies: [],
          scope: familyVariants[override.variant] ?? familyScope,
          source: Source(pod: node.id, install: override.install))
      }
    }
    return Effective(
      label: "p\(index):base", dependencies: baseDependencies[index], scope: baseScope[index],
      source: Source(pod: 0, install: 0))
  }

  /// The provider and everything its instance is built from, directly or not, as `pod` sees
  /// them.
  private func closure(of index: Int, in pod: TreeNode) -> Set<Int> {
    var result: Set<Int> = [index]
    var pending = [index]
    while let next = pending.popLast() {
      for dependency in effective(next, in: pod).dependencies
      where result.insert(dependency).inserted {
        pending.append(dependency)
      }
    }
    return result
  }

  /// Whether `node` itself shadows the provider: overrides it (or its family), or owns the
  /// scope `pod` sees it in.
  private func shadows(_ node: TreeNode, _ index: Int, seenFrom pod: TreeNode) -> Bool {
    guard node.parent != nil else { return false }
    if node.overrides[index] != nil { return true }
    if index < table.familyMembers, node.familyOverride != nil { return true }
    return node.owned.contains(effective(index, in: pod).scope)
  }

  /// Where `pod`'s instance of the provider is cached: the deepest pod of its chain that
  /// shadows anything the instance is built from, else the root.
  private func home(of index: Int, in pod: TreeNode) -> TreeNode {
    let key = pod.id * count + index
    if let known = memo.home[key] { return known }
    let closure = closure(of: index, in: pod)
    let found =
      pod.chain.first { node in closure.contains { shadows(node, $0, seenFrom: pod) } } ?? root
    memo.home[key] = found
    return found
  }

  /// Whether a cached instance is still what the rules give: its pod is still where it
  /// belongs, it was made by the builder that applies, and everything it was built from is
  /// still what the pod sees.
  private func isValid(_ entry: TreeEntry, of index: Int, in pod: TreeNode) -> Bool {
    guard effective(index, in: pod).source == entry.source, home(of: index, in: pod) === pod
    else { return false }
    for dependency in entry.dependencies {
      switch dependency {
      case .cached(let podID, let provider, let instance):
        let home = home(of: provider, in: pod)
        guard home.id == podID, effective(provider, in: pod).scope != .alwaysNew,
          let cached = home.cache[provider], ObjectIdentifier(cached.instance) == instance
        else { return false }
      case .alwaysNew(let provider, let source):
        let seen = effective(provider, in: pod)
        guard seen.scope == .alwaysNew, seen.source == source else { return false }
      }
    }
    return true
  }

  private var nodes: [TreeNode] { root.subtree }

  /// The pod itself: the test's reference, or for a pod whose reference was dropped but that
  /// a child keeps alive, that child's `parent`.
  private func pod(of node: TreeNode) -> Pod {
    node.handle ?? pod(of: node.children[0]).parent!
  }

  // MARK: Steps

  /// One random operation; returns what went wrong, if anything.
  mutating func step() -> String? {
    for node in nodes { _ = node.recorder?.take() }
    _ = disposals.take()
    expected = [:]
    // Any live pod, also one only its children keep alive.
    let all = nodes
    let node = all[random.next(below: all.count)]
    if node.handle == nil { throughDroppedPods += 1 }
    let index = random.next(below: count)
    let provider = table.provider(index)
    let members = Array(0..<table.familyMembers)
    let at = "through pod \(node.id)"
    switch random.next(below: 24) {
    case 0, 1:
      let choice = randomScope()
      pod(of: node).clearCachedInstances(forScope: choice.scope)
      var forced: [(TreeNode, Int)] = []
      for scope in choice.clears {
        for reached in reached(from: node, clearing: scope) {
          for (index, entry) in reached.cache where entry.scope == scope {
            forced.append((reached, index))
          }
        }
      }
      return checkChange(forced, "clear \(choice.name) \(at)")
    case 2:
      let variant = random.next(below: 2)
      if let scope = variants[index][variant].scope {
        pod(of: node).overrideProvider(
          provider, scope: scope.scope, with: makeBuilder(index, variant))
      } else {
        pod(of: node).overrideProvider(provider, with: makeBuilder(index, variant))
      }
      node.overrides[index] = (variant, nextInstall)
      nextInstall += 1
      return checkChange(
        [], "override \(name(index)) with v\(variant) \(at)", overridden: (node, name(index)))
    case 3:
      pod(of: node).removeOverrideProvider(provider)
      guard node.overrides.removeValue(forKey: index) != nil else {
        return checkChange([], "remove a missing override of \(name(index)) \(at)")
      }
      return checkChange(
        [], "remove the override of \(name(index)) \(at)", overridden: (node, name(index)))
    case 4:
      let variant = random.next(below: 2)
      if let scope = familyVariants[variant] {
        pod(of: node).overrideProvider(
          table.family, scope: scope.scope, with: makeFamilyBuilder(variant))
      } else {
        pod(of: node).overrideProvider(table.family, with: makeFamilyBuilder(variant))
      }
      node.familyOverride = (variant, nextInstall)
      nextInstall += 1
      return checkChange(
        familyChanged(in: node), "override the family with f\(variant) \(at)",
        overridden: (node, "family"))
    case 5:
      pod(of: node).removeOverrideProvider(table.family)
      guard node.familyOverride != nil else {
        return checkChange([], "remove a missing family override \(at)")
      }
      node.familyOverride = nil
      return checkChange(
        familyChanged(in: node), "remove the family override \(at)",
        overridden: (node, "family"))
    case 6:
      pod(of: node).clearCachedInstance(of: provider)
      return checkChange(cleared(index, in: node), "clear \(name(index)) \(at)")
    case 7:
      pod(of: node).clearCachedInstances(of: table.family)
      return checkChange(members.flatMap { cleared($0, in: node) }, "clear the family \(at)")
    case 8 where nodes.count <= maxChildren, 9 where nodes.count <= maxChildren:
      return makeChild()
    case 10 where nodes.count > 1:
      return dropHandle()
    default:
      return resolve(index, through: node)
    }
  }

  /// What a change of the family's override in `pod` discards directly: every member of the
  /// pod, also one the pod overrides by itself (as in a pod without children): the cached
  /// ones, and what was built with the pod's builder of an always-new one; and the same in
  /// the pods below that inherit the pod's overrides for that member. A pod below that
  /// overrides the member or the family has the nearer override: it and the pods below it
  /// keep theirs.
  private func familyChanged(in pod: TreeNode) -> [(TreeNode, Int)] {
    var result: [(TreeNode, Int)] = []
    for member in 0..<table.familyMembers { result += builtWithBuilder(of: member, in: pod) }
    for node in pod.subtree {
      for member in 0..<table.familyMembers where node.cache[member] != nil {
        let nearer = node.chain.prefix { $0 !== pod }.contains {
          $0.overrides[member] != nil || $0.familyOverride != nil
        }
        if !nearer { result.append((node, member)) }
      }
    }
    return result
  }

  /// The pods a clear of `scope` through `pod` reaches: it and its descendants, stopping at a
  /// descendant that owns the scope.
  private func reached(from pod: TreeNode, clearing scope: TreeScope) -> [TreeNode] {
    var result: [TreeNode] = []
    var pending = [pod]
    while let next = pending.popLast() {
      if next !== pod, next.owned.contains(scope) { continue }
      result.append(next)
      pending.append(contentsOf: next.children)
    }
    return result
  }

  /// What clearing the provider through `pod` discards directly: the pod's own instance. An
  /// always-new provider has none; what was built with the builder that applies through the
  /// pod (when it is the pod's own, or the root's) goes instead. A pod that shares its
  /// parent's instance, or its builder, has nothing of its own to clear.
  private func cleared(_ index: Int, in pod: TreeNode) -> [(TreeNode, Int)] {
    if pod.cache[index] != nil { return [(pod, index)] }
    guard effective(index, in: pod).scope == .alwaysNew else { return [] }
    return builtWithBuilder(of: index, in: pod)
  }

  /// The instances built with `pod`'s builder of an always-new provider: the pod overrides
  /// the provider, or is the root.
  private func builtWithBuilder(of index: Int, in pod: TreeNode) -> [(TreeNode, Int)] {
    var result: [(TreeNode, Int)] = []
    for node in nodes {
      for (built, entry) in node.cache
      where entry.dependencies.contains(where: {
        if case .alwaysNew(index, let source) = $0 { source.pod == pod.id } else { false }
      }) {
        result.append((node, built))
      }
    }
    return result
  }

  private mutating func resolve(_ index: Int, through node: TreeNode) -> String? {
    note("resolve \(name(index)) through pod \(node.id)")
    let instance = pod(of: node).resolve(table.provider(index))
    resolvesChecked += 1
    if node !== root, effective(index, in: node).scope != .alwaysNew {
      if home(of: index, in: node) === node { ownResolves += 1 } else { sharedResolves += 1 }
    }
    var failure: String?
    _ = verify(instance, index, through: node, &failure)
    if let failure { return "resolve \(name(index)) through pod \(node.id): \(failure)" }
    if !disposals.take().isEmpty { return "resolve \(name(index)): a resolve disposed something" }
    return checkEvents("resolve \(name(index)) through pod \(node.id)")
  }

  /// Checks one resolved instance (and what it was built from) against the model, updating
  /// the model as the pods should have. Returns what its caching owner was built from.
  private mutating func verify(
    _ instance: Instance, _ index: Int, through pod: TreeNode, _ failure: inout String?
  ) -> Set<Dependency> {
    guard failure == nil else { return [] }
    let seen = effective(index, in: pod)
    guard instance.label == seen.label else {
      failure = "\(name(index)) built by \(instance.label), expected \(seen.label)"
      return []
    }
    var home: TreeNode?
    if seen.scope != .alwaysNew {
      let found = self.home(of: index, in: pod)
      if let cached = found.cache[index] {
        if instance !== cached.instance {
          failure =
            "\(name(index)) is \(instance), expected \(cached.instance) cached in pod \(found.id)"
        }
        expected[found.id, default: .init()].reused.append(name(index))
        return [.cached(pod: found.id, provider: index, instance: ObjectIdentifier(instance))]
      }
      home = found
    }
    guard instance.serial > maxSerial[index, default: 0] else {
      failure =
        "\(name(index)) reused \(instance), expected a fresh one"
        + (home.map { " cached in pod \($0.id)" } ?? "")
      return []
    }
    maxSerial[index] = instance.serial
    guard instance.dependencies.count == seen.dependencies.count else {
      failure =
        "\(name(index)) has \(instance.dependencies.count) dependencies, expected \(seen.dependencies)"
      return []
    }
    var brought: Set<Dependency> = []
    for (dependency, dependencyIndex) in zip(instance.dependencies, seen.dependencies) {
      brought.formUnion(verify(dependency, dependencyIndex, through: pod, &failure))
    }
    guard let home else {
      // An always-new build is reported by the pod the resolve went through.
      expected[pod.id, default: .init()].built.append(name(index))
      return brought.union([.alwaysNew(provider: index, source: seen.source)])
    }
    home.cache[index] = TreeEntry(
      instance: instance, scope: seen.scope, source: seen.source, dependencies: brought)
    if index >= table.familyMembers { home.keptSlots.insert(index) }
    everCached[ObjectIdentifier(instance)] = (instance, 0)
    expected[home.id, default: .init()].built.append(name(index))
    return [.cached(pod: home.id, provider: index, instance: ObjectIdentifier(instance))]
  }

  /// Makes a child of a random pod that is not a grandchild, owning a random few of the
  /// scopes, with an override or two of its own from the start.
  private mutating func makeChild() -> String? {
    let parents = nodes.filter { $0.depth < 2 }
    let parent = parents[random.next(below: parents.count)]
    var scopes: [TreeScope] = []
    for scope in TreeScope.allCases where scope != .alwaysNew {
      if random.next(below: scope == .singleton ? 10 : 4) == 0 { scopes.append(scope) }
    }
    let node = TreeNode(
      id: nextPodID, parent: parent, owned: scopes.reduce(into: []) { $0.formUnion($1.subtree) },
      recorder: style.isObserved ? EventRecorder() : nil)
    nextPodID += 1
    var overrides: [ProviderOverride] = []
    if random.next(below: 3) == 0 {
      let index = random.next(below: count)
      let variant = random.next(below: 2)
      overrides.append(
        table.provider(index).override(
          scope: variants[index][variant].scope?.scope, with: makeBuilder(index, variant)))
      node.overrides[index] = (variant, nextInstall)
      nextInstall += 1
      expected[node.id, default: .init()].overridden.append(name(index))
    }
    if random.next(below: 5) == 0 {
      let variant = random.next(below: 2)
      overrides.append(
        table.family.override(
          scope: familyVariants[variant]?.scope, with: makeFamilyBuilder(variant)))
      node.familyOverride = (variant, nextInstall)
      nextInstall += 1
      expected[node.id, default: .init()].overridden.append("family")
    }
    node.handle = Pod(
      parent: pod(of: parent), scopes: scopes.map(\.scope), overrides: overrides,
      observer: node.recorder)
    parent.children.append(node)
    podsMade += 1
    if parent !== root { grandchildrenMade += 1 }
    // A new pod has nothing, and changes nothing anywhere else.
    return checkChange(
      [], "make pod \(node.id) under pod \(parent.id) owning \(scopes.map(\.name))")
  }

  /// Drops the test's reference to a random child: it goes away unless a child of its own is
  /// alive, and when it goes, a parent that only it kept alive goes too.
  private mutating func dropHandle() -> String? {
    let handled = nodes.filter { $0.handle != nil && $0 !== root }
    guard !handled.isEmpty else { return nil }
    return drop(handled[random.next(below: handled.count)])
  }

  private mutating func drop(_ node: TreeNode) -> String? {
    node.handle = nil
    var gone: [Instance] = []
    var next: TreeNode? = node
    var released: [Int] = []
    while let candidate = next, candidate !== root, candidate.handle == nil,
      candidate.children.isEmpty
    {
      gone.append(contentsOf: candidate.cache.values.map(\.instance))
      candidate.cache = [:]
      candidate.parent!.children.removeAll { $0 === candidate }
      released.append(candidate.id)
      next = candidate.parent
    }
    let operation = "drop pod \(node.id) (released: \(released))"
    podsReleased += released.count
    if released.count > 1 { chainedReleases += 1 }
    if let failure = checkDisposals(gone, operation) { return failure }
    // Nothing else changes: no events, no discards in the pods left.
    return checkChange([], operation)
  }

  /// Discards the `forced` instances, then every instance that is no longer what the rules
  /// give (built from something discarded, or from what a pod no longer sees), and checks the
  /// pods did the same.
  private mutating func checkChange(
    _ forced: [(TreeNode, Int)], _ operation: String, overridden: (TreeNode, String)? = nil
  ) -> String? {
    // Every change of the tree or of an override comes here, before anything looks again.
    memo.reset()
    note(operation)
    if let (node, name) = overridden.map({ ($0.0, $0.1) }) {
      expected[node.id, default: .init()].overridden.append(name)
    }
    var removed: [Instance] = []
    func remove(_ index: Int, from node: TreeNode) {
      guard let entry = node.cache.removeValue(forKey: index) else { return }
      removed.append(entry.instance)
      expected[node.id, default: .init()].discarded.append(name(index))
    }
    for (node, index) in forced { remove(index, from: node) }

    var changed = true
    while changed {
      changed = false
      for node in nodes {
        for (index, entry) in node.cache where !isValid(entry, of: index, in: node) {
          remove(index, from: node)
          changed = true
        }
      }
    }
    if let failure = checkDisposals(removed, operation) { return failure }
    return checkEvents(operation)
  }

  private mutating func note(_ operation: String) {
    history.append(operation)
    if history.count > 20 { history.removeFirst() }
  }

  /// The model's providers, pods and cached instances, and the latest operations, to follow a
  /// failure.
  var report: String {
    var lines: [String] = ["family: \(familyScope), variants \(familyVariants)"]
    for index in 0..<count {
      lines.append(
        "\(name(index)): \(baseScope[index]) from \(baseDependencies[index]); variants "
          + variants[index].map {
            "\($0.scope.map { "\($0)" } ?? "own scope") from \($0.dependencies)"
          }
          .joined(separator: ", "))
    }
    for node in nodes {
      lines.append(
        "pod \(node.id) under \(node.parent.map { "\($0.id)" } ?? "-")"
          + (node.handle == nil ? " (dropped)" : "")
          + " owns \(node.owned.map { "\($0)" }.sorted())"
          + " overrides \(node.overrides.mapValues(\.variant))"
          + " family \(node.familyOverride.map { "\($0.variant)" } ?? "-")")
      for (index, entry) in node.cache.sorted(by: { $0.key < $1.key }) {
        lines.append("  \(name(index)) = \(entry.instance) from \(entry.dependencies)")
      }
    }
    lines.append("latest operations:")
    lines.append(contentsOf: history.map { "  \($0)" })
    return lines.joined(separator: "\n")
  }

  /// Each pod reported exactly what the model expects of it.
  private mutating func checkEvents(_ operation: String) -> String? {
    guard style.isObserved else { return nil }
    for node in nodes {
      var built: [String] = []
      var reused: [String] = []
      var discarded: [String] = []
      var overridden: [String] = []
      for event in node.recorder!.take() {
        switch event {
        case .built(let provider, _): built.append(provider)
        case .reused(let provider, _): reused.append(provider)
        case .discarded(let provider, _, _): discarded.append(provider)
        case .overridden(let provider): overridden.append(provider)
        default: break
        }
      }
      let wanted = expected[node.id] ?? .init()
      if built.sorted() != wanted.built.sorted() {
        return "\(operation): pod \(node.id) reported built \(built), model says \(wanted.built)"
      }
      if reused.sorted() != wanted.reused.sorted() {
        return "\(operation): pod \(node.id) reported reused \(reused), model says \(wanted.reused)"
      }
      if discarded.sorted() != wanted.discarded.sorted() {
        return
          "\(operation): pod \(node.id) reported discarded \(discarded.sorted()), model says \(wanted.discarded.sorted())"
      }
      if overridden.sorted() != wanted.overridden.sorted() {
        return
          "\(operation): pod \(node.id) reported overridden \(overridden), model says \(wanted.overridden)"
      }
    }
    return nil
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

  // MARK: The engine's own view

  /// The engine's bookkeeping is sound, every pod knows its live children, and a root without
  /// children keeps a slot for nothing but its own instances, the always-new providers they
  /// were built with, and the plain providers it has ever cached.
  mutating func checkEngine() -> String? {
    // The model's own consistency: every instance it keeps is one the rules give.
    for node in nodes {
      for (index, entry) in node.cache where !isValid(entry, of: index, in: node) {
        return "model: \(entry.instance) in pod \(node.id) is not what the rules give"
      }
    }
    let violations = root.handle!.invariantViolations
    if !violations.isEmpty { return "engine bookkeeping: \(violations)" }
    for node in nodes {
      // A child is listed in its parent from its first use on: one made and not yet used
      // holds nothing a walk from the parent could find.
      let childCount = pod(of: node).childCount
      let joined = node.children.count(where: { pod(of: $0).hasJoinedTree })
      if childCount != joined {
        return "pod \(node.id) has \(childCount) children, model says \(joined) have been used"
      }
    }
    if root.children.isEmpty { rootAloneChecks += 1 }
    if root.children.isEmpty, root.handle!.slotCount != expectedRootSlots {
      return "the root keeps \(root.handle!.slotCount) slots, model says \(expectedRootSlots)"
    }
    return nil
  }

  private var expectedRootSlots: Int {
    var providers = Set(root.cache.keys).union(root.keptSlots)
    for entry in root.cache.values {
      for case .alwaysNew(let provider, _) in entry.dependencies { providers.insert(provider) }
    }
    return providers.count
  }

  /// Drops every child, then the root: everything still cached is disposed, nothing twice,
  /// and the root keeps nothing of its children.
  mutating func finish() -> String? {
    while let node = nodes.last(where: { $0.handle != nil && $0 !== root }) {
      expected = [:]
      if let failure = drop(node) { return failure }
      if let failure = checkEngine() { return "after dropping pod \(node.id): \(failure)" }
    }
    if !root.children.isEmpty { return "children left: \(root.children.map(\.id))" }
    if root.handle!.childCount != 0 {
      return "the root still has \(root.handle!.childCount) children"
    }
    if root.handle!.slotCount != expectedRootSlots {
      return "the root keeps \(root.handle!.slotCount) slots, model says \(expectedRootSlots)"
    }
    let remaining = root.cache.values.map(\.instance)
    root.cache = [:]
    root.handle = nil
    if let failure = checkDisposals(remaining, "dropping the root") { return failure }
    for (instance, disposed) in everCached.values where disposed != 1 {
      return "\(instance) was disposed \(disposed) times"
    }
    return nil
  }
}
