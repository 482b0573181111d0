/// Everything a pod knows, guarded by one lock. Every method here runs under that lock and
/// never calls user code.
struct PodState {
  /// Cached instances by provider.
  var entries: [ProviderKey: CacheEntry] = [:]
  /// Single-flight builds in progress, by provider.
  var building: [ProviderKey: Pod] = [:]
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

  // MARK: Discarding

  /// Discards `key`'s instance (if any), invalidates its in-flight build (if any), and
  /// cascades to everything built from it (S4).
  mutating func discard(
    _ key: ProviderKey, reason: DiscardReason, events: inout [PodEvent]
  ) {
    discard([key], reason: reason, events: &events)
  }

  mutating func discard(
    _ keys: [ProviderKey], reason: DiscardReason, events: inout [PodEvent]
  ) {
    var pending = keys.map { ($0, reason) }
    var seen = Set(keys)
    // What was built from what is recorded on each instance, not kept in reverse: builds
    // happen far more often than discards, so the reverse index is made here when needed.
    var builtFrom: [ProviderKey: [ProviderKey]]?
    var index = 0
    // Breadth first, so events read from the cause outwards.
    while index < pending.count {
      let (key, reason) = pending[index]
      index += 1
      building[key]?.isInvalidated = true
      if let entry = entries.removeValue(forKey: key) {
        forget(entry, key: key)
        events.append(
          .discarded(provider: entry.provider.name, scope: entry.scope.name, reason: reason))
      }
      if builtFrom == nil { builtFrom = reverseDependencies() }
      for dependent in builtFrom![key] ?? [] where seen.insert(dependent).inserted {
        pending.append((dependent, .dependencyDiscarded))
      }
    }
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

  // MARK: Scopes and overrides

  /// Discards every instance cached in the given scopes and invalidates their in-flight
  /// builds (S3).
  mutating func clear(scopes: [ScopeInfo.Visit], events: inout [PodEvent]) {
    let keys = Set(scopes.map(\.key))
    for frame in building.values where keys.contains(frame.scope.key) {
      frame.isInvalidated = true
    }
    var members: [ProviderKey] = []
    for scope in scopes {
      members.append(contentsOf: scopeMembers[scope.key] ?? [])
    }
    discard(members, reason: .scopeCleared, events: &events)
  }

  mutating func install(_ record: OverrideRecord, events: inout [PodEvent]) {
    overrides[record.providerKey] = record
    events.append(.overridden(provider: record.provider.name))
    discard(record.providerKey, reason: .overrideChanged, events: &events)
  }

  mutating func removeOverride(
    _ key: ProviderKey, events: inout [PodEvent]
  ) {
    guard let record = overrides.removeValue(forKey: key) else { return }
    events.append(.overridden(provider: record.provider.name))
    discard(key, reason: .overrideChanged, events: &events)
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
