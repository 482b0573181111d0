import Dispatch
import Foundation
import Testing

@testable import ProviderPod

/// This file's name, as default provider names and cycle reports give it.
private let thisFileName = fileName()

// Global, the way users declare providers; exit tests cannot capture locals.
let selfCycleLine = #line + 1
let selfCycle: Provider<Int> = Provider(name: "selfCycle") { pod in pod.resolve(selfCycle) }
let twoCycleLine = #line + 1
let twoCycle: Provider<Int> = Provider(name: "twoCycle") { pod in pod.resolve(twoCycleLink) }

let cycleFirstLine = #line + 1
let cycleFirst: Provider<Int> = Provider(name: "sessionProvider") { pod in
  pod.resolve(cycleSecond) + 1
}
let cycleSecondLine = #line + 1
let cycleSecond: Provider<Int> = Provider(name: "validatorProvider") { pod in
  pod.resolve(cycleThird) + 1
}
let cycleThirdLine = #line + 1
let cycleThird: Provider<Int> = Provider(scope: AlwaysCreateNewScope(), name: "formProvider") {
  pod in
  pod.resolve(cycleFirst) + 1
}

let overrideTargetLine = #line + 1
let overrideTarget = Provider(name: "overrideTarget") { _ in 0 }
let overrideUserLine = #line + 1
let overrideUser: Provider<Int> = Provider(name: "overrideUser") { pod in
  pod.resolve(overrideTarget) + 1
}

let twoCycleLinkLine = #line + 1
let twoCycleLink: Provider<Int> = Provider(name: "twoCycleLink") { pod in pod.resolve(twoCycle) }

let unnamedCycle: Provider<Int> = Provider { pod in pod.resolve(unnamedCycle2) }
let unnamedCycle2: Provider<Int> = Provider { pod in pod.resolve(unnamedCycle) }

let handOffCycleLine = #line + 1
let handOffCycle: Provider<Int> = Provider(name: "handOffCycle") { pod in
  // Resolves itself from another thread through the builder's pod: still one chain.
  let done = DispatchSemaphore(value: 0)
  nonisolated(unsafe) var result = 0
  DispatchQueue.global().async {
    result = pod.resolve(handOffCycle)
    done.signal()
  }
  done.wait()
  return result
}

let crossStartedA = DispatchSemaphore(value: 0)
let crossStartedB = DispatchSemaphore(value: 0)
let crossALine = #line + 1
let crossA: Provider<Int> = Provider(name: "crossA") { pod in
  crossStartedA.signal()
  crossStartedB.wait()
  return pod.resolve(crossB) + 1
}
let crossBLine = #line + 1
let crossB: Provider<Int> = Provider(name: "crossB") { pod in
  crossStartedB.signal()
  crossStartedA.wait()
  return pod.resolve(crossA) + 1
}

// innerLoop starts on another thread through middleHandOff's context, middleHandOff's
// builder returns, and then innerLoop needs outerLoop, which waits for innerLoop: the chain
// closes through a build that is over.
let innerStarted = DispatchSemaphore(value: 0)
let middleReturned = DispatchSemaphore(value: 0)
let outerLoopLine = #line + 1
let outerLoop: Provider<Int> = Provider(name: "outerLoop") { pod in
  _ = pod.resolve(middleHandOff)
  middleReturned.signal()
  DispatchSemaphore(value: 0).wait()  // for innerLoop, which never comes back
  return 0
}
let middleHandOff: Provider<Int> = Provider(name: "middleHandOff") { pod in
  DispatchQueue.global().async { _ = pod.resolve(innerLoop) }
  innerStarted.wait()
  return 0
}
let innerLoopLine = #line + 1
let innerLoop: Provider<Int> = Provider(name: "innerLoop") { pod in
  innerStarted.signal()
  middleReturned.wait()
  return pod.resolve(outerLoop)
}

/// A loop of 40 distinct always-new providers through their contexts: longer than the first
/// depth the check looks at.
let ringOfForty: ProviderFamily<Int, Int> = ProviderFamily(
  scope: AlwaysCreateNewScope(), name: "ringOfForty"
) { context, index in context.resolve(ringOfForty((index + 1) % 40)) }

/// Always-new ping-pong through contexts, each step on a thread of its own: the chain is
/// only visible through the frames' parents, and each build takes the short path.
let alwaysNewPing: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "alwaysNewPing"
) { context in
  let result = Shared(0)
  let done = startThread { result.withLock { $0 = context.resolve(alwaysNewPong) } }
  done.wait()
  return result.withLock { $0 }
}
let alwaysNewPong: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "alwaysNewPong"
) { context in context.resolve(alwaysNewPing) + 1 }

@Suite("Dependency cycles")
struct DependencyCycleTests {
  @Test("a provider that needs itself directly stops with the chain")
  func directCycleStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Pod().resolve(selfCycle)
    }
    let message = standardError(result)
    #expect(
      message.contains(
        "ProviderPod: dependency cycle: selfCycle (\(thisFileName):\(selfCycleLine)) -> selfCycle\n"
      ))
    #expect(message.contains("Break the cycle"))
  }

  @Test("two providers that need each other stop with both names")
  func twoCycleStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Pod().resolve(twoCycle)
    }
    #expect(
      standardError(result).contains(
        "twoCycle (\(thisFileName):\(twoCycleLine)) -> twoCycleLink (\(thisFileName):\(twoCycleLinkLine)) -> twoCycle\n"
      ))
  }

  @Test("an indirect cycle of three, through an always-new provider, names all three")
  func threeCycleStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Pod().resolve(cycleSecond)
    }
    #expect(
      standardError(result).contains(
        "validatorProvider (\(thisFileName):\(cycleSecondLine)) -> formProvider (\(thisFileName):\(cycleThirdLine)) -> "
          + "sessionProvider (\(thisFileName):\(cycleFirstLine)) -> validatorProvider\n"))
  }

  @Test("a cycle made by an override is caught too")
  func overrideCycleStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let pod = Pod()
      pod.overrideProvider(overrideTarget) { pod in pod.resolve(overrideUser) }
      _ = pod.resolve(overrideUser)
    }
    #expect(
      standardError(result).contains(
        "overrideUser (\(thisFileName):\(overrideUserLine)) -> overrideTarget (\(thisFileName):\(overrideTargetLine)) -> "
          + "overrideUser"))
  }

  @Test("a chain with a finished build in between still stops with the chain")
  func cycleThroughFinishedBuild() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)  // a hang becomes a failed exit without the message checked below
      _ = Pod().resolve(outerLoop)
    }
    #expect(
      standardError(result).contains(
        "outerLoop (\(thisFileName):\(outerLoopLine)) -> innerLoop (\(thisFileName):\(innerLoopLine)) -> outerLoop\n"
      ))
  }

  @Test("default names carry the value type and declaration site")
  func unnamedCycleStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Pod().resolve(unnamedCycle)
    }
    #expect(
      standardError(result).contains(
        "\(unnamedCycle.name) -> \(unnamedCycle2.name) -> \(unnamedCycle.name)"
      ))
  }

  @Test("a builder's pod handed to another thread keeps the chain: the cycle is reported")
  func handOffCycleStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Pod().resolve(handOffCycle)
    }
    #expect(
      standardError(result).contains(
        "handOffCycle (\(thisFileName):\(handOffCycleLine)) -> handOffCycle"))
  }

  @Test("two threads whose builds wait for each other are reported, not hung")
  func crossThreadCycleStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let pod = Pod()
      let done = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        _ = pod.resolve(crossA)
        done.signal()
      }
      _ = pod.resolve(crossB)
      done.wait()
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle across threads: "))
    // Whichever thread blocks second reports; both providers are in the chain.
    #expect(
      message.contains(
        "crossA (\(thisFileName):\(crossALine)) -> crossB (\(thisFileName):\(crossBLine)) -> crossA"
      )
        || message.contains(
          "crossB (\(thisFileName):\(crossBLine)) -> crossA (\(thisFileName):\(crossALine)) -> crossB"
        )
    )
  }

  @Test("resolving the same provider twice in a row is not a cycle")
  func siblingsAreNotCycles() {
    let leaf = Provider(scope: AlwaysCreateNewScope()) { _ in 1 }
    let top = Provider { pod in pod.resolve(leaf) + pod.resolve(leaf) }
    #expect(Pod().resolve(top) == 2)
  }

  @Test("a loop of 40 always-new providers through contexts stops, not overflows")
  func longRingStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = Pod().resolve(ringOfForty(0))
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: ringOfForty("))
    #expect(message.contains("-> ringOfForty(39) ("))
  }

  @Test("always-new providers needing each other across threads through contexts stop")
  func alwaysNewPingPongAcrossThreads() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = Pod().resolve(alwaysNewPing)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: "))
    #expect(message.contains("alwaysNewPing ("))
    #expect(message.contains("alwaysNewPong ("))
  }

  @Test("a long chain of distinct always-new providers is not mistaken for a cycle")
  func longAlwaysNewChainIsFine() {
    let pod = Pod()
    var chain = [instanceProvider("new0", scope: AlwaysCreateNewScope())]
    for index in 1..<100 {
      chain.append(
        instanceProvider("new\(index)", scope: AlwaysCreateNewScope(), dependencies: [chain.last!]))
    }
    let top = instanceProvider("top", scope: StepScope(), dependencies: [chain.last!])
    var depth = 0
    var current: Instance? = pod.resolve(chain.last!)
    while let next = current?.dependencies.first {
      depth += 1
      current = next
    }
    #expect(depth == 99)
    let cachedTop = pod.resolve(top)
    #expect(pod.resolve(top) === cachedTop)
    #expect(pod.invariantViolations == [])
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(top) !== cachedTop)
    #expect(pod.invariantViolations == [])
  }
}
