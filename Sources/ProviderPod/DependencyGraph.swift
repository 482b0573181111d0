/// The instances a pod has cached, and which was built from which.
///
/// ```swift
/// print(pod.dependencyGraph().mermaid())
/// ```
///
/// Nodes are the live cached instances, each named by its provider and scope. An edge goes
/// from an instance to one it was built from; an always-new provider in between is skipped,
/// so the edge points at the cached instance behind it. The order is stable: nodes are sorted
/// by provider name, then scope. Providers given the same name and cached in the same scope
/// show as one node: give providers distinct names to tell them apart.
public struct DependencyGraph: Sendable, Equatable {
  /// A cached instance.
  public struct Node: Sendable, Hashable, Comparable {
    /// The provider's ``Provider/name``.
    public let provider: String
    /// The name of the scope the instance is cached in.
    public let scope: String

    /// Creates a node.
    public init(provider: String, scope: String) {
      self.provider = provider
      self.scope = scope
    }

    /// Orders by provider name, then scope.
    public static func < (lhs: Node, rhs: Node) -> Bool {
      (lhs.provider, lhs.scope) < (rhs.provider, rhs.scope)
    }
  }

  /// `dependent` was built from `dependency`.
  public struct Edge: Sendable, Hashable, Comparable {
    /// The instance that was built.
    public let dependent: Node
    /// An instance it was built from.
    public let dependency: Node

    /// Creates an edge.
    public init(dependent: Node, dependency: Node) {
      self.dependent = dependent
      self.dependency = dependency
    }

    /// Orders by dependent, then dependency.
    public static func < (lhs: Edge, rhs: Edge) -> Bool {
      (lhs.dependent, lhs.dependency) < (rhs.dependent, rhs.dependency)
    }
  }

  /// Every cached instance, sorted.
  public let nodes: [Node]
  /// Every "built from" relation between cached instances, sorted.
  public let edges: [Edge]

  /// Creates a graph; nodes and edges are sorted, and duplicates dropped.
  public init(nodes: [Node], edges: [Edge]) {
    self.nodes = Set(nodes).sorted()
    self.edges = Set(edges).sorted()
  }

  /// The instances `node` was built from.
  public func dependencies(of node: Node) -> [Node] {
    edges.filter { $0.dependent == node }.map(\.dependency)
  }

  /// The graph in Graphviz DOT, one cluster per scope:
  /// `swift run ExampleCLI --graph dot | dot -Tsvg > graph.svg`.
  public func dot() -> String {
    let ids = identifiers()
    var lines = ["digraph ProviderPod {", "  rankdir=LR;", "  node [shape=box];"]
    for (index, scope) in scopes().enumerated() {
      lines.append("  subgraph cluster_\(index) {")
      lines.append("    label=\"\(dotEscaped(scope))\";")
      for node in nodes where node.scope == scope {
        lines.append("    \(ids[node]!) [label=\"\(dotEscaped(node.provider))\"];")
      }
      lines.append("  }")
    }
    for edge in edges {
      lines.append("  \(ids[edge.dependent]!) -> \(ids[edge.dependency]!);")
    }
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }

  /// The graph as a Mermaid flowchart, one subgraph per scope; GitHub renders it in Markdown.
  public func mermaid() -> String {
    let ids = identifiers()
    var lines = ["flowchart LR"]
    for (index, scope) in scopes().enumerated() {
      lines.append("  subgraph scope\(index)[\"\(mermaidEscaped(scope))\"]")
      for node in nodes where node.scope == scope {
        lines.append("    \(ids[node]!)[\"\(mermaidEscaped(node.provider))\"]")
      }
      lines.append("  end")
    }
    for edge in edges {
      lines.append("  \(ids[edge.dependent]!) --> \(ids[edge.dependency]!)")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  private func identifiers() -> [Node: String] {
    Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($1, "n\($0)") })
  }

  /// Scope names in order of first appearance among the sorted nodes.
  private func scopes() -> [String] {
    var seen: Set<String> = []
    return nodes.map(\.scope).filter { seen.insert($0).inserted }
  }

  private func dotEscaped(_ text: String) -> String {
    text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
  }

  private func mermaidEscaped(_ text: String) -> String {
    text.replacingAll("\"", with: "#quot;")
  }
}

extension DependencyGraph: CustomStringConvertible {
  /// One line per instance, with what it was built from:
  /// `EmailStepViewModel (EmailStepScope) <- SignUpSession (SignUpFlowScope)`.
  public var description: String {
    nodes.map { node in
      let dependencies = self.dependencies(of: node)
      let line = "\(node.provider) (\(node.scope))"
      guard !dependencies.isEmpty else { return line }
      return line + " <- "
        + dependencies.map { "\($0.provider) (\($0.scope))" }.joined(separator: ", ")
    }.joined(separator: "\n")
  }
}

extension String {
  /// Replaces every occurrence of `target`; a local helper so the library needs no Foundation.
  fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
    var result = ""
    for character in self {
      if character == target { result += replacement } else { result.append(character) }
    }
    return result
  }
}
