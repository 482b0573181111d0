/// What the pod knows of a family, whatever its types.
final class FamilyInfo: Sendable {
  let name: String
  let scope: ScopeInfo
  /// Where the family was declared and what it builds; its members share it.
  let declaration: Declaration
  /// The family this identity belongs to, held weakly: once it is gone, no resolve can reach
  /// its members again.
  ///
  /// `nonisolated(unsafe)`, and sound: written once, by the family's initializer, before this
  /// description can reach another thread, and only read after that (see
  /// `ProviderInfo.owner`).
  nonisolated(unsafe) weak var owner: AnyObject?
  private let givenName: String?
  private let typeName: String
  private let location: String

  init(name: String?, typeName: String, declaration: Declaration, scope: ScopeInfo) {
    self.givenName = name
    self.typeName = typeName
    self.declaration = declaration
    self.location = declarationSite(fileID: declaration.fileID, line: declaration.line)
    self.name = name ?? "\(typeName) (\(location))"
    self.scope = scope
  }

  var key: ProviderKey { ProviderKey(address: UInt(bitPattern: ObjectIdentifier(self))) }

  func makeMember(argument: String) -> ProviderInfo {
    let name = givenName.map { "\($0)(\(argument))" } ?? "\(typeName)(\(argument)) (\(location))"
    let cycleLabel = givenName.map { "\($0)(\(argument)) (\(location))" } ?? name
    return ProviderInfo(name: name, cycleLabel: cycleLabel, scope: scope, family: self)
  }
}
