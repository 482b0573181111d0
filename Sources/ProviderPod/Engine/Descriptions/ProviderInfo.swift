/// What the pod knows of a provider, whatever its value type. Every `Provider` owns one, and
/// the pod's tables hold it instead of the generic provider: `resolve` is generic and not
/// specialised across modules, so touching `Provider<Value>` as an existential or a generic
/// argument would look up its type metadata at run time on every call.
final class ProviderInfo: Sendable {
  let name: String
  /// The name with where the provider was declared, for cycle reports.
  let cycleLabel: String
  let scope: ScopeInfo
  /// Whether the provider's own scope is `AlwaysCreateNewScope`: such a provider is cached
  /// only when an override gives it another scope, so resolves skip the cache lookup.
  let isAlwaysNew: Bool
  /// The family this provider belongs to, for a `ProviderFamily` member.
  let family: FamilyInfo?
  /// Where the provider was declared and what it builds, to tell a provider made again by
  /// the same expression (a computed property) from another one. Nil for a family member:
  /// its family has it.
  let declaration: Declaration?
  /// Whether the value is a throwing build's outcome, a `Result`: a ``WeakScope`` entry then
  /// holds the success's instance, and a read wraps it again (see `WeaklyCachedOutcome`).
  /// Known per provider, so that reads of every other weak entry pay nothing to tell.
  let valueIsOutcome: Bool
  /// The provider this identity belongs to (its `Liveness` token), held weakly: once it is
  /// gone, no resolve can reach what a pod holds for it. Nil for a family member, whose family
  /// is the owner.
  ///
  /// `nonisolated(unsafe)`, and sound: written once, by the initializer of the provider that
  /// owns this description, before the description can reach another thread, and only read
  /// after that, with or without a pod's lock. The runtime reads a weak reference safely from
  /// any thread, also while its object is being freed.
  nonisolated(unsafe) weak var owner: AnyObject?

  var key: ProviderKey { ProviderKey(address: UInt(bitPattern: ObjectIdentifier(self))) }

  init(
    name: String, cycleLabel: String, scope: ScopeInfo, family: FamilyInfo? = nil,
    declaration: Declaration? = nil, valueIsOutcome: Bool = false
  ) {
    self.name = name
    self.cycleLabel = cycleLabel
    self.scope = scope
    self.isAlwaysNew = scope.kind == .alwaysCreateNew
    self.family = family
    self.declaration = declaration
    self.valueIsOutcome = valueIsOutcome
  }
}

extension ProviderInfo {
  /// A provider's identity from what its initializer was given: the given name, or the value
  /// type and where it was declared, such as `Session (SignUp.swift:12)`. Cycle reports add
  /// the declaration site to a given name too.
  convenience init(
    givenName: String?, typeName: String, fileID: String, line: Int, column: Int,
    valueType: Any.Type, scope: any ProviderScope, valueIsOutcome: Bool = false
  ) {
    let location = declarationSite(fileID: fileID, line: line)
    let name = givenName ?? "\(typeName) (\(location))"
    self.init(
      name: name, cycleLabel: givenName.map { "\($0) (\(location))" } ?? name,
      scope: ScopeInfo(scope),
      declaration: Declaration(fileID: fileID, line: line, column: column, valueType: valueType),
      valueIsOutcome: valueIsOutcome)
  }
}

/// `File.swift:12` from a `#fileID` and a `#line`.
func declarationSite(fileID: String, line: Int) -> String {
  let fileName = fileID.split(separator: "/").last.map(String.init) ?? fileID
  return "\(fileName):\(line)"
}

/// A provider's identity in the pod's tables: the address of its `ProviderInfo`, which every
/// table entry keeps alive, so an address is never reused while a table still holds it.
struct ProviderKey: Hashable, Sendable {
  let address: UInt

  func hash(into hasher: inout Hasher) {
    hasher.combine(address)
  }

  /// Dictionaries call this instead of running a full `Hasher`. The keys are object
  /// addresses, not attacker-chosen input, so a multiplicative mix is enough; it costs a few
  /// instructions where SipHash cost about 180 on every cached resolve.
  func _rawHashValue(seed: Int) -> Int {
    mixedAddressHash(address, seed: seed)
  }

}

/// Held by a provider (or family) and weakly by its record: nil in the record once the
/// provider is gone.
final class Liveness: Sendable {}

/// The hash dictionaries use for an object's address. The keys are object addresses, not
/// attacker-chosen input, so a multiplicative mix is enough; it costs a few instructions where
/// SipHash cost about 180 on every cached resolve.
@inline(__always)
func mixedAddressHash(_ address: UInt, seed: Int) -> Int {
  var mixed = UInt64(truncatingIfNeeded: address) ^ UInt64(truncatingIfNeeded: seed)
  mixed = (mixed ^ (mixed >> 33)) &* 0xFF51_AFD7_ED55_8CCD
  mixed = (mixed ^ (mixed >> 33)) &* 0xC4CE_B9FE_1A85_EC53
  return Int(truncatingIfNeeded: mixed ^ (mixed >> 33))
}
