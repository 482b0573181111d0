import Testing

@testable import ProviderPod

@Suite("The scopes a child pod owns")
struct OwnedScopesTests {
  private struct Leaf: ProviderScope {}
  private struct Branch: ProviderScope {
    var children: [any ProviderScope] { [Leaf()] }
  }
  private struct Trunk: ProviderScope {
    var children: [any ProviderScope] { [Branch(), Leaf()] }
  }
  private struct Elsewhere: ProviderScope {}

  @Test("each scope given and each below it; nothing else")
  func subtreesOnce() {
    let owned = OwnedScopes([Trunk(), Branch()])
    for scope in [ScopeKey(Trunk()), ScopeKey(Branch()), ScopeKey(Leaf())] {
      #expect(owned.contains(scope))
    }
    #expect(!owned.contains(ScopeKey(Elsewhere())))
    #expect(owned.first == ScopeKey(Trunk()))
    #expect(!owned.isEmpty)
  }

  @Test("a pod given no scope owns none")
  func none() {
    #expect(OwnedScopes([]).isEmpty)
    #expect(OwnedScopes().first == nil)
    #expect(!OwnedScopes().contains(ScopeKey(Leaf())))
  }
}
