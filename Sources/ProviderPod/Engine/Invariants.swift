extension EngineState {
  /// The engine's bookkeeping problems, empty when it is sound: every "built from" link is
  /// counted exactly once on both sides, every cached instance in a clearable scope is a
  /// member of it, families know their members, and no slot is kept without a use.
  /// Tests check it after operations (`pod.invariantViolations`), in the manner of
  /// swift-collections' `_checkInvariants()`, reporting problems with `#expect`.
  func invariantViolations() -> [String] {
    var problems: [String] = []
    var expected: [ProviderKey: [ProviderKey: Int]] = [:]
    var running = 0
    for (key, slot) in slots {
      let name = slot.info.name
      if slot.key != key { problems.append("\(name): slot filed under another key") }
      if slot.isUnused { problems.append("\(name): slot kept with nothing in it") }
      if let family = slot.info.family, familySlots[family.key]?.contains(key) != true {
        problems.append("\(name): missing from its family's members")
      }
      if let entry = slot.entry {
        for (dependency, dependencySlot) in entry.dependencies {
          if slots[dependency] !== dependencySlot {
            problems.append("\(name): built from \(dependencySlot.info.name), which has no slot")
          }
          expected[dependency, default: [:]][key, default: 0] += 1
        }
        let scope = entry.scope
        if scope.kind != .singleton, scopeMembers[scope.key]?.contains(key) != true {
          problems.append("\(name): cached in \(scope.name) but not a member of it")
        }
      }
      if let build = slot.build, build.isBuilding {
        running += 1
        for (dependency, dependencySlot) in build.dependencies {
          if slots[dependency] !== dependencySlot {
            problems.append("\(name): building from \(dependencySlot.info.name), which has no slot")
          }
          expected[dependency, default: [:]][key, default: 0] += 1
        }
      }
    }
    for (key, slot) in slots {
      let wanted = expected[key] ?? [:]
      // A stale build that is no longer its slot's newest still holds counts until it ends,
      // so counts may exceed what is found here only while builds run.
      for (dependent, count) in wanted where (slot.dependents[dependent] ?? 0) < count {
        problems.append("\(slot.info.name): dependent count for \(dependent) too low")
      }
      if runningBuilds == 0 && slot.dependents != wanted {
        problems.append("\(slot.info.name): dependents \(slot.dependents) but found \(wanted)")
      }
    }
    for (scope, members) in scopeMembers {
      if members.isEmpty { problems.append("empty membership kept for a scope") }
      for key in members where slots[key]?.entry?.scope.key != scope {
        problems.append("\(key.address): member of a scope it is not cached in")
      }
    }
    for (family, members) in familySlots {
      if members.isEmpty { problems.append("empty member list kept for a family") }
      for key in members where slots[key]?.info.family?.key != family {
        problems.append("\(key.address): listed as a family member without a slot")
      }
    }
    if runningBuilds < running { problems.append("running builds undercounted") }
    if runningBuilds == 0, !waits.isEmpty { problems.append("waits left with no build running") }
    for frame in spareFrames where frame.phase != .idle {
      problems.append("a spare frame is not idle")
    }
    return problems
  }
}

extension Pod {
  /// The engine's bookkeeping problems, for tests that report them with `#expect`.
  var invariantViolations: [String] {
    engine.state.withLock { $0.invariantViolations() }
  }

  /// How many providers the engine keeps a slot for, for tests of what a pod retains.
  var slotCount: Int {
    engine.state.withLock { $0.slots.count }
  }
}

extension Pod {
  /// How many frames wait for reuse, for tests that builds allocate no frame of their own.
  var spareFrameCount: Int {
    engine.state.withLock { $0.spareFrames.count }
  }
}
