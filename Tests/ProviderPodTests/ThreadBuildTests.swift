import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// An always-new build through a root pod that overrides nothing runs without the pod's lock,
// on its thread alone. These tests change what that depends on while such builds run: the
// root's overrides, async builds elsewhere in the tree, and pods reached the way apps reach
// them (a global, a holder, a context handed on).

let threadBuildSelfLoop: Provider<Int> = Provider(
  scope: AlwaysCreateNewScope(), name: "threadBuildSelfLoop"
) { pod in pod.resolve(threadBuildSelfLoop) }

/// A family that recurses `n` levels deep through the context.
let deepAlwaysNew = ProviderFamily<Int, Int>(scope: AlwaysCreateNewScope(), name: "deepAlwaysNew") {
  context, level in
  level == 0 ? 0 : context.resolve(deepAlwaysNew(level - 1)) + 1
}

/// The same through the global pod: after the first level, each is nested in the one above.
let deepAlwaysNewViaGlobal = ProviderFamily<Int, Int>(
  scope: AlwaysCreateNewScope(), name: "deepAlwaysNewViaGlobal"
) { _, level in
  level == 0 ? 0 : globalPod.resolve(deepAlwaysNewViaGlobal(level - 1)) + 1
}

@Suite("Always-new builds that skip the lock")
struct ThreadBuildTests {
  @Test("an override installed after such builds applies to the next one, and its removal too")
  func overridesApplyAtOnce() {
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { pod in pod.resolve(leaf) * 10 }
    let pod = Pod()
    #expect(pod.resolve(top) == 10)
    pod.overrideProvider(leaf, withValue: 2)
    #expect(pod.resolve(top) == 20)
    #expect(pod.resolve(leaf) == 2)
    pod.removeOverrideProvider(leaf)
    #expect(pod.resolve(top) == 10)
    pod.overrideProvider(leaf) { _ in 3 }
    #expect(pod.resolve(top) == 30)
    pod.removeOverrideProvider(leaf)
    #expect(pod.resolve(top) == 10)
    #expect(pod.invariantViolations == [])
  }

  @Test("an override installed in the middle of a chain applies to the rest of the chain")
  func overrideMidChain() {
    let holder = PodHolder()
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
      let before = context.resolve(leaf)
      holder.pod.overrideProvider(leaf, withValue: 2)
      return before * 10 + context.resolve(leaf)
    }
    holder.pod = Pod()
    #expect(holder.pod.resolve(top) == 12)
  }

  @Test("an async builder's always-new resolves through the pod itself are recorded")
  func asyncBuilderThroughHeldPod() async throws {
    let holder = PodHolder()
    let client = instanceProvider("client", scope: StepScope())
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { _ in
      holder.pod.resolve(client)
    }
    let api = AsyncProvider(name: "api") { _ in
      await Task.yield()
      return Instance("api", serial: 0, dependencies: [holder.pod.resolve(middle)])
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let first = try await pod.resolve(api)
    #expect(first.dependencies[0] === pod.resolve(client))
    pod.clearCachedInstances(forScope: StepScope())
    let second = try await pod.resolve(api)
    #expect(second !== first)
    #expect(second.dependencies[0] === pod.resolve(client))
    #expect(pod.invariantViolations == [])
  }

  @Test("an always-new provider that needs itself through its context stops with the chain")
  func selfLoopThroughContext() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      alarm(20)
      _ = Pod().resolve(threadBuildSelfLoop)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("dependency cycle: threadBuildSelfLoop ("))
    #expect(message.contains("-> threadBuildSelfLoop\n"))
  }

  @Test("a context handed to another thread resolves for its build while the builder waits")
  func handedOffContext() {
    let client = instanceProvider("client", scope: StepScope())
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
      let result = Shared<(Int, Instance?)>((0, nil))
      waitWithWatchdog(
        startThread {
          let value = (context.resolve(leaf), context.resolve(client))
          result.withLock { $0 = value }
        })
      return result.withLock { $0.0 + ($0.1 != nil ? 1 : 0) }
    }
    let pod = Pod()
    // The other thread may still hold the context when the build ends, or may not: either
    // way the frame must end soundly.
    for _ in 0..<50 {
      #expect(pod.resolve(top) == 2)
    }
    #expect(pod.invariantViolations == [])
  }

  @Test("threads building always-new chains while another overrides and clears: sound")
  func chainsWhileOverriding() {
    let client = instanceProvider("client", scope: StepScope())
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { pod in
      pod.resolve(leaf) + 10
    }
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { pod in
      _ = pod.resolve(client)
      return pod.resolve(middle) + 100
    }
    let cached = Provider(scope: StepScope(), name: "cached") { pod in pod.resolve(top) }
    let pod = Pod()
    let wrong = Counter()
    onThreads(3) { index in
      for round in 0..<2_000 {
        if index == 0 {
          if round % 2 == 0 {
            pod.overrideProvider(leaf, withValue: 2)
          } else {
            pod.removeOverrideProvider(leaf)
          }
          if round % 7 == 0 { pod.clearCachedInstances(forScope: StepScope()) }
        } else {
          let value = index == 1 ? pod.resolve(top) : pod.resolve(cached)
          if value != 111 && value != 112 { wrong.next() }
        }
      }
    }
    #expect(wrong.value == 0)
    #expect(pod.invariantViolations == [])
  }

  // The other thread's reads of the frame (under the lock) must come before this thread's
  // reuse of it (without), by more than the frame's reference count: the thread sanitizer
  // does not see that count, and on arm64 it is read without ordering.
  @Test("a context used by another thread, then let go of before its build ends")
  func contextUsedElsewhereThenLetGo() {
    final class Sentinel {}
    final class Lent: @unchecked Sendable {
      var context: BuildContext?
      var sentinel: Sentinel?
    }
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let used = Shared<[Int]>([])
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
      var sentinel = Sentinel()
      let lent = Lent()
      lent.context = context
      lent.sentinel = sentinel
      startThread {
        used.withLock { $0.append(lent.context!.resolve(leaf)) }
        lent.context = nil  // first the context,
        lent.sentinel = nil  // then what tells the builder it is gone
      }
      // Until the other thread has let go of both. Not a lock: only the reference count
      // orders what it did with the frame before what this thread does with it next.
      while !isKnownUniquelyReferenced(&sentinel) { sched_yield() }
      return context.resolve(leaf) + 1
    }
    let pod = Pod()
    for _ in 0..<20 {
      #expect(pod.resolve(top) == 2)
    }
    #expect(used.withLock { $0 } == Array(repeating: 1, count: 20))
    #expect(pod.invariantViolations == [])
  }

  @Test("an override installed or removed on the root is seen by every thread's next build")
  func overrideSeenByEveryThreadAfterward() {
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let holder = PodHolder()
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { _ in
      holder.pod.resolve(leaf) * 10
    }
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
      context.resolve(middle) + context.resolve(leaf)
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let threads = 4
    let barrier = Barrier(threads)
    let wrong = Shared<[String]>([])
    onThreads(threads) { index in
      for round in 0..<400 {
        if index == 0 {
          switch round % 4 {
          case 0: pod.overrideProvider(leaf, withValue: 2)
          case 1: pod.removeOverrideProvider(leaf)
          case 2: pod.overrideProvider(leaf) { _ in 3 }
          default: pod.removeOverrideProvider(leaf)
          }
        }
        barrier.arrive()
        let expected = [2, 1, 3, 1][round % 4]
        for _ in 0..<5 {
          let values = (pod.resolve(leaf), pod.resolve(top))
          if values != (expected, expected * 11) {
            wrong.withLock { $0.append("round \(round): \(values), wanted \(expected)") }
          }
        }
        barrier.arrive()
      }
    }
    #expect(wrong.withLock { $0 } == [])
    #expect(pod.invariantViolations == [])
  }

  @Test("overrides come and go while chains build: each level sees the old or the new builder")
  func overridesRacingChains() {
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let client = instanceProvider("client", scope: StepScope())
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { context in
      _ = context.resolve(client)
      return context.resolve(leaf) * 10
    }
    let holder = PodHolder()
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
      context.resolve(middle) * 10 + holder.pod.resolve(leaf)
    }
    let cachedTop = Provider(scope: StepScope(), name: "cachedTop") { _ in holder.pod.resolve(top) }
    holder.pod = Pod()
    let pod = holder.pod!
    let wrong = Shared<[Int]>([])
    let builtCached = Counter()
    onThreads(4) { index in
      for round in 0..<3_000 {
        if index == 0 {
          switch round % 6 {
          case 0: pod.overrideProvider(leaf, withValue: 2)
          case 1: pod.removeOverrideProvider(leaf)
          // An always-new provider made cached by an override, while chains use it.
          case 2: pod.overrideProvider(middle, scope: SingletonScope()) { _ in builtCached.next() }
          case 3: pod.removeOverrideProvider(middle)
          case 4: pod.clearCachedInstances(forScope: StepScope())
          default: pod.overrideProvider(client, withValue: Instance("fake", serial: 0))
          }
          if round % 6 == 5 { pod.removeOverrideProvider(client) }
        } else {
          let value = index == 1 ? pod.resolve(top) : pod.resolve(cachedTop)
          // top = middle * 10 + leaf; middle is leaf * 10 or a cached count.
          let leafPart = value % 10
          let middlePart = value / 10
          let middleOK =
            middlePart == 10 || middlePart == 20
            || (middlePart >= 1 && middlePart <= builtCached.value)
          if !(leafPart == 1 || leafPart == 2) || !middleOK { wrong.withLock { $0.append(value) } }
        }
      }
    }
    #expect(wrong.withLock { $0 } == [])
    #expect(pod.invariantViolations == [])
    // At rest, with no override left, everything is the providers' own again.
    pod.clearCachedInstances(forScope: StepScope())
    #expect(pod.resolve(top) == 101)
    #expect(pod.resolve(cachedTop) == 101)
    #expect(pod.invariantViolations == [])
  }

  @Test("an async builder's sync always-new chains are recorded while threads build outside it")
  func asyncBuilderChainsRecordedUnderLoad() async throws {
    let holder = PodHolder()
    let client = instanceProvider("client", scope: StepScope())
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { context in
      _ = context.resolve(leaf)
      return holder.pod.resolve(client)
    }
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { _ in
      holder.pod.resolve(middle)
    }
    let api = AsyncProvider(name: "api") { _ in
      await Task.yield()
      let direct = holder.pod.resolve(top)
      // A child task inherits the build; so does a turn on the main actor.
      let fromChild = await withTaskGroup(of: Instance.self) { group in
        group.addTask { holder.pod.resolve(top) }
        return await group.next()!
      }
      let fromMain = await MainActor.run { holder.pod.resolve(top) }
      // An unstructured task started here inherits the build too, while the builder waits.
      let fromTask = await Task { holder.pod.resolve(top) }.value
      return Instance("api", serial: 0, dependencies: [direct, fromChild, fromMain, fromTask])
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let stop = Shared(false)
    let wrong = Counter()
    // Bounded by their own count, not only by the rounds below: on a loaded machine, threads
    // spinning until those are done take the time they need.
    let hammer = (0..<2).map { _ in
      startThread {
        var rounds = 0
        while rounds < 20_000, !stop.withLock({ $0 }) {
          let made = pod.resolve(top)
          if made.label != "client" { wrong.next() }
          rounds += 1
        }
      }
    }
    for round in 0..<100 {
      let first = try await pod.resolve(api)
      let client1 = pod.resolve(client)
      let depsOK = first.dependencies.allSatisfy { $0 === client1 }
      #expect(depsOK, "round \(round): built from another client")
      pod.clearCachedInstance(of: client)
      let second = try await pod.resolve(api)
      #expect(second !== first, "round \(round): the async instance outlived its client")
      if second === first { break }
    }
    stop.withLock { $0 = true }
    for done in hammer { _ = waitOrFail(done, "the hammering threads") }
    #expect(wrong.value == 0)
    #expect(pod.invariantViolations == [])
  }

  @Test("detached tasks and task groups resolve always-new chains right while async builds run")
  func tasksMixedWithAsyncBuilds() async throws {
    let leaf = Provider(scope: AlwaysCreateNewScope(), name: "leaf") { _ in 1 }
    let holder = PodHolder()
    let middle = Provider(scope: AlwaysCreateNewScope(), name: "middle") { context in
      context.resolve(leaf) + holder.pod.resolve(leaf) * 10
    }
    let top = Provider(scope: AlwaysCreateNewScope(), name: "top") { context in
      context.resolve(middle) * 100
    }
    let slow = AsyncProvider(scope: StepScope(), name: "slow") { context in
      await Task.yield()
      return context.resolve(top) + holder.pod.resolve(top)
    }
    holder.pod = Pod()
    let pod = holder.pod!
    let sums = try await withThrowingTaskGroup(of: Int.self) { group in
      for task in 0..<8 {
        group.addTask {
          var sum = 0
          for round in 0..<300 {
            if task == 0, round % 10 == 0 { pod.clearCachedInstances(forScope: StepScope()) }
            if task % 2 == 0 {
              sum += try await pod.resolve(slow) == 2_200 ? 0 : 1
            } else {
              sum += await Task.detached { pod.resolve(top) }.value == 1_100 ? 0 : 1
            }
          }
          return sum
        }
      }
      return try await group.reduce(0, +)
    }
    #expect(sums == 0)
    #expect(pod.invariantViolations == [])
  }

  @Test(
    "always-new recursion 10,000 levels deep works, through the context and through the pod",
    .enabled(if: !underThreadSanitizer))
  func recursionTenThousandDeep() {
    // A debug build needs about 1 KB of stack per level, through the context or the pod
    // alike, with or without the pod's lock: more than the 8 MB a thread gets by default.
    onThreadWithStack(32 << 20) {
      #expect(Pod().resolve(deepAlwaysNew(10_000)) == 10_000)
      #expect(globalPod.resolve(deepAlwaysNewViaGlobal(10_000)) == 10_000)
      // Twice: the second runs with the first's idle frames.
      #expect(Pod().resolve(deepAlwaysNew(10_000)) == 10_000)
    }
  }
}
