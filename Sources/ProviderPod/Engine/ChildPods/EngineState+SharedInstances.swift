/// How a child pod decides between its parent's instance and one of its own.
///
/// A provider is shadowed in a child when the child overrides it, owns its scope, or when its
/// instance is built, directly or transitively, from a shadowed provider. Everything else is
/// the parent's. The pod knows what each instance was built from, so nobody lists
/// dependencies by hand: a parent's instance is shared only after checking that nothing it
/// was built from is shadowed on the way down, and the child then keeps a link to it.
extension EngineState {
  enum Placement {
    /// Share this ancestor's cached instance.
    case shared(Slot)
    /// Build in (or join the build running in) this pod.
    case build(in: PodRecord)
  }

  /// Where `pod` finds `provider`'s instance: an ancestor's to share, or the pod to build it
  /// in. `pod` has no instance of its own; `overridePod` is the nearest pod that overrides the
  /// provider.
  func placement(
    of provider: ProviderInfo, scope: ScopeKey, overriddenIn overridePod: PodRecord?,
    from pod: PodRecord
  ) -> Placement {
    let key = provider.key
    var current = pod
    while true {
      if let slot = current.slots[key] {
        if current !== pod, slot.entry != nil {
          let target = slot.linkTarget ?? slot
          if let pod = shallowestShadowing(target, from: pod, below: current) {
            return .build(in: pod)
          }
          return .shared(target)
        }
        // A build in progress is joined: whatever it builds is valid here, or it ends up
        // deeper and this resolve looks again.
        if let running = slot.build, !isStale(running) { return .build(in: current) }
      }
      guard let parent = current.parent, !current.shadows(scope: scope, overriddenIn: overridePod)
      else { return .build(in: current) }
      current = parent
    }
  }

  /// Whether a pod from `pod` up to (not including) `home` shadows `slot`'s provider or
  /// something its instance was built from: the instance, cached in `home`, is not `pod`'s.
  func shadowsSince(_ slot: Slot, from pod: PodRecord, below home: PodRecord) -> Bool {
    guard home.isAncestor(ofOrSameAs: pod), let scope = slot.entry?.scopeKey(of: slot.info) else {
      return false
    }
    var next: PodRecord? = pod
    while let current = next, current !== home {
      if current.shadows(slot.info, in: scope) { return true }
      next = current.parent
    }
    return shallowestShadowing(slot, from: pod, below: home) != nil
  }

  /// The shallowest pod from `pod` up to (not including) its ancestor `home` that shadows
  /// something `target`'s instance was built from, directly or transitively; nil if none
  /// does, and the instance can be shared. An instance built from nothing is shared without
  /// looking at the pods at all: a request's child pod shares its app's singletons that way.
  @inline(__always)
  func shallowestShadowing(
    _ target: Slot, from pod: PodRecord, below home: PodRecord
  ) -> PodRecord? {
    Self.shallowestShadowing(target, from: pod, below: home)
  }

  static func shallowestShadowing(
    _ target: Slot, from pod: PodRecord, below home: PodRecord
  ) -> PodRecord? {
    // Asked of the entry where it is: a copy retains everything it holds, and the entry is
    // an ancestor's, which every request's pod reads.
    guard target.entry?.dependencies.isEmpty == false, let entry = target.entry else {
      return nil
    }
    // The pods in between that can shadow anything, deepest first.
    var shadowing: [PodRecord] = []
    var next: PodRecord? = pod
    while let current = next, current !== home {
      if !current.overrides.isEmpty || !current.ownedScopes.isEmpty { shadowing.append(current) }
      next = current.parent
    }
    guard !shadowing.isEmpty else { return nil }
    var found: PodRecord?
    var pending = entry.dependencies
    var seen = Set(pending.map(\.id))
    while let slot = pending.popLast() {
      // A slot with no instance (an always-new provider's) has the scope of the override
      // that applies where it is, which may not be the provider's own.
      let scope = slot.entry?.scopeKey(of: slot.info) ?? slot.pod.scope(of: slot.info).key
      // Shallowest first: a deeper pod cannot improve on a shallower one.
      for pod in shadowing.reversed() {
        if let found, found.depth <= pod.depth { break }
        if pod.shadows(slot.info, in: scope) {
          found = pod
          break
        }
      }
      if let found, found === shadowing.last { return found }
      guard let dependencies = slot.entry?.dependencies else { continue }
      for dependency in dependencies where seen.insert(dependency.id).inserted {
        pending.append(dependency)
      }
    }
    return found
  }
}
