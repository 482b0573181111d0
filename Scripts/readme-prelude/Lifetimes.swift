// What the DocC article Lifetimes.md uses without showing it: the app's own types, which the
// article names (see Scripts/check-readme).
import ProviderPod

let pod = Pod()

final class SignUpSession: Sendable {}
final class EmailForm: Sendable {
  init(session: SignUpSession) {}
}
final class Database: Sendable {
  static func open() -> Database { Database() }
  func close() {}
}
final class ConnectionPool: Sendable {
  static func connect() async throws -> ConnectionPool { ConnectionPool() }
  func close() async throws {}
}
final class Mailer: Sendable {
  init(pool: ConnectionPool) {}
  func flush() async {}
}
