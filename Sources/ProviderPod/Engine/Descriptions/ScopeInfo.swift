/// How the pod treats a scope, worked out once per provider or override. A class, so frames
/// and entries share it with one reference count instead of copying its fields.
final class ScopeInfo: Sendable {
  enum Kind: Sendable { case alwaysCreateNew, singleton, weak, custom }

  let scope: any ProviderScope
  let key: ScopeKey
  let name: String
  let kind: Kind
  /// This scope and every scope reachable through `children`, for captive-dependency checks.
  let subtree: Set<ScopeKey>
  /// Whether only a pod given the scope may cache its instances (see
  /// ``ProviderScope/requiresOwningPod``).
  let requiresOwningPod: Bool

  init(_ scope: any ProviderScope) {
    self.scope = scope
    self.key = ScopeKey(scope)
    self.name = String(describing: type(of: scope))
    switch scope {
    case is AlwaysCreateNewScope: kind = .alwaysCreateNew
    case is SingletonScope: kind = .singleton
    case is WeakScope: kind = .weak
    default: kind = .custom
    }
    self.subtree = Set(ScopeInfo.clearableSubtree(of: scope))
    self.requiresOwningPod = kind == .custom && type(of: scope).requiresOwningPod
  }

  /// The scopes a clear of `scope` reaches: itself and its descendants, each once,
  /// leaving out the built-in scopes that are never cleared. Keys only: naming each scope
  /// cost a clear of a hundred instances more than the instances did.
  static func clearableSubtree(of scope: any ProviderScope) -> [ScopeKey] {
    var visited: Set<ScopeKey> = []
    var pending: [any ProviderScope] = [scope]
    var result: [ScopeKey] = []
    while let next = pending.popLast() {
      let key = ScopeKey(next)
      guard visited.insert(key).inserted else { continue }
      if next is SingletonScope || next is AlwaysCreateNewScope { continue }
      result.append(key)
      pending.append(contentsOf: next.children.reversed())
    }
    return result
  }
}

/// A scope's identity: its type.
struct ScopeKey: Hashable, Sendable {
  private let id: ObjectIdentifier

  init(_ scope: any ProviderScope) {
    id = ObjectIdentifier(type(of: scope))
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(id)
  }

  /// A type's address, hashed cheaply (see `mixedAddressHash`): every child pod made looks
  /// its owned scopes up, and every clear its scopes.
  func _rawHashValue(seed: Int) -> Int {
    mixedAddressHash(UInt(bitPattern: id), seed: seed)
  }
}
