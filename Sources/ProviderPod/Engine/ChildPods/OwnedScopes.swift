/// The scopes a child pod owns: those it was given and their descendants, each once. A
/// provider in one of them is built and cached in that pod rather than shared with its parent.
///
/// The first scope is kept inline and the rest in an array: a server's request pod owns one
/// scope, and an array of one key was an allocation (and a release) every request made, about
/// 290 instructions of its 11,500. Scanned, not hashed: a pod owns a handful of scopes.
struct OwnedScopes {
  /// The first scope given; nil when the pod owns none.
  private(set) var first: ScopeKey?
  /// The others, in the order they were added.
  private var others: [ScopeKey] = []

  /// No scope: a root pod, or a child given none.
  init() {}

  /// The scopes given to a child pod, each with its descendants (`children`, user code: walk
  /// them before any lock is taken).
  init(_ scopes: [any ProviderScope]) {
    for scope in scopes { addSubtree(of: scope) }
  }

  var isEmpty: Bool { first == nil }

  func contains(_ key: ScopeKey) -> Bool {
    if first == key { return true }
    return !others.isEmpty && others.contains(key)
  }

  /// Adds `scope` and its descendants, each once.
  private mutating func addSubtree(of scope: any ProviderScope) {
    add(ScopeKey(scope))
    // Most scopes have no children: no list of pending ones for them.
    var pending = scope.children
    while let next = pending.popLast() {
      guard add(ScopeKey(next)) else { continue }
      pending.append(contentsOf: next.children)
    }
  }

  /// Adds `key` unless it is there; whether it was added.
  @discardableResult
  private mutating func add(_ key: ScopeKey) -> Bool {
    guard !contains(key) else { return false }
    if first == nil { first = key } else { others.append(key) }
    return true
  }
}
