// What the DocC article Concurrency.md uses without showing it (see Scripts/check-readme).
import ProviderPod

let pod = Pod()

struct Configuration: Sendable {
  let databaseURL = "sqlite:///app.db"
}
let configurationProvider = Provider { _ in Configuration() }
final class Database: Sendable {
  static func open(_ url: String) async throws -> Database { Database() }
  func sync() async throws {}
}

struct SignUpFlowScope: ProviderScope {}
final class SignUpSession: Sendable {}
let sessionProvider = Provider(scope: SignUpFlowScope()) { _ in SignUpSession() }
@MainActor final class SignUpViewModel {
  init(session: SignUpSession) {}
}
