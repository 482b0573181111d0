// What the DocC article Lifetimes.md uses without showing it (see Scripts/check-readme).
import ProviderPod

let pod = Pod()

final class SignUpSession {}
final class EmailForm {
  init(session: SignUpSession) {}
}
final class Database {
  static func open() -> Database { Database() }
  func close() {}
}

struct UserID: Hashable, Sendable {}
final class Profile {}
let profileProvider = ProviderFamily(scope: SignUpFlowScope()) { (_, userID: UserID) in Profile() }
