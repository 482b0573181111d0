// Noticing a provider made again by the same expression: most often a provider declared as a
// computed property (`var service: Provider<Service> { Provider { ... } }`, a Factory habit).
// Every access makes a new provider, so a new dependency: nothing is ever reused, overrides of
// it never apply, and each instance stays cached, out of reach, until the pod goes away.
//
// The type system cannot tell a computed property from a stored one, so an observed pod looks
// for the symptom instead. When it builds a provider, it checks whether it still holds the
// cached instance or the override of an *earlier* provider that was made by the same
// expression (same file, line and column, value type and name) and is gone, and reports
// `PodEvent.providerRecreated`. "Gone" is what tells the mistake from providers made by one
// function on purpose, which their callers keep, and from a family's members, which share
// their family's declaration. Unobserved pods do none of this: the cached resolve does not
// change, and a build only pays for it when there is an observer to tell.

/// Where a provider (or family) was declared and what it builds: providers made by one
/// expression, such as a computed property's body evaluated twice, have equal declarations.
struct Declaration: Hashable, Sendable {
  let fileID: String
  let line: Int
  let column: Int
  let valueType: ObjectIdentifier

  init(fileID: String, line: Int, column: Int, valueType: Any.Type) {
    self.fileID = fileID
    self.line = line
    self.column = column
    self.valueType = ObjectIdentifier(valueType)
  }

  /// `File.swift:12:7`.
  var site: String { "\(declarationSite(fileID: fileID, line: line)):\(column)" }
}

/// What makes two providers the same provider made twice: one declaration and one name. (A
/// family's members share their family's declaration and differ by name.)
struct Lookalike: Hashable, Sendable {
  let declaration: Declaration
  let name: String

  init?(_ provider: ProviderInfo) {
    guard let declaration = provider.declaration ?? provider.family?.declaration else {
      return nil
    }
    self.declaration = declaration
    self.name = provider.name
  }

  init(_ family: FamilyInfo) {
    declaration = family.declaration
    name = family.name
  }
}

/// The provider an observed pod cached last for each lookalike key: enough to find an earlier
/// provider made by the same expression, since each new one is compared with the one before.
/// Keys of providers whose instances are gone are swept once the index has doubled since the
/// last sweep, so it stays proportional to what the pod caches.
struct LookalikeIndex {
  private(set) var latest = [Lookalike: ProviderKey]()
  private var sweepAt = 64

  /// Records `key` as the latest provider cached for `lookalike`; returns the one before it.
  mutating func record(
    _ key: ProviderKey, for lookalike: Lookalike, slots: SlotTable
  ) -> ProviderKey? {
    let previous = latest.updateValue(key, forKey: lookalike)
    if latest.count >= sweepAt {
      latest = latest.filter { slots[$0.value]?.entry != nil }
      sweepAt = max(64, latest.count * 2)
    }
    return previous
  }
}

/// An earlier provider that looks like the one just built, held by the pod, whose owner may be
/// gone. Checked outside the pod's lock: loading a weak reference may take the last strong one.
enum LookalikeSuspect {
  case provider(ProviderInfo)
  case family(FamilyInfo)

  /// Whether the provider, or for a family member its family, no longer exists: nothing can
  /// resolve what the pod holds for it.
  var isGone: Bool {
    switch self {
    case .provider(let provider):
      if let family = provider.family { return family.owner == nil }
      return provider.owner == nil
    case .family(let family):
      return family.owner == nil
    }
  }
}
