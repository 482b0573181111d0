import Testing

@testable import ProviderPod

// Slots that nothing would remove, and the pods they would keep alive: a pod must hold only
// slots that a resolve, a discard or a sweep can still reach.

@Suite("Slots nothing would remove")
struct UnfreedSlotTests {
  @Test("a parent sweeps the slots of gone providers that its children's resolves made in it")
  func parentSweepsSlotsMadeFromChildren() {
    let app = Pod()
    for index in 0..<5_000 {
      // A provider made per screen, resolved through the screen's window: the window does not
      // own the scope, so the instance and its slot are the app's.
      let screen = Provider(scope: StepScope(), name: "screen\(index)") { _ in index }
      let window = Pod(parent: app)
      #expect(window.resolve(screen) == index)
      app.clearCachedInstances(forScope: StepScope())
    }
    // Swept whenever the table doubles past 1,024: what is left is at most one round's worth.
    #expect(app.slotCount <= 2_048)
    #expect(app.invariantViolations == [])
  }

  @Test("a sweep drops a gone provider's slot filed first (inline)")
  func sweepDropsTheInlineSlot() {
    let pod = Pod()
    do {
      // The pod's first slot, for a provider made at run time, cleared and gone.
      let screen = Provider(scope: StepScope(), name: "first") { _ in -1 }
      #expect(pod.resolve(screen) == -1)
    }
    pod.clearCachedInstances(forScope: StepScope())
    var kept: [Provider<Int>] = []
    for index in 0..<1_100 {
      let provider = Provider(scope: OtherStepScope(), name: "kept\(index)") { _ in index }
      kept.append(provider)
      #expect(pod.resolve(provider) == index)
    }
    // The 1,025th slot's insert swept the gone one.
    #expect(pod.slotCount == 1_100)
    #expect(pod.invariantViolations == [])
  }

  @Test("an invalidated build that resolves an always-new provider leaves no slot behind")
  func invalidatedBuildMakesNoSlot() {
    let base = instanceProvider("base", scope: StepScope())
    let pod = Pod()
    for index in 0..<100 {
      // Made at run time, as a family's members are: every round is a provider of its own.
      let fresh = Provider(scope: AlwaysCreateNewScope(), name: "fresh\(index)") { _ in index }
      let user = Provider(scope: OtherStepScope(), name: "user\(index)") { context in
        _ = context.resolve(base)
        // Discards what this build used, so the build is invalidated before it goes on.
        context.clearCachedInstances(forScope: StepScope())
        return context.resolve(fresh)
      }
      #expect(pod.resolve(user) == index)
    }
    // The base's slot, kept for its next instance; nothing of the users or the fresh ones.
    #expect(pod.slotCount == 1)
    #expect(pod.invariantViolations == [])
  }

  @Test("a family member resolved by an invalidated build leaves no slot behind")
  func invalidatedBuildMakesNoFamilySlot() {
    let base = instanceProvider("base", scope: StepScope())
    let fresh = ProviderFamily(scope: AlwaysCreateNewScope(), name: "fresh") { (_, id: Int) in id }
    let user = ProviderFamily(scope: OtherStepScope(), name: "user") { (context, id: Int) in
      _ = context.resolve(base)
      context.clearCachedInstances(forScope: StepScope())
      return context.resolve(fresh(id))
    }
    let pod = Pod()
    for id in 0..<100 { #expect(pod.resolve(user(id)) == id) }
    #expect(pod.slotCount == 1)
    #expect(pod.invariantViolations == [])
  }

  @Test("a root pod released while its build runs is freed when the build resolves again")
  func podReleasedDuringBuildIsFreed() {
    let holder = PodHolder()
    let keeper = Provider(scope: AlwaysCreateNewScope(), name: "keeper") { context in
      ContextKeeper(context)
    }
    let other = instanceProvider("other")
    let releasing = Provider(name: "releasing") { context in
      // The last reference to the pod goes while this build runs: the pod goes away.
      holder.pod = nil
      return context.resolve(other).label
    }
    weak var record: PodRecord?
    do {
      holder.pod = Pod()
      record = holder.pod.engine.pod
      // A kept context resolves through the pod without holding it, as an instance that
      // resolves lazily does.
      let kept = holder.pod.resolve(keeper)
      #expect(kept.context.resolve(releasing) == "other")
      #expect(holder.pod == nil)
    }
    #expect(
      record == nil, "the released pod's record (which its engine is a view of) is kept alive")
  }
}
