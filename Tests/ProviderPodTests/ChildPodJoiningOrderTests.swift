import Dispatch
import Foundation
import Testing

@testable import ProviderPod

// A child pod joins its parent's list of children at its first use and leaves it when it goes
// or is shut down; the list holds its members strongly, through their siblings. Whatever the
// order children join and leave in, and whichever of their ancestors changes meanwhile, every
// record and instance must be freed once its pod is gone, and the parent must list none.

/// A pod's record, held weakly: nil once the record is freed.
private final class WeakRecord: @unchecked Sendable {
  weak var record: PodRecord?
  init(_ pod: Pod) { record = pod.engine.pod }
}

@Suite("Child pods joining and leaving in every order")
struct ChildPodJoiningOrderTests {
  @Test("siblings that leave at the head, the middle and the tail of the list free their records")
  func siblingsLeaveInEveryOrder() {
    let step = instanceProvider("step", scope: StepScope())
    // Every order three joined siblings can leave in, with one never used among them.
    let orders = [
      [0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0],
    ]
    for order in orders {
      let parent = Pod()
      var records: [WeakRecord] = []
      weak var instance: Instance?
      do {
        var children: [Pod?] = (0..<3).map { _ in Pod(parent: parent, scopes: [StepScope()]) }
        let unused = Pod(parent: parent, scopes: [StepScope()])
        records = children.map { WeakRecord($0!) } + [WeakRecord(unused)]
        for child in children { instance = child!.resolve(step) }
        #expect(parent.childCount == 3)
        for (left, index) in order.enumerated() {
          children[index] = nil
          #expect(parent.childCount == 2 - left, "order \(order)")
          #expect(parent.invariantViolations == [], "order \(order)")
        }
      }
      #expect(instance == nil, "order \(order)")
      #expect(records.allSatisfy { $0.record == nil }, "order \(order)")
    }
  }

  @Test("children shut down, then let go of, in every order, free their records")
  func shutDownThenReleased() async throws {
    let step = instanceProvider("step", scope: StepScope())
    for shutDownIndex in 0..<3 {
      let parent = Pod()
      var records: [WeakRecord] = []
      do {
        var children: [Pod?] = (0..<3).map { _ in Pod(parent: parent, scopes: [StepScope()]) }
        records = children.map { WeakRecord($0!) }
        for child in children { _ = child!.resolve(step) }
        try await children[shutDownIndex]!.shutdown()
        #expect(parent.childCount == 2)
        #expect(parent.invariantViolations == [])
        children[shutDownIndex] = nil
        #expect(parent.childCount == 2)
        children = []
      }
      #expect(parent.childCount == 0)
      #expect(records.allSatisfy { $0.record == nil }, "shut down \(shutDownIndex)")
    }
  }

  @Test("a parent's shutdown between its children's joining and leaving frees every record")
  func parentShutDownWhileChildrenLive() async throws {
    let step = instanceProvider("step", scope: StepScope())
    let shared = instanceProvider("shared")
    var records: [WeakRecord] = []
    weak var parentRecord: PodRecord?
    do {
      let root = Pod()
      let parent = Pod(parent: root, scopes: [FlowScope()])
      parentRecord = parent.engine.pod
      let joined = (0..<3).map { _ in Pod(parent: parent, scopes: [StepScope()]) }
      let grandchild = Pod(parent: joined[1], scopes: [StepScope()])
      let unused = Pod(parent: parent, scopes: [StepScope()])
      records = (joined + [grandchild, unused]).map(WeakRecord.init)
      for child in joined { _ = child.resolve(step) }
      _ = grandchild.resolve(shared)
      try await parent.shutdown()
      #expect(parent.childCount == 0)
      #expect(root.childCount == 0)
      #expect(root.invariantViolations == [])
    }
    #expect(parentRecord == nil)
    #expect(records.allSatisfy { $0.record == nil })
  }

  @Test("a grandchild's first use lists its parent, and both free their records when gone")
  func grandchildJoinsParentThenBothGo() {
    let root = Pod()
    let shared = instanceProvider("shared")
    let step = instanceProvider("step", scope: StepScope())
    var records: [WeakRecord] = []
    do {
      let window = Pod(parent: root, scopes: [FlowScope()])
      var pages: [Pod?] = (0..<3).map { _ in Pod(parent: window, scopes: [StepScope()]) }
      records = [WeakRecord(window)] + pages.map { WeakRecord($0!) }
      _ = pages[1]!.resolve(shared)
      #expect(root.childCount == 1)
      #expect(window.childCount == 1)
      _ = pages[0]!.resolve(step)
      _ = pages[2]!.resolve(step)
      #expect(window.childCount == 3)
      pages[1] = nil
      #expect(window.childCount == 2)
      pages = []
      #expect(window.childCount == 0)
      #expect(root.invariantViolations == [])
    }
    #expect(root.childCount == 0)
    #expect(records.allSatisfy { $0.record == nil })
  }

  @Test("a root let go of after its children went frees every record of the tree")
  func rootGoesLast() {
    let step = instanceProvider("step", scope: StepScope())
    weak var rootRecord: PodRecord?
    var records: [WeakRecord] = []
    do {
      let root = Pod()
      rootRecord = root.engine.pod
      let children = (0..<4).map { _ in Pod(parent: root, scopes: [StepScope()]) }
      records = children.map(WeakRecord.init)
      for child in children.dropFirst() { _ = child.resolve(step) }
    }
    #expect(rootRecord == nil)
    #expect(records.allSatisfy { $0.record == nil })
  }

  @Test("a context kept past its child's pod frees the child from its parent's list")
  func contextKeptPastChild() async {
    let parent = Pod()
    let keeperProvider = Provider(scope: StepScope(), name: "keeper") { context in
      ContextKeeper(context)
    }
    let shared = instanceProvider("shared")
    var keeper: ContextKeeper?
    weak var record: PodRecord?
    do {
      let child = Pod(parent: parent, scopes: [StepScope()])
      record = child.engine.pod
      keeper = child.resolve(keeperProvider)
      #expect(parent.childCount == 1)
    }
    #expect(parent.childCount == 0)
    // The kept context watches after its pod went: it must not list the pod again.
    do {
      var late = keeper!.context.instances(of: shared).makeAsyncIterator()
      #expect(await late.next() == nil)
    }
    #expect(parent.childCount == 0)
    #expect(parent.invariantViolations == [])
    keeper = nil
    #expect(record == nil)
  }

  @Test("children joining and leaving on eight threads, at every place in the list, leave none")
  func manyThreadsJoinAndLeave() {
    let app = Pod()
    let live = LiveCount()
    let shared = Provider(name: "shared") { _ in Tracked(live, serial: 0) }
    let step = Provider(scope: StepScope(), name: "step") { context in
      Tracked(live, serial: 1, dependencies: [context.resolve(shared)])
    }
    let records = WeakList()
    // Each thread keeps a few children alive at once and lets go of them from the front, the
    // back or the middle of what it keeps, so that siblings leave at every place in the list
    // while other threads' children join at its head.
    onThreads(8) { worker in
      var rng = SplitMix64(seed: UInt64(worker + 1))
      var kept: [Pod] = []
      for round in 0..<300 {
        let child = Pod(parent: app, scopes: [StepScope()])
        records.add(child.engine.pod)
        if round % 5 != 0 { _ = child.resolve(step) }
        kept.append(child)
        if kept.count > 4 {
          kept.remove(at: Int.random(in: 0..<kept.count, using: &rng))
        }
        if worker == 0, round.isMultiple(of: 50) {
          app.clearCachedInstances(forScope: StepScope())
        }
      }
    }
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
    #expect(records.liveCount == 0)
    app.clearCachedInstance(of: shared)
    #expect(live.value == 0)
  }

  @Test("children made on one thread and first used on another while the parent changes")
  func madeHereUsedThere() {
    let app = Pod()
    let live = LiveCount()
    let serials = Counter()
    // How often each handler, by serial, was disposed of.
    let disposals = Shared<[Int: Int]>([:])
    let config = Provider(name: "config") { _ in Tracked(live, serial: 0) }
    // A handler whose build races an override of its config is handed out uncached and never
    // disposed of: only the count of disposals per instance, and what is left alive, are exact.
    let handler = Provider(
      scope: StepScope(), name: "handler",
      onDiscard: { (handler: Tracked) in disposals.withLock { $0[handler.serial, default: 0] += 1 }
      }
    ) { context in
      Tracked(live, serial: serials.next(), dependencies: [context.resolve(config)])
    }
    let made = Shared<[Pod]>([])
    let records = WeakList()
    for _ in 0..<800 {
      let child = Pod(parent: app, scopes: [StepScope()])
      records.add(child.engine.pod)
      made.withLock { $0.append(child) }
    }
    onThreads(8) { worker in
      for index in stride(from: worker, to: 800, by: 8) {
        if worker == 0, index.isMultiple(of: 40) {
          app.overrideProvider(config) { _ in Tracked(live, serial: -index) }
        }
        // Taken out, so that it goes away on this thread once used.
        let child = made.withLock { made in
          defer { made[index] = Pod(parent: app) }
          return made[index]
        }
        #expect(child.resolve(handler).dependencies.count == 1)
      }
    }
    made.withLock { $0 = [] }
    #expect(disposals.withLock { $0.values.allSatisfy { $0 == 1 } })
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
    #expect(records.liveCount == 0)
    app.clearCachedInstance(of: config)
    #expect(live.value == 0)
  }

  @Test("a child first used on a thread and let go of last on another, with no lock between")
  func lastReferenceOnAnotherThread() {
    let app = Pod()
    let step = instanceProvider("step", scope: StepScope())
    let records = WeakList()
    var threads: [DispatchSemaphore] = []
    // The thread that used the child and the one that made it let go of it with nothing
    // ordering the two but the child's reference count: the pod's going away reads whether
    // it joined, which the other thread wrote, on whichever thread lets go last.
    for round in 0..<400 {
      var child: Pod? = Pod(parent: app, scopes: [StepScope()])
      records.add(child!.engine.pod)
      // Handed over in a box the thread empties, so that its reference is gone when its body
      // returns, before it signals: a captured one would live on in the thread's closure.
      let handOff = Shared<Pod?>(child)
      threads.append(
        startThread {
          let pod = handOff.withLock { held in
            defer { held = nil }
            return held
          }
          _ = pod!.resolve(step)
        })
      // Varies which thread lets go last, without a lock that would order the two.
      var spin = 0
      for step in 0..<(round % 7) * 2_000 { spin &+= step }
      #expect(spin >= 0)
      child = nil
    }
    for done in threads { done.wait() }
    #expect(app.childCount == 0)
    #expect(app.invariantViolations == [])
    #expect(records.liveCount == 0)
  }
}
