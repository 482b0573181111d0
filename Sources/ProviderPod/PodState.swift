/// Everything a pod knows, guarded by one lock. Every method here runs under that lock and
/// never calls user code.
struct PodState {
  /// Cached instances by provider.
  var entries: [ProviderKey: CacheEntry] = [:]
  /// Single-flight builds in progress, by provider.
  var building: [ProviderKey: Pod] = [:]
  /// Overrides by provider key, and family overrides by family key.
  var overrides: [ProviderKey: OverrideRecord] = [:]
  /// For each scope that can be cleared, the providers with an instance cached in it.
  var scopeMembers: [ScopeKey: Set<ProviderKey>] = [:]
  /// Threads blocked on another thread's build, from inside a build of their own.
  var waits: [Int: Wait] = [:]
  var nextWaitID = 0
  /// Views no build uses any more, kept for reuse (see `PodView.swift`).
  var spareViews: [Pod] = []
  /// False once the pod itself is gone: views kept past that would keep its state alive.
  var isRootAlive = true

  struct Wait {
    let waiter: Pod
    let target: Pod
  }

  /// What a change leaves for the pod to do once the lock is released: events to report, then
  /// `onDiscard` hooks to run, dependents before what they were built from.
  struct Aftermath {
    var events: [PodEvent] = []
    var disposals: [CacheEntry] = []
    /// Every entry removed, kept until the lock is released: dropping a value can run user
    /// code (deinits), even the pod's own deinit, which takes the lock.
    var released: [AnyObject] = []
  }

  // MARK: Discarding

  /// Discards the instances of `keys` (if cached), invalidates their in-flight builds (if
  /// any), and cascades to everything built from them (S4).
  mutating func discard(
    _ keys: [ProviderKey], reason: DiscardReason, into after: inout Aftermath
  ) {
    guard !keys.isEmpty else { return }
    var pending = keys.map { ($0, reason) }
    var seen = Set(keys)
    // What was built from what is recorded on each instance, not kept in reverse: builds
    // happen far more often than discards, so the reverse index is made here.
    let builtFrom = reverseDependencies()
    var removed: [ProviderKey: CacheEntry] = [:]
    var index = 0
    // Breadth first, so events read from the cause outwards.
    while index < pending.count {
      let (key, reason) = pending[index]
      index += 1
      building[key]?.isInvalidated = true
      if let entry = entries.removeValue(forKey: key) {
        forget(entry, key: key)
        removed[key] = entry
        after.events.append(
          .discarded(provider: entry.provider.name, scope: entry.scope.name, reason: reason))
      }
      for dependent in builtFrom[key] ?? [] where seen.insert(dependent).inserted {
        pending.append((dependent, .dependencyDiscarded))
      }
    }
    after.released.append(contentsOf: removed.values.map { $0 as AnyObject })
    after.disposals.append(
      contentsOf: Self.dependentsFirst(removed, builtFrom: builtFrom).filter(\.hasDisposal))
  }

  /// Removes every cached instance, for the pod going away; returns those with hooks,
  /// dependents first.
  /// Removes every cached instance, for the pod going away. Returns them all (to be released
  /// after the lock) and those with hooks, dependents first.
  mutating func discardAll() -> (released: [CacheEntry], disposals: [CacheEntry]) {
    let all = entries
    defer {
      entries = [:]
      scopeMembers = [:]
    }
    // Most pods have no hooks to run: then there is no order to work out.
    guard all.values.contains(where: \.hasDisposal) else { return (Array(all.values), []) }
    let order = Self.dependentsFirst(all, builtFrom: reverseDependencies())
    return (Array(all.values), order.filter(\.hasDisposal))
  }

  /// `entries` ordered so that every instance comes before those it was built from.
  private static func dependentsFirst(
    _ entries: [ProviderKey: CacheEntry], builtFrom: [ProviderKey: [ProviderKey]]
  ) -> [CacheEntry] {
    var order: [CacheEntry] = []
    var visited: Set<ProviderKey> = []
    // Depth first, post-order over "was built from", with an explicit stack: chains of
    // dependents can be deeper than the call stack allows.
    for root in entries.keys where !visited.contains(root) {
      var stack: [(key: ProviderKey, expanded: Bool)] = [(root, false)]
      while let (key, expanded) = stack.popLast() {
        if expanded {
          if let entry = entries[key] { order.append(entry) }
          continue
        }
        guard visited.insert(key).inserted else { continue }
        stack.append((key, true))
        for dependent in builtFrom[key] ?? [] where !visited.contains(dependent) {
          if entries[dependent] != nil { stack.append((dependent, false)) }
        }
      }
    }
    return order
  }

  /// For each provider, the cached instances and in-flight builds made from it.
  private func reverseDependencies() -> [ProviderKey: [ProviderKey]] {
    var result: [ProviderKey: [ProviderKey]] = [:]
    for (key, entry) in entries {
      for dependency in entry.dependencies.keys { result[dependency, default: []].append(key) }
    }
    for (key, frame) in building {
      for dependency in frame.dependencies.keys { result[dependency, default: []].append(key) }
    }
    return result
  }

  /// Removes an entry's bookkeeping.
  mutating func forget(_ entry: CacheEntry, key: ProviderKey) {
    if entry.scope.kind != .singleton { removeMember(key, of: entry.scope.key) }
  }

  private mutating func removeMember(_ key: ProviderKey, of scope: ScopeKey) {
    guard var set = scopeMembers[scope] else { return }
    set.remove(key)
    scopeMembers[scope] = set.isEmpty ? nil : set
  }

  // MARK: Scopes, families and overrides

  /// Discards every instance cached in the given scopes and invalidates their in-flight
  /// builds (S3).
  mutating func clear(scopes: [ScopeInfo.Visit], into after: inout Aftermath) {
    let keys = Set(scopes.map(\.key))
    for frame in building.values where keys.contains(frame.scope.key) {
      frame.isInvalidated = true
    }
    var members: [ProviderKey] = []
    for scope in scopes {
      members.append(contentsOf: scopeMembers[scope.key] ?? [])
    }
    discard(members, reason: .scopeCleared, into: &after)
  }

  /// Every member of `family` the pod knows: cached, being built, or built from.
  func members(of family: FamilyInfo) -> [ProviderKey] {
    var keys: Set<ProviderKey> = []
    for (key, entry) in entries {
      if entry.provider.family === family { keys.insert(key) }
      for (dependency, info) in entry.dependencies where info.family === family {
        keys.insert(dependency)
      }
    }
    for (key, frame) in building {
      if frame.provider.family === family { keys.insert(key) }
      for (dependency, info) in frame.dependencies where info.family === family {
        keys.insert(dependency)
      }
    }
    return Array(keys)
  }

  /// The keys an override of `record`'s provider, or of every member of its family, affects.
  private func keys(overriddenBy record: OverrideRecord, family: FamilyInfo?) -> [ProviderKey] {
    if let family { return members(of: family) }
    return [record.providerKey]
  }

  mutating func install(
    _ record: OverrideRecord, family: FamilyInfo?, into after: inout Aftermath
  ) {
    if let replaced = overrides.updateValue(record, forKey: record.providerKey) {
      after.released.append(replaced)
    }
    after.events.append(.overridden(provider: record.name))
    discard(keys(overriddenBy: record, family: family), reason: .overrideChanged, into: &after)
  }

  mutating func removeOverride(
    _ key: ProviderKey, family: FamilyInfo?, into after: inout Aftermath
  ) {
    guard let record = overrides.removeValue(forKey: key) else { return }
    after.released.append(record)
    after.events.append(.overridden(provider: record.name))
    discard(keys(overriddenBy: record, family: family), reason: .overrideChanged, into: &after)
  }

  /// The override that applies to `provider`: its own, else its family's.
  func override(for provider: ProviderInfo) -> OverrideRecord? {
    if overrides.isEmpty { return nil }
    if let own = overrides[provider.key] { return own }
    if let family = provider.family { return overrides[family.key] }
    return nil
  }

  // MARK: Dependencies

  /// Records that whatever `caller` is building depends on `key`.
  mutating func recordDependency(
    on key: ProviderKey, provider: ProviderInfo, from caller: Pod?
  ) {
    guard let owner = caller?.owner else { return }
    owner.dependencies[key] = provider
  }

  /// Reports dependencies that will be cleared more often than the instance built from them.
  func captiveDependencies(of entry: CacheEntry, events: inout [PodEvent]) {
    guard entry.scope.kind == .singleton || entry.scope.kind == .custom else { return }
    for key in entry.dependencies.keys {
      guard let dependency = entries[key], dependency.scope.kind == .custom,
        !dependency.scope.subtree.contains(entry.scope.key)
      else { continue }
      events.append(
        .captiveDependency(
          holder: entry.provider.name, holderScope: entry.scope.name,
          dependency: dependency.provider.name, dependencyScope: dependency.scope.name))
    }
  }
}
