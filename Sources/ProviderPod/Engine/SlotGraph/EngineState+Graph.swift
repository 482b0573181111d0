extension EngineState {
  /// The live instances `pod` caches, the edges between them, and the edges from them to
  /// the instances of the pods above that they were built from (which appear as nodes too).
  /// Weak instances found alive are added to `held`, for the caller to let go of after the
  /// lock: the last reference dropped here would run the instance's deinit under the lock.
  func dependencyGraph(of pod: PodRecord, holding held: inout [AnyObject]) -> DependencyGraph {
    func node(_ slot: Slot) -> DependencyGraph.Node? {
      guard let entry = slot.entry else { return nil }
      if !entry.isStrong {
        guard let object = entry.weakObject else { return nil }
        held.append(object)
      }
      return DependencyGraph.Node(provider: slot.info.name, scope: entry.scope(of: slot.info).name)
    }
    var nodes: [DependencyGraph.Node] = []
    var edges: [DependencyGraph.Edge] = []
    for slot in pod.slots where slot.linkTarget == nil {
      guard let dependent = node(slot) else { continue }
      nodes.append(dependent)
      // A slot listed twice (see `Frame.dependencies`) makes one edge: the graph is a set.
      for dependency in slot.entry!.dependencies {
        guard let target = node(dependency) else { continue }
        if dependency.pod !== pod { nodes.append(target) }
        edges.append(DependencyGraph.Edge(dependent: dependent, dependency: target))
      }
    }
    return DependencyGraph(nodes: nodes, edges: edges)
  }
}
