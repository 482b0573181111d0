import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// Apps often keep their pod in a global and resolve through it from inside builders. These
// globals are what such an app has; exit tests cannot capture locals either.
let capturedAppPod = Pod()
let capturedSelfLine = #line + 1
let capturedSelf: Provider<Int> = Provider(name: "capturedSelf") { _ in
  capturedAppPod.resolve(capturedSelf)
}
let capturedSelfAlwaysNew: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "capturedSelfAlwaysNew"
) { _ in capturedAppPod.resolve(capturedSelfAlwaysNew) }
let capturedPing: Provider<Int> = Provider(name: "ping") { _ in capturedAppPod.resolve(capturedPong)
}
let capturedPong: Provider<Int> = Provider(name: "pong") { pod in pod.resolve(capturedPing) }

/// A in one pod needs B in another pod, which needs A again: two trees, one loop.
let twoPodLoopA: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "twoPodLoopA"
) { _ in otherGlobalPod.resolve(twoPodLoopB) }
let twoPodLoopB: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "twoPodLoopB"
) { _ in globalPod.resolve(twoPodLoopA) }

/// An always-new provider that needs itself, resolved from inside an async builder through
/// the global pod.
let asyncBuilderLoopInner: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "asyncBuilderLoopInner"
) { context in context.resolve(asyncBuilderLoopInner) }
let asyncBuilderLoop = AsyncProvider<Int>(name: "asyncBuilderLoop") { _ in
  await Task.yield()
  return globalPod.resolve(asyncBuilderLoopInner)
}

/// Always-new A resolves always-new B through its context (short path with a caller), B
/// resolves A through the global pod (general path, caller unknown).
let globalLoopA: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "globalLoopA"
) { context in context.resolve(globalLoopB) }
let globalLoopB: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "globalLoopB"
) { _ in globalPod.resolve(globalLoopA) + 1 }

/// A cached provider whose always-new dependency resolves it again through the global pod.
let cachedTopViaGlobal: Provider<Int> = Provider(name: "cachedTopViaGlobal") { _ in
  globalPod.resolve(alwaysNewMiddleViaGlobal)
}
let alwaysNewMiddleViaGlobal: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "alwaysNewMiddleViaGlobal"
) { _ in globalPod.resolve(cachedTopViaGlobal) }

/// An always-new provider resolving itself through the global pod, from a second thread
/// that the builder hands its context to and waits for.
let selfHandOff: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "selfHandOff"
) { context in
  let result = Shared(0)
  let done = startThread { result.withLock { $0 = context.resolve(selfViaGlobal) } }
  done.wait()
  return result.withLock { $0 }
}
let selfViaGlobal: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "selfViaGlobal"
) { _ in globalPod.resolve(selfHandOff) }

@Suite("Resolving through the pod itself inside a builder")
struct CapturedPodTests {
  @Test("a provider that resolves itself through a global pod stops with the chain, not a hang")
  func selfThroughGlobalPodIsACycle() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)  // a hang becomes a failed exit without the message checked below
      _ = capturedAppPod.resolve(capturedSelf)
    }
    #expect(
      standardError(result).contains(
        "ProviderPod: dependency cycle: capturedSelf (CapturedPodTests.swift:\(capturedSelfLine)) -> capturedSelf\n"
      ))
  }

  @Test("an always-new provider that resolves itself through a global pod stops, not overflows")
  func alwaysNewSelfThroughGlobalPodIsACycle() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = capturedAppPod.resolve(capturedSelfAlwaysNew)
    }
    // A stack overflow would also fail the exit, but without this message.
    #expect(standardError(result).contains("dependency cycle: capturedSelfAlwaysNew"))
    #expect(standardError(result).contains("-> capturedSelfAlwaysNew\n"))
  }

  @Test("a cycle half through the global pod and half through the parameter is reported")
  func mixedCycleIsReported() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = capturedAppPod.resolve(capturedPing)
    }
    #expect(standardError(result).contains("ping ("))
    #expect(standardError(result).contains("-> pong ("))
    #expect(standardError(result).contains("-> ping\n"))
  }

  @Test(
    "what a builder resolves through the pod itself is recorded: no stale instance after a clear")
  func capturedResolveIsADependency() {
    let holder = PodHolder()
    let client = instanceProvider("client", scope: StepScope())
    let api = Provider(name: "api") { _ in
      Instance("api", serial: 0, dependencies: [holder.pod.resolve(client)])
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let first = pod.resolve(api)
    pod.clearCachedInstances(forScope: StepScope())
    let second = pod.resolve(api)
    #expect(second !== first)
    #expect(second.dependencies[0] === pod.resolve(client))
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("through an always-new provider in between, too")
  func capturedResolveThroughAlwaysNew() {
    let holder = PodHolder()
    let client = instanceProvider("client", scope: StepScope())
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { _ in
      holder.pod.resolve(client)
    }
    let api = Provider(name: "api") { _ in
      Instance("api", serial: 0, dependencies: [holder.pod.resolve(middle)])
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let first = pod.resolve(api)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(api) !== first)
  }

  @Test("an async builder's resolves through the pod itself are recorded too")
  func asyncCapturedResolveIsADependency() async throws {
    let holder = PodHolder()
    let client = instanceProvider("client", scope: StepScope())
    let token = AsyncProvider(scope: StepScope(), name: "token") { _ in 7 }
    let api = AsyncProvider(name: "api") { _ in
      await Task.yield()  // resume, possibly on another thread: the task still knows
      let token = try await holder.pod.resolve(token)
      return Instance("api", serial: token, dependencies: [holder.pod.resolve(client)])
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let first = try await pod.resolve(api)
    pod.clearCachedInstance(of: client)
    let second = try await pod.resolve(api)
    #expect(second !== first)
    pod.clearCachedInstance(of: token)
    #expect(try await pod.resolve(api) !== second)
  }

  @Test("a resolve through the pod on an unrelated thread is not part of a running build")
  func otherThreadsAreNotNested() {
    let holder = PodHolder()
    let client = instanceProvider("client", scope: StepScope())
    let api = Provider(name: "api") { _ in
      // Another thread, with no build of its own: a plain resolve, not a dependency.
      let done = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        _ = holder.pod.resolve(client)
        done.signal()
      }
      done.wait()
      return Instance("api", serial: 0)
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let first = pod.resolve(api)
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(api) === first)
  }

  @Test("a builder of one pod resolving from another pod is not nested in the first")
  func otherPodsAreSeparate() {
    let other = Pod()
    let client = instanceProvider("client", scope: StepScope())
    let api = Provider(name: "api") { _ in
      Instance("api", serial: 0, dependencies: [other.resolve(client)])
    }
    let pod = Pod()
    let first = pod.resolve(api)
    other.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(api) === first)
    #expect(pod.invariantViolations.isEmpty)
  }

  @Test("threads resolving through a global pod while others clear: sound bookkeeping at rest")
  func capturedPodUnderContention() {
    let holder = PodHolder()
    let session = instanceProvider("session", scope: FlowScope())
    let step = Provider(scope: StepScope(), name: "step") { _ in
      Instance("step", serial: 0, dependencies: [holder.pod.resolve(session)])
    }
    let screen = Provider(name: "screen") { _ in
      Instance("screen", serial: 0, dependencies: [holder.pod.resolve(step)])
    }
    holder.pod = Pod()
    let pod = holder.pod!
    DispatchQueue.concurrentPerform(iterations: 4) { worker in
      for round in 0..<2_000 {
        if worker == 0 && round % 10 == 0 {
          pod.clearCachedInstances(forScope: FlowScope())
        } else {
          _ = pod.resolve(screen)
        }
      }
    }
    #expect(pod.invariantViolations.isEmpty)
    // At rest, what is cached is consistent: the screen's step is the cached step.
    let screenNow = pod.resolve(screen)
    #expect(screenNow.dependencies[0] === pod.resolve(step))
    #expect(pod.resolve(step).dependencies[0] === pod.resolve(session))
  }

  @Test("a held pod resolved from many threads and from inside builders: right values, recorded")
  func heldPodFromThreadsAndBuilders() {
    let holder = PodHolder()
    let client = instanceProvider("client", scope: StepScope())
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let viaHeld = Provider(scope: AlwaysCreateNewScope(), name: "viaHeld") { _ in
      holder.pod.resolve(leaf) + 10
    }
    let viaContext = Provider(scope: AlwaysCreateNewScope(), name: "viaContext") { context in
      context.resolve(viaHeld) + context.resolve(leaf) * 100
    }
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
      let from = holder.pod.resolve(client)
      let value = context.resolve(viaContext) + holder.pod.resolve(viaContext)
      return Instance("top", serial: value, dependencies: [from])
    }
    let cachedTop = Provider(scope: StepScope(), name: "cachedTop") { _ in
      holder.pod.resolve(top)
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let wrong = Counter()
    onThreads(4) { index in
      for round in 0..<2_000 {
        if index == 0, round % 50 == 0 { pod.clearCachedInstances(forScope: StepScope()) }
        let made = index % 2 == 0 ? pod.resolve(top) : pod.resolve(cachedTop)
        if made.serial != 222 || made.dependencies.count != 1 { wrong.next() }
      }
    }
    #expect(wrong.value == 0)
    #expect(pod.invariantViolations == [])
    // What the chain resolved through the held pod is what the cached top was built from.
    let before = pod.resolve(cachedTop)
    #expect(before.dependencies[0] === pod.resolve(client))
    pod.clearCachedInstance(of: client)
    let after = pod.resolve(cachedTop)
    #expect(after !== before)
    #expect(after.dependencies[0] === pod.resolve(client))
    #expect(pod.invariantViolations == [])
  }

  @Test("builders resolving through a global child and through the global parent are recorded")
  func globalPodsInsideChildBuilds() {
    let box = PodTreeHolder()
    let base = instanceProvider("base")
    let window = Provider<Instance>(scope: AppWindowScope(), name: "window") { _ in
      Instance("window", serial: 0, dependencies: [box.parent.resolve(base)])
    }
    let view = Provider<Instance>(scope: WindowStepScope(), name: "view") { _ in
      Instance("view", serial: 0, dependencies: [box.child.resolve(window)])
    }
    let shared = Provider<Instance>(name: "shared") { _ in
      Instance("shared", serial: 0, dependencies: [box.child.resolve(base)])
    }
    box.parent = Pod()
    box.child = Pod(parent: box.parent, scopes: [AppWindowScope()])
    let child = box.child!
    let firstView = child.resolve(view)
    let firstShared = child.resolve(shared)
    #expect(firstShared === box.parent.resolve(shared))  // built from nothing of the child's
    #expect(firstView.dependencies[0] === child.resolve(window))

    box.parent.clearCachedInstance(of: base)
    let secondView = child.resolve(view)
    #expect(secondView !== firstView)
    #expect(secondView.dependencies[0].dependencies[0] === box.parent.resolve(base))
    #expect(child.resolve(shared) !== firstShared)
    #expect(box.parent.invariantViolations == [])
  }

  @Test("a loop through two pods' globals stops with the chain")
  func cycleAcrossTwoTrees() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = globalPod.resolve(twoPodLoopA)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: "))
  }

  @Test("an always-new loop inside an async builder, through the global pod, stops")
  func cycleInsideAsyncBuilder() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = try? await globalPod.resolve(asyncBuilderLoop)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: "))
    #expect(message.contains("-> asyncBuilderLoopInner\n"))
  }

  @Test("an always-new chain closed through the global pod stops with the chain")
  func alwaysNewChainThroughGlobalPod() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = globalPod.resolve(globalLoopA)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: "))
    #expect(message.contains("globalLoopA ("))
    #expect(message.contains("globalLoopB ("))
  }

  @Test("a cached provider reached again through an always-new one and the global pod stops")
  func cachedThroughAlwaysNewThroughGlobalPod() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = globalPod.resolve(cachedTopViaGlobal)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle: cachedTopViaGlobal ("))
    #expect(message.contains("-> alwaysNewMiddleViaGlobal ("))
    #expect(message.contains("-> cachedTopViaGlobal\n"))
  }

  @Test("an always-new provider needing itself via a handed-off context and the global pod stops")
  func alwaysNewSelfThroughHandOffAndGlobalPod() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = globalPod.resolve(selfHandOff)
    }
    let message = standardError(result)
    #expect(message.contains("ProviderPod: dependency cycle"))
    #expect(message.contains("selfHandOff"))
  }
}
