extension EngineState {
  /// The earlier providers made by the same expression as `provider` whose cached instance
  /// or override the pod still holds. Records `provider` as the latest of its kind if the
  /// pod caches it. Live weak instances found are added to `held`, to be let go of after the
  /// lock. Touches only the pod's own tables: it runs in a shared section of a request pod,
  /// under the pod's lock, as well as under the tree's lock.
  static func lookalikeSuspects(
    of provider: ProviderInfo, in pod: PodRecord, held: inout [AnyObject]
  ) -> [LookalikeSuspect] {
    let slots = pod.slots
    guard let lookalike = Lookalike(provider) else { return [] }
    var suspects: [LookalikeSuspect] = []
    if slots[provider.key]?.entry != nil,
      let previous = pod.lookalikes.record(provider.key, for: lookalike, slots: slots),
      previous != provider.key, let slot = slots[previous], let entry = slot.entry,
      isLookalike(slot.info, of: provider, lookalike: lookalike)
    {
      if entry.isStrong {
        suspects.append(.provider(slot.info))
      } else if let object = entry.weakObject {
        held.append(object)
        suspects.append(.provider(slot.info))
      }
    }
    guard !pod.overrides.isEmpty else { return suspects }
    let family = provider.family.map(Lookalike.init)
    for record in pod.overrides.values {
      if let other = record.provider, isLookalike(other, of: provider, lookalike: lookalike) {
        suspects.append(.provider(other))
      } else if let other = record.family, other !== provider.family, Lookalike(other) == family {
        suspects.append(.family(other))
      }
    }
    return suspects
  }

  /// Whether `other` is another provider made by the expression that made `provider`: a
  /// family's members never are, among themselves.
  private static func isLookalike(
    _ other: ProviderInfo, of provider: ProviderInfo, lookalike: Lookalike
  ) -> Bool {
    guard other !== provider, Lookalike(other) == lookalike else { return false }
    return other.family == nil || other.family !== provider.family
  }
}

extension PodEngine {
  /// After a build in an observed pod: reports its events to the observers, with
  /// `.providerRecreated` if the provider was made again.
  func reportBuild(of provider: ProviderInfo, events: [ReportedEvent]) {
    var events = events
    noteRecreation(of: provider, into: &events)
    report(events)
  }

  /// After a build in an observed pod: adds `.providerRecreated` to `events` if the pod holds
  /// the instance or override of an earlier provider made by the same expression that is now
  /// gone. Takes the lock once to look; checks what it found outside it.
  func noteRecreation(of provider: ProviderInfo, into events: inout [ReportedEvent]) {
    guard let declaration = provider.declaration ?? provider.family?.declaration else { return }
    var held: [AnyObject] = []
    let pod = self.pod
    let suspects = lookalikeSuspects(of: provider, held: &held)
    defer { withExtendedLifetime(held) {} }
    guard suspects.contains(where: \.isGone) else { return }
    events.append(
      ReportedEvent(
        pod: pod,
        event: .providerRecreated(provider: provider.name, declaration: declaration.site)))
  }

  /// The look itself: in a shared section for a request pod, beside its siblings, since it
  /// reads and writes only the pod's own tables; else under the tree's lock.
  private func lookalikeSuspects(
    of provider: ProviderInfo, held: inout [AnyObject]
  ) -> [LookalikeSuspect] {
    let pod = self.pod
    if runsSharedSections,
      let suspects = state.withShared({ _ in
        pod.lockSharedSections()
        defer { pod.unlockSharedSections() }
        return EngineState.lookalikeSuspects(of: provider, in: pod, held: &held)
      })
    {
      return suspects
    }
    return state.withLock { _ in EngineState.lookalikeSuspects(of: provider, in: pod, held: &held) }
  }
}

extension Pod {
  /// How many lookalike keys the pod keeps, for tests that unobserved pods keep none and
  /// observed ones stay proportional to what they cache.
  var lookalikeCount: Int {
    let pod = engine.pod
    return engine.state.withLock { _ in pod.lookalikes.latest.count }
  }
}
