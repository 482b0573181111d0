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

private func standardError(_ result: ExitTest.Result?) -> String {
  String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// A pod of its own for each test below, reached the way a global is: not through the
/// builder's parameter.
private final class PodHolder: @unchecked Sendable {
  var pod: Pod!
}

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
}
