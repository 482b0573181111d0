/// Cycle reports: a provider that needs itself, in one chain of resolves or across threads
/// that wait for each other's builds.
///
/// Checks cost nothing on the usual path. A cached provider is checked only when a build of
/// it is running, by comparing depths up the chain. Always-new providers have no running
/// build to find, so a chain of them that repeats itself is noticed as it grows, at a cost
/// per level that does not depend on how deep the chain is:
/// - Every frame carries a checkpoint: the builder of the frame at the last depth that is a
///   power of two, from 16 on. A nested always-new build compares its builder with its
///   caller's checkpoint, one comparison per level. A chain that repeats every L builds from
///   depth P on matches at the first checkpoint at or past L, P and 16, L levels later:
///   before three times the largest of them. Only a match walks the chain, to report the
///   loop. Scanning the chain at each checkpoint instead, with a table of positions, found
///   the same loops but cost a chain of 100 nearly three times what ten chains of 10 cost.
/// - A runaway chain need not repeat at regular intervals: a builder that picks what to
///   resolve from a counter can keep each checkpoint's provider out of the levels after it.
///   So the whole chain is also scanned for a repeated provider at depths 4,096, 8,192 and so
///   on: chains shallower than that (apps' chains are) never pay for it, and deeper ones
///   visit at most two frames per level in all.
/// A walk that finds no repeat (the earlier build is over: above it, nothing waits for this
/// chain) reports nothing, and the chain goes on.
///
/// What repeats is a builder, not just a provider: a child pod's override of an always-new
/// provider that builds on its parent's instance (`{ _ in parent.resolve(p) + 1 }`) resolves the
/// same provider inside its own build, through the provider's own builder, and ends there.
/// Only the same builder again (the same override, or the provider's own) goes round forever.
extension EngineState {
  /// The report for resolving `provider` from `caller`, whose chain contains `running`, a
  /// build of the same provider.
  func cycleReport(resolving provider: ProviderInfo, from caller: Frame, through running: Frame)
    -> String
  {
    var names: [String] = []
    var next: Frame? = caller
    while let frame = next {
      // A build in between may be over (its context resolves on another thread): it no
      // longer knows its provider, and no longer takes part.
      if let info = frame.info { names.append(info.cycleLabel) }
      if frame === running { break }
      next = frame.parent
    }
    return Self.cycleReport(names.reversed() + [provider.name], acrossThreads: false)
  }

  /// Whether a frame at `depth` is a checkpoint: its provider is the one builds nested in it
  /// are compared with (see above).
  @inline(__always)
  static func isCheckpoint(depth: Int) -> Bool {
    depth >= 16 && depth & (depth - 1) == 0
  }

  /// The report for an always-new `provider`, built by `builder`, resolved from `caller`, if
  /// the chain repeats that builder. Walks the chain only on a checkpoint's match or at the
  /// depths of the full scan (see above).
  @inline(__always)
  static func repeatedBuilderReport(
    resolving provider: ProviderInfo, _ builder: BuilderKey, from caller: Frame
  ) -> String? {
    let depth = caller.depth + 1
    guard caller.checkpoint == builder || (depth >= 4_096 && depth & (depth - 1) == 0)
    else { return nil }
    return scanForRepeatedBuilder(resolving: provider, builder, from: caller)
  }

  @inline(never)
  private static func scanForRepeatedBuilder(
    resolving provider: ProviderInfo, _ builder: BuilderKey, from caller: Frame
  ) -> String? {
    // Innermost first: the first builder seen twice closes the shortest loop around it.
    var chain = [provider]
    var positions: [BuilderKey: Int] = [builder: 0]
    chain.reserveCapacity(caller.depth + 2)
    positions.reserveCapacity(caller.depth + 2)
    var next: Frame? = caller
    // Up to the first build that is over: above it, nothing waits for this chain.
    while let frame = next, frame.isBuilding, let info = frame.info, let key = frame.builderKey {
      if let first = positions[key] {
        let loop = [info] + chain[(first + 1)...].reversed() + [info]
        let labels = loop.dropLast().map(\.cycleLabel) + [info.name]
        return Self.cycleReport(labels, acrossThreads: false)
      }
      positions[key] = chain.count
      chain.append(info)
      next = frame.parent
    }
    return nil
  }

  /// The report for `waiter` blocking on `target`, if `target` is itself (through other
  /// blocked builds) waiting for a build in the waiter's own chain: a deadlock.
  func crossThreadCycleReport(waiter: Frame, target: Frame) -> String? {
    let mine = waiter.activeChain
    let mineIDs = Set(mine.map(ObjectIdentifier.init))
    // Breadth first over the builds `target` waits for, remembering how each was reached.
    var queue = [target]
    var reachedBy: [ObjectIdentifier: (build: Frame, wait: Frame)] = [:]
    var seen: Set<ObjectIdentifier> = [ObjectIdentifier(target)]
    var index = 0
    while index < queue.count {
      let build = queue[index]
      index += 1
      for wait in waits.values where build.isAncestor(ofOrSameAs: wait.waiter) {
        let blocked = wait.target
        if mineIDs.contains(ObjectIdentifier(blocked)) {
          return crossThreadReport(
            mine: mine, target: target, last: (build, wait.waiter), closing: blocked,
            reachedBy: reachedBy)
        }
        if seen.insert(ObjectIdentifier(blocked)).inserted {
          reachedBy[ObjectIdentifier(blocked)] = (build, wait.waiter)
          queue.append(blocked)
        }
      }
    }
    return nil
  }

  private func crossThreadReport(
    mine: [Frame], target: Frame, last: (build: Frame, wait: Frame),
    closing: Frame, reachedBy: [ObjectIdentifier: (build: Frame, wait: Frame)]
  ) -> String {
    // Names from `closing` down to the waiter, then each blocked build down to the frame in
    // it that waits for the next, back to `closing`.
    var names = mine[...mine.firstIndex { $0 === closing }!].reversed().map(\.info!.cycleLabel)
    var hops: [(build: Frame, wait: Frame)] = [last]
    var current = last.build
    while current !== target, let hop = reachedBy[ObjectIdentifier(current)] {
      hops.append(hop)
      current = hop.build
    }
    for hop in hops.reversed() {
      let segment = hop.wait.activeChain
      let end = segment.firstIndex { $0 === hop.build } ?? segment.count - 1
      names.append(contentsOf: segment[...end].reversed().map(\.info!.cycleLabel))
    }
    names.append(closing.info!.name)
    return Self.cycleReport(names, acrossThreads: true)
  }

  static func cycleReport(_ names: [String], acrossThreads: Bool) -> String {
    let chain = names.joined(separator: " -> ")
    let kind = acrossThreads ? "dependency cycle across threads" : "dependency cycle"
    return """
      ProviderPod: \(kind): \(chain)
      Each provider in the chain needs the next one to build its value, so none of them can \
      be built. Break the cycle: remove one of these dependencies, or move what they share \
      into a provider they can all depend on.
      """
  }
}

/// A builder a build runs: a provider's own, or one of its overrides. Builds in one chain are
/// compared by it to tell a chain that goes round forever from one that decorates.
struct BuilderKey: Hashable {
  let provider: ProviderKey
  /// The override's identity; nil for the provider's own builder.
  let override: ObjectIdentifier?
}
