import ProviderPod
import Testing

@Suite("Dependency graph")
struct DependencyGraphTests {

  @Test("lists cached instances and what each was built from, through always-new providers")
  func nodesAndEdges() {
    let session = instanceProvider("session", scope: FlowScope())
    let fresh = instanceProvider("fresh", scope: AlwaysCreateNewScope(), dependencies: [session])
    let form = instanceProvider("form", scope: StepScope(), dependencies: [fresh, session])
    let config = instanceProvider("config")
    let pod = Pod()
    _ = pod.resolve(form)
    _ = pod.resolve(config)
    let graph = pod.dependencyGraph()
    let sessionNode = DependencyGraph.Node(provider: "session", scope: "FlowScope")
    let formNode = DependencyGraph.Node(provider: "form", scope: "StepScope")
    #expect(
      graph.nodes == [
        DependencyGraph.Node(provider: "config", scope: "SingletonScope"), formNode, sessionNode,
      ])
    #expect(graph.edges == [DependencyGraph.Edge(dependent: formNode, dependency: sessionNode)])
    #expect(graph.dependencies(of: formNode) == [sessionNode])
    #expect(
      graph.description == """
        config (SingletonScope)
        form (StepScope) <- session (FlowScope)
        session (FlowScope)
        """)
  }

  @Test("renders DOT and Mermaid with one group per scope")
  func renderings() {
    let session = instanceProvider("session", scope: FlowScope())
    let form = instanceProvider("say \"hi\"", scope: StepScope(), dependencies: [session])
    let pod = Pod()
    _ = pod.resolve(form)
    let graph = pod.dependencyGraph()
    #expect(
      graph.dot() == """
        digraph ProviderPod {
          rankdir=LR;
          node [shape=box];
          subgraph cluster_0 {
            label="StepScope";
            n0 [label="say \\"hi\\""];
          }
          subgraph cluster_1 {
            label="FlowScope";
            n1 [label="session"];
          }
          n0 -> n1;
        }

        """)
    #expect(
      graph.mermaid() == """
        flowchart LR
          subgraph scope0["StepScope"]
            n0["say #quot;hi#quot;"]
          end
          subgraph scope1["FlowScope"]
            n1["session"]
          end
          n0 --> n1

        """)
  }

  @Test("discarded and dead weak instances are not in the graph")
  func onlyLiveInstances() {
    let session = instanceProvider("session", scope: FlowScope())
    let weak = instanceProvider("weak", scope: WeakScope())
    let pod = Pod()
    _ = pod.resolve(session)
    _ = pod.resolve(weak)  // released at once
    pod.clearCachedInstances(forScope: FlowScope())
    #expect(pod.dependencyGraph().nodes.isEmpty)
  }

  @Test("providers with the same name and scope merge into one node instead of crashing")
  func duplicateNames() {
    let first = instanceProvider("twin")
    let second = instanceProvider("twin")
    let pod = Pod()
    _ = (pod.resolve(first), pod.resolve(second))
    #expect(pod.dependencyGraph().nodes.count == 1)
    #expect(pod.dependencyGraph().dot().contains("n0 [label=\"twin\"]"))
  }
}
