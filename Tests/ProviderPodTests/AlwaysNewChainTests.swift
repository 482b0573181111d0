import Foundation
import Testing

@testable import ProviderPod

/// This file's name, as default provider names and cycle reports give it.
private let thisFileName = fileName()

// Global, the way users declare providers; exit tests cannot capture locals.
let loopFirstLine = #line + 1
let loopFirst: Provider<Int> = Provider(scope: AlwaysCreateNewScope(), name: "loopFirst") {
  pod in pod.resolve(loopSecond) + 1
}
let loopSecondLine = #line + 1
let loopSecond: Provider<Int> = Provider(scope: AlwaysCreateNewScope(), name: "loopSecond") {
  pod in pod.resolve(loopThird) + 1
}
let loopThirdLine = #line + 1
let loopThird: Provider<Int> = Provider(scope: AlwaysCreateNewScope(), name: "loopThird") {
  pod in pod.resolve(loopFirst) + 1
}

let loopOfForty: ProviderFamily<Int, Int> = ProviderFamily(
  scope: AlwaysCreateNewScope(), name: "loopOfForty"
) { pod, index in pod.resolve(loopOfForty((index + 1) % 40)) + 1 }

/// Nested always-new builds so far in a runaway chain with no period.
nonisolated(unsafe) var runawayDepth = 0

/// A runaway chain of two providers that switch at every power of two: each one is absent
/// for as long as the other was at the last switch, so no periodic pattern ever shows.
let runawayPing: Provider<Int> = Provider(scope: AlwaysCreateNewScope(), name: "runawayPing") {
  pod in runawayNext(pod)
}
let runawayPong: Provider<Int> = Provider(scope: AlwaysCreateNewScope(), name: "runawayPong") {
  pod in runawayNext(pod)
}

func runawayNext(_ pod: BuildContext) -> Int {
  runawayDepth += 1
  // Ping for depths in (1, 2], (4, 8], (16, 32]..., pong in between.
  let band = Int.bitWidth - (runawayDepth - 1).leadingZeroBitCount
  return pod.resolve(band % 2 == 1 ? runawayPing : runawayPong) + 1
}

/// The three rotations of the loop of three, each closing on the provider it starts with.
private let loopOfThreeReports: [String] = {
  let labels = [
    ("loopFirst", loopFirstLine), ("loopSecond", loopSecondLine), ("loopThird", loopThirdLine),
  ]
  return (0..<3).map { start in
    let loop = (0..<3).map { labels[(start + $0) % 3] }
    return loop.map { "\($0.0) (\(thisFileName):\($0.1))" }.joined(separator: " -> ")
      + " -> \(loop[0].0)\n"
  }
}()

/// `depth` distinct always-new providers, each resolving the one below; returns the top one.
private func distinctChain(depth: Int) -> Provider<Int> {
  chain(depth: depth - 1, above: Provider(scope: AlwaysCreateNewScope(), name: "level0") { _ in 1 })
}

/// An always-new provider that child pods decorate: their override builds on the parent's.
let decorated: Provider<Int> = Provider(scope: AlwaysCreateNewScope(), name: "decorated") { _ in 1 }

/// A child pod whose override of `decorated` adds 100 to the parent pod's instance.
private func decoratingChild() -> Pod {
  let parent = Pod()
  return Pod(
    parent: parent, overrides: [decorated.override { _ in parent.resolve(decorated) + 100 }])
}

/// `depth` always-new providers, each resolving the one below, with `bottom` at the bottom.
private func chain(depth: Int, above bottom: Provider<Int>) -> Provider<Int> {
  var top = bottom
  for level in 0..<depth {
    let below = top
    top = Provider(scope: AlwaysCreateNewScope(), name: "above\(level)") { pod in
      pod.resolve(below) + 1
    }
  }
  return top
}

/// A pod that overrides something, so that its always-new builds take the general path.
private func podWithAnOverride() -> Pod {
  let unrelated = Provider { _ in 0 }
  return Pod(overrides: [unrelated.override(withValue: 1)])
}

@Suite("Always-new chains")
struct AlwaysNewChainTests {
  @Test("a loop of three always-new providers stops with the whole loop")
  func loopOfThreeStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = Pod().resolve(loopFirst)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: "))
    #expect(loopOfThreeReports.contains { message.contains($0) })
  }

  @Test("a loop of three always-new providers stops through a pod that overrides something")
  func loopOfThreeStopsOnTheGeneralPath() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = podWithAnOverride().resolve(loopFirst)
    }
    #expect(loopOfThreeReports.contains { standardError(result).contains($0) })
  }

  @Test("a loop of 40 always-new providers stops with all 40 in order")
  func loopOfFortyStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = Pod().resolve(loopOfForty(0))
    }
    let message = standardError(result)
    let start = message.range(of: "dependency cycle: ")?.upperBound ?? message.endIndex
    let chain = message[start...].prefix { $0 != "\n" }
    let indices = chain.split(separator: " -> ").map { link in
      Int(link.dropFirst("loopOfForty(".count).prefix { $0.isNumber }) ?? -1
    }
    #expect(indices.count == 41)
    #expect(indices.first == indices.last)
    #expect(zip(indices, indices.dropFirst()).allSatisfy { ($0 + 1) % 40 == $1 })
  }

  @Test(
    "a runaway chain with no period still stops with a cycle",
    .enabled(if: !underThreadSanitizer))
  func runawayChainStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      // A debug build needs about 1 KB of stack per level, and the chain stops past 4,096.
      onThreadWithStack(32 << 20) { _ = Pod().resolve(runawayPing) }
    }
    #expect(standardError(result).contains("ProviderPod: dependency cycle: runaway"))
  }

  @Test("a chain of 2,000 distinct always-new providers resolves", arguments: [false, true])
  func deepDistinctChainResolves(throughGeneralPath: Bool) {
    let top = distinctChain(depth: 2_000)
    let pod = throughGeneralPath ? podWithAnOverride() : Pod()
    onThreadWithStack(32 << 20) {
      #expect(pod.resolve(top) == 2_000)
      #expect(pod.resolve(top) == 2_000)
    }
    #expect(pod.invariantViolations == [])
  }

  @Test("an override that builds on its parent pod's instance is not a cycle, at any depth")
  func decoratingOverrideIsNoCycle() {
    // Checks compare a build with those above it at depths 16, 32, 64: put the override there.
    for depth in [0, 14, 15, 16, 17, 30, 31, 32, 33, 62, 63, 64, 65, 100] {
      let top = chain(depth: depth, above: decorated)
      let child = decoratingChild()
      #expect(child.resolve(top) == depth + 101, "with the override at depth \(depth)")
      #expect(child.invariantViolations == [])
    }
  }

  @Test("an override that resolves its own provider through its own pod is a cycle")
  func selfResolvingOverrideStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      let child = Pod(
        parent: Pod(), overrides: [decorated.override { pod in pod.resolve(decorated) + 1 }])
      _ = child.resolve(decorated)
    }
    #expect(standardError(result).contains("ProviderPod: dependency cycle: decorated"))
  }
}
