/// Everything a pod knows, guarded by one lock. Every method here runs under that lock and
/// never calls user code: values and records it lets go of are handed back in `released`, to
/// be dropped once the lock is released (dropping one can run a deinit, which may resolve).
struct EngineState {
  /// Per provider: its cached instance, build in progress, and what was built from it.
  var slots: [ProviderKey: Slot] = [:]
  /// Overrides by provider key, and family overrides by family key.
  var overrides: [ProviderKey: OverrideRecord] = [:]
  /// For each scope that can be cleared, the providers with an instance cached in it.
  var scopeMembers: [ScopeKey: Set<ProviderKey>] = [:]
  /// For each family, its members that have a slot.
  var familySlots: [ProviderKey: Set<ProviderKey>] = [:]
  /// How often each scope has been cleared: a build that began before a clear of its scope
  /// is stale, without the clear having to find every running build.
  var scopeEpochs: [ScopeKey: Int] = [:]
  /// Builds whose builder is running, on any thread. While there are none, a resolve through
  /// the pod cannot be nested in one, and the cached fast path need not look.
  var runningBuilds = 0
  /// Threads blocked on another thread's build, from inside a build of their own.
  var waits: [Int: Wait] = [:]
  var nextWaitID = 0
  /// Frames no build uses any more, kept for reuse.
  var spareFrames: [Frame] = []
  /// False once the pod is gone: builds still running then cache nothing.
  var isAlive = true
  /// Instance watchers and retry back-offs, told about every change.
  var watchers = Watchers()

  struct Wait {
    let waiter: Frame
    let target: Frame
  }

  /// What a change leaves for the pod to do once the lock is released: events to report, then
  /// `onDiscard` hooks to run, dependents before what they were built from.
  struct Aftermath {
    var events: [PodEvent] = []
    var disposals: [CacheEntry] = []
    var released: [AnyObject] = []
    /// Watchers and back-offs to wake (see `noticeChange`).
    var wakeUps: [() -> Void] = []
  }

  // MARK: Slots

  mutating func slot(for info: ProviderInfo) -> Slot {
    if let slot = slots[info.key] { return slot }
    let slot = Slot(info)
    slots[info.key] = slot
    if let family = info.family { familySlots[family.key, default: []].insert(info.key) }
    return slot
  }

  /// Drops the slot once nothing is cached, built or recorded in it.
  mutating func pruneIfUnused(_ slot: Slot, released: inout [AnyObject]) {
    guard slot.isUnused, slots[slot.key] === slot else { return }
    slots[slot.key] = nil
    if let family = slot.info.family {
      familySlots[family.key]?.remove(slot.key)
      if familySlots[family.key]?.isEmpty == true { familySlots[family.key] = nil }
    }
    released.append(slot)
  }

  /// Records that whatever `caller` is building depends on `slot`'s provider.
  mutating func recordDependency(on slot: Slot, from caller: Frame?) {
    guard let owner = caller?.owner else { return }
    if owner.dependencies.updateValue(slot, forKey: slot.key) == nil {
      slot.dependents[owner.key, default: 0] += 1
    }
  }

  /// Forgets that `dependent` was built from each of `dependencies`.
  mutating func dropDependent(
    _ dependent: ProviderKey, from dependencies: [ProviderKey: Slot],
    released: inout [AnyObject]
  ) {
    for slot in dependencies.values {
      guard let count = slot.dependents[dependent] else { continue }
      if count > 1 {
        slot.dependents[dependent] = count - 1
      } else {
        slot.dependents[dependent] = nil
        pruneIfUnused(slot, released: &released)
      }
    }
  }

  /// Takes the slot's cached instance out, with its bookkeeping; the slot itself is left for
  /// the caller to prune.
  mutating func removeEntry(of slot: Slot, released: inout [AnyObject]) -> CacheEntry? {
    guard let entry = slot.entry else { return nil }
    slot.entry = nil
    if entry.scope.kind != .singleton {
      scopeMembers[entry.scope.key]?.remove(slot.key)
      if scopeMembers[entry.scope.key]?.isEmpty == true { scopeMembers[entry.scope.key] = nil }
    }
    dropDependent(slot.key, from: entry.dependencies, released: &released)
    released.append(entry)
    return entry
  }

  /// Whether a running build's result may no longer be cached: it was invalidated, or its
  /// scope was cleared after it began.
  func isStale(_ frame: Frame) -> Bool {
    if frame.phase != .running { return true }
    guard let scope = frame.clearableScope else { return false }
    return (scopeEpochs[scope] ?? 0) != frame.scopeEpoch
  }

  // MARK: Discarding

  /// Discards the instances of `keys` (if cached), invalidates their builds in progress (if
  /// any), and cascades to everything built from them, wherever it is cached. Costs what it
  /// discards: each step follows the recorded "built from" links.
  mutating func discard(
    _ keys: [ProviderKey], reason: DiscardReason, into after: inout Aftermath
  ) {
    guard !keys.isEmpty else { return }
    var pending = keys.map { ($0, reason) }
    var seen = Set(keys)
    var removed: [CacheEntry] = []
    var visited: [Slot] = []
    var index = 0
    // Breadth first, so events read from the cause outwards.
    while index < pending.count {
      let (key, reason) = pending[index]
      index += 1
      guard let slot = slots[key] else { continue }
      slot.build?.invalidate()
      if let entry = removeEntry(of: slot, released: &after.released) {
        removed.append(entry)
        after.events.append(
          .discarded(provider: entry.provider.name, scope: entry.scope.name, reason: reason))
      }
      for dependent in slot.dependents.keys where seen.insert(dependent).inserted {
        pending.append((dependent, .dependencyDiscarded))
      }
      visited.append(slot)
    }
    for slot in visited { pruneIfUnused(slot, released: &after.released) }
    if removed.contains(where: \.hasDisposal) {
      after.disposals.append(contentsOf: Self.dependentsFirst(removed).filter(\.hasDisposal))
    }
  }

  /// Removes every cached instance, for the pod going away. Returns them all (to be released
  /// after the lock) and those with hooks, dependents first.
  mutating func discardAll() -> (released: [AnyObject], disposals: [CacheEntry]) {
    isAlive = false
    var removed: [CacheEntry] = []
    var released: [AnyObject] = []
    for slot in slots.values {
      slot.build?.invalidate()
      if let entry = slot.entry { removed.append(entry) }
      slot.entry = nil
      released.append(slot)
    }
    slots = [:]
    scopeMembers = [:]
    familySlots = [:]
    released.append(contentsOf: removed)
    released.append(contentsOf: spareFrames)
    spareFrames = []
    guard removed.contains(where: \.hasDisposal) else { return (released, []) }
    return (released, Self.dependentsFirst(removed).filter(\.hasDisposal))
  }

  /// `entries` ordered so that every instance comes before those it was built from: a
  /// post-order walk along "built from", reversed. An explicit stack, since chains can be
  /// deeper than the call stack allows.
  static func dependentsFirst(_ entries: [CacheEntry]) -> [CacheEntry] {
    var byKey: [ProviderKey: CacheEntry] = [:]
    for entry in entries { byKey[entry.provider.key] = entry }
    var order: [CacheEntry] = []
    var visited: Set<ProviderKey> = []
    for root in entries where !visited.contains(root.provider.key) {
      var stack: [(entry: CacheEntry, expanded: Bool)] = [(root, false)]
      while let (entry, expanded) = stack.popLast() {
        if expanded {
          order.append(entry)
          continue
        }
        guard visited.insert(entry.provider.key).inserted else { continue }
        stack.append((entry, true))
        for dependency in entry.dependencies.keys where !visited.contains(dependency) {
          if let next = byKey[dependency] { stack.append((next, false)) }
        }
      }
    }
    return order.reversed()
  }

  // MARK: Scopes, families and overrides

  /// Discards every instance cached in the given scopes; builds running in them go stale.
  mutating func clear(scopes: [ScopeInfo.Visit], into after: inout Aftermath) {
    var members: [ProviderKey] = []
    for scope in scopes {
      scopeEpochs[scope.key, default: 0] += 1
      members.append(contentsOf: scopeMembers[scope.key] ?? [])
    }
    discard(members, reason: .scopeCleared, into: &after)
  }

  /// Every member of `family` the pod knows: cached, being built, or built from.
  func members(of family: FamilyInfo) -> [ProviderKey] {
    Array(familySlots[family.key] ?? [])
  }

  /// The keys an override of `record`'s provider, or of every member of its family, affects.
  private func keys(overriddenBy record: OverrideRecord) -> [ProviderKey] {
    if let family = record.family { return members(of: family) }
    return [record.providerKey]
  }

  mutating func install(_ record: OverrideRecord, into after: inout Aftermath) {
    if let replaced = overrides.updateValue(record, forKey: record.providerKey) {
      after.released.append(replaced)
    }
    after.events.append(.overridden(provider: record.name))
    discard(keys(overriddenBy: record), reason: .overrideChanged, into: &after)
  }

  mutating func removeOverride(_ key: ProviderKey, into after: inout Aftermath) {
    guard let record = overrides.removeValue(forKey: key) else { return }
    after.released.append(record)
    after.events.append(.overridden(provider: record.name))
    discard(keys(overriddenBy: record), reason: .overrideChanged, into: &after)
  }

  /// The override that applies to `provider`: its own, else its family's.
  func override(for provider: ProviderInfo) -> OverrideRecord? {
    if overrides.isEmpty { return nil }
    if let own = overrides[provider.key] { return own }
    if let family = provider.family { return overrides[family.key] }
    return nil
  }

  /// Reports dependencies that will be cleared more often than the instance built from them.
  func captiveDependencies(of entry: CacheEntry, events: inout [PodEvent]) {
    guard entry.scope.kind == .singleton || entry.scope.kind == .custom else { return }
    for slot in entry.dependencies.values {
      guard let dependency = slot.entry, dependency.scope.kind == .custom,
        !dependency.scope.subtree.contains(entry.scope.key)
      else { continue }
      events.append(
        .captiveDependency(
          holder: entry.provider.name, holderScope: entry.scope.name,
          dependency: dependency.provider.name, dependencyScope: dependency.scope.name))
    }
  }
}
