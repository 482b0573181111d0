// What the DocC catalog's front page, ProviderPod.md, uses without showing it.
import ProviderPod

protocol HTTPClient: Sendable {}
struct LiveHTTPClient: HTTPClient {}
final class API: Sendable {
  init(client: any HTTPClient) {}
}
