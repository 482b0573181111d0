// What the DocC article Testing.md uses without showing it (see Scripts/check-readme).
import Foundation
import ProviderPod

protocol HTTPClient: Sendable {
  func post(_ path: String, _ body: String) async throws
}
final class RecordingHTTPClient: HTTPClient, @unchecked Sendable {
  private let lock = NSLock()
  private var sent: [String] = []
  var requests: [String] { lock.withLock { sent } }
  func post(_ path: String, _ body: String) async throws {
    lock.withLock { sent.append("POST \(path) \(body)") }
  }
}
struct LiveHTTPClient: HTTPClient {
  func post(_ path: String, _ body: String) async throws {}
}
let httpClientProvider = Provider<any HTTPClient> { _ in LiveHTTPClient() }

final class SignUpService: Sendable {
  let client: any HTTPClient
  init(client: any HTTPClient) { self.client = client }
  func submit(email: String) async throws { try await client.post("/sign-up", email) }
}
let signUpServiceProvider = Provider { pod in
  SignUpService(client: pod.resolve(httpClientProvider))
}

struct SignUpFlowScope: ProviderScope {
  var children: [any ProviderScope] { [EmailStepScope()] }
}
struct EmailStepScope: ProviderScope {}
final class SignUpSession: Sendable {}
final class EmailForm: Sendable {
  init(session: SignUpSession) {}
}
let sessionProvider = Provider(scope: SignUpFlowScope(), name: "sessionProvider") { _ in
  SignUpSession()
}
let emailFormProvider = Provider(scope: EmailStepScope()) { pod in
  EmailForm(session: pod.resolve(sessionProvider))
}
