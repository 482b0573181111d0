// What the DocC article InsideABuilder.md uses without showing it: the types Getting Started
// declares (see Scripts/check-readme).
import ProviderPod

protocol HTTPClient: Sendable {
  func get(_ path: String) async throws -> String
}
struct LiveHTTPClient: HTTPClient {
  func get(_ path: String) async throws -> String { "..." }
}
final class API: Sendable {
  let client: any HTTPClient
  init(client: any HTTPClient) { self.client = client }
  func userName() async throws -> String { try await client.get("/me") }
}
let httpClientProvider = Provider<any HTTPClient> { _ in LiveHTTPClient() }
let apiProvider = Provider { pod in API(client: pod.resolve(httpClientProvider)) }
