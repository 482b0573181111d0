/// Cycle reports (S7): a provider that needs itself, in one chain of resolves or across
/// threads that wait for each other's builds.
extension PodState {
  /// The report for resolving `key` from `caller`, if `key` is already being built in the
  /// caller's own chain.
  func cycleReport(
    resolving key: ProviderKey, provider: ProviderInfo, from caller: Pod
  ) -> String? {
    var next: Pod? = caller
    var found = false
    while let frame = next, frame.isActive {
      if frame.key == key {
        found = true
        break
      }
      next = frame.parent
    }
    guard found else { return nil }
    let chain = caller.activeChain
    let loop = chain[...chain.firstIndex { $0.key == key }!].reversed()
    return Self.cycleReport(loop.map(\.provider.cycleLabel) + [provider.name], acrossThreads: false)
  }

  /// The report for `waiter` blocking on `target`, if `target` is itself (through other
  /// blocked builds) waiting for a build in the waiter's own chain: a deadlock.
  func crossThreadCycleReport(waiter: Pod, target: Pod) -> String? {
    let mine = waiter.activeChain
    let mineIDs = Set(mine.map(ObjectIdentifier.init))
    // Breadth first over the builds `target` waits for, remembering how each was reached.
    var queue = [target]
    var reachedBy: [ObjectIdentifier: (build: Pod, wait: Pod)] = [:]
    var seen: Set<ObjectIdentifier> = [ObjectIdentifier(target)]
    var index = 0
    while index < queue.count {
      let build = queue[index]
      index += 1
      for wait in waits.values where wait.waiter.activeChain.contains(where: { $0 === build }) {
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
    mine: [Pod], target: Pod, last: (build: Pod, wait: Pod),
    closing: Pod, reachedBy: [ObjectIdentifier: (build: Pod, wait: Pod)]
  ) -> String {
    // Names from `closing` down to the waiter, then each blocked build down to the frame in
    // it that waits for the next, back to `closing`.
    var names = mine[...mine.firstIndex { $0 === closing }!].reversed().map(\.provider.cycleLabel)
    var hops: [(build: Pod, wait: Pod)] = [last]
    var current = last.build
    while current !== target, let hop = reachedBy[ObjectIdentifier(current)] {
      hops.append(hop)
      current = hop.build
    }
    for hop in hops.reversed() {
      let segment = hop.wait.activeChain
      let end = segment.firstIndex { $0 === hop.build } ?? segment.count - 1
      names.append(contentsOf: segment[...end].reversed().map(\.provider.cycleLabel))
    }
    names.append(closing.provider.name)
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
