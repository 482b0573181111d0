/// The changes a user makes (clearing scopes and families, adding and removing overrides),
/// decided under the lock: each discards what it affects and leaves the rest to the caller.
extension EngineState {
  /// Discards every instance cached in the given scopes by `pod` and by the pods below it
  /// that do not own the scope; builds running in them go stale.
  mutating func clear(scopes: [ScopeKey], in pod: PodRecord, into after: inout Aftermath) {
    var members: [Slot] = []
    for scope in scopes {
      var pending = [pod]
      while let next = pending.popLast() {
        if next !== pod, next.ownedScopes.contains(scope) { continue }
        next.scopeEpochs[scope, default: 0] += 1
        // Every member goes, so the membership goes whole rather than member by member.
        if let cleared = next.scopeMembers.removeAll(of: scope) {
          for slot in cleared { slot.memberIndex = -1 }
          if members.isEmpty { members = cleared } else { members.append(contentsOf: cleared) }
        }
        pending.append(contentsOf: next.children)
      }
    }
    if !listedRunning.isEmpty { invalidateBuildsGoneStale(released: &after.released) }
    discard(members, reason: .scopeCleared, into: &after)
  }

  /// The slots of every member of `family` that `pod` knows: cached, being built, or built
  /// from.
  func members(of family: FamilyInfo, in pod: PodRecord) -> [Slot] {
    (pod.familySlots[family.key] ?? []).compactMap { pod.slots[$0] }
  }

  /// The slots an override of `record`'s provider (or of every member of its family) in
  /// `pod` affects: the provider's own in `pod` (every member's, for a family) and in the pods
  /// below that do not override it themselves, and what those pods share from above that was
  /// built from it, since they now build it differently.
  private func slots(overriddenBy record: OverrideRecord, in pod: PodRecord) -> [Slot] {
    func own(in pod: PodRecord) -> [Slot] {
      if let family = record.family { return members(of: family, in: pod) }
      return pod.slots[record.providerKey].map { [$0] } ?? []
    }
    var result: [Slot] = []
    // Below `pod`, a pod's own override is nearer than this one, for it and the pods below
    // it: its override of a member wins over this family's, its override of the family over
    // this member's. For a family, that holds member by member.
    var pending: [(pod: PodRecord, overriddenMembers: Set<ProviderKey>)] = [(pod, [])]
    while let (next, inherited) = pending.popLast() {
      var overriddenMembers = inherited
      if next !== pod {
        if next.overrides[record.providerKey] != nil { continue }
        if let family = record.provider?.family, next.overrides[family.key] != nil { continue }
        if let family = record.family {
          for other in next.overrides.values where other.provider?.family?.key == family.key {
            overriddenMembers.insert(other.providerKey)
          }
        }
      }
      let slots = own(in: next)
      result.append(
        contentsOf: overriddenMembers.isEmpty
          ? slots : slots.filter { !overriddenMembers.contains($0.key) })
      pending.append(contentsOf: next.children.map { ($0, overriddenMembers) })
    }
    guard pod.parent != nil else { return result }
    // What this pod, or its ancestor below the root, read of the root's instances unrecorded
    // there is recorded first (see `EngineState+UnrecordedReads`).
    var below = pod
    while let above = below.parent, above !== root { below = above }
    if below.hasUnrecordedReads { Self.recordUnrecordedReads(of: below) }
    // Follow "built from" out of the ancestors' instances, keeping what lives in this pod or
    // below; other pods' instances are left alone.
    var frontier: [Slot] = []
    var ancestor = pod.parent
    while let next = ancestor {
      frontier.append(contentsOf: own(in: next))
      ancestor = next.parent
    }
    var seen = Set(frontier.map(\.id))
    while let slot = frontier.popLast() {
      for dependent in slot.dependents where seen.insert(dependent.slot.id).inserted {
        let owner = dependent.slot.pod
        if pod.isAncestor(ofOrSameAs: owner) {
          result.append(dependent.slot)
        } else if owner.isAncestor(ofOrSameAs: pod) {
          frontier.append(dependent.slot)
        }
      }
    }
    return result
  }

  mutating func install(
    _ record: OverrideRecord, in pod: PodRecord, into after: inout Aftermath
  ) {
    if let replaced = pod.overrides.updateValue(record, forKey: record.providerKey) {
      after.released.append(replaced)
    }
    if pod === root { noteRootOverrides() }
    after.events.append(ReportedEvent(pod: pod, event: .overridden(provider: record.name)))
    if pod.parent != nil, !listedRunning.isEmpty {
      invalidateBuildsNowShadowed(released: &after.released)
    }
    discard(slots(overriddenBy: record, in: pod), reason: .overrideChanged, into: &after)
  }

  mutating func removeOverride(
    _ key: ProviderKey, in pod: PodRecord, into after: inout Aftermath
  ) {
    guard let record = pod.overrides.removeValue(forKey: key) else { return }
    after.released.append(record)
    if pod === root { noteRootOverrides() }
    after.events.append(ReportedEvent(pod: pod, event: .overridden(provider: record.name)))
    discard(slots(overriddenBy: record, in: pod), reason: .overrideChanged, into: &after)
  }

  /// Reports dependencies that will be cleared more often than the instance built from them.
  static func captiveDependencies(
    of entry: CacheEntry, cachedIn holder: Slot, events: inout [ReportedEvent]
  ) {
    let scope = entry.scope(of: holder.info)
    guard scope.kind == .singleton || scope.kind == .custom else { return }
    var seen: Set<SlotID> = []
    for slot in entry.dependencies where seen.insert(slot.id).inserted {
      guard let dependency = slot.entry?.scope(of: slot.info), dependency.kind == .custom,
        !dependency.subtree.contains(scope.key)
      else { continue }
      events.append(
        ReportedEvent(
          pod: holder.pod,
          event: .captiveDependency(
            holder: holder.info.name, holderScope: scope.name,
            dependency: slot.info.name, dependencyScope: dependency.name)))
    }
  }
}
