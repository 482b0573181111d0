import Foundation
import ProviderPod
import ProviderPodTesting
import Testing

/// Two tests isolate the one global pod with different overrides at the same moment; a third,
/// not isolated, watches the global pod meanwhile. Each waits until all three are inside before
/// it resolves, so a leak between them cannot hide behind one finishing before another starts.
@Suite struct ParallelIsolationTests {
  static let inside = Meeting(expecting: 3)
  static let overridden = Meeting(expecting: 3)

  @Test(.isolated(appPod, overrides: [greetingProvider.override(withValue: "first")]))
  func firstTestSeesOnlyItsOwnOverrides() async {
    await seesOnlyItsOwn("first")
  }

  @Test(.isolated(appPod, overrides: [greetingProvider.override(withValue: "second")]))
  func secondTestSeesOnlyItsOwnOverrides() async {
    await seesOnlyItsOwn("second")
  }

  @Test func codeOutsideAnyIsolationSeesTheGlobalPodUnchanged() async {
    #expect(await Self.inside.arrive(), "the three tests did not run at the same time")
    #expect(await Self.overridden.arrive(), "the three tests did not run at the same time")
    #expect(appPod.resolve(greetingProvider) == "live")
    #expect(appPod.resolve(messageProvider) == "live, from a singleton")
    #expect(appPod.resolve(nameProvider) == "nobody")
  }

  private func seesOnlyItsOwn(_ greeting: String) async {
    #expect(await Self.inside.arrive(), "the three tests did not run at the same time")
    #expect(appPod.resolve(greetingProvider) == greeting)
    // A singleton built from the override, in the test's pod: the other test builds its own.
    #expect(appPod.resolve(messageProvider) == "\(greeting), from a singleton")

    // An override made through the global pod inside the test stays in the test.
    appPod.overrideProvider(nameProvider, withValue: greeting)
    #expect(await Self.overridden.arrive(), "the three tests did not run at the same time")
    #expect(appPod.resolve(nameProvider) == greeting)

    async let fromChildTask = appPod.resolve(nameProvider)
    #expect(await fromChildTask == greeting)
    let fromGroup = await withTaskGroup(of: String.self) { group in
      for _ in 0..<8 { group.addTask { appPod.resolve(messageProvider) } }
      return await group.reduce(into: [String]()) { $0.append($1) }
    }
    #expect(fromGroup == Array(repeating: "\(greeting), from a singleton", count: 8))
    #expect(await Task { appPod.resolve(greetingProvider) }.value == greeting)
  }
}
