// What the DocC article AsyncResilience.md uses without showing it (see Scripts/check-readme).
import ProviderPod

let pod = Pod()

struct Configuration: Sendable {
  let databaseURL = "sqlite:///app.db"
}
struct ServerUnavailable: Error {}
final class API: Sendable {
  func fetchConfiguration() async throws -> Configuration { Configuration() }
  func catalogPage(_ number: Int) async throws -> [String] { ["item \(number)"] }
}
let apiProvider = Provider { _ in API() }

final class Database: Sendable {
  static func open(_ url: String) async throws -> Database { Database() }
}

struct SignUpFlowScope: ProviderScope {}
final class SignUpSession: Sendable {
  var email: String? { nil }
}
let sessionProvider = Provider(scope: SignUpFlowScope()) { _ in SignUpSession() }
