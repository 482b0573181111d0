import ProviderPod
import Testing

// Written the way an app target with Xcode 26's default MainActor isolation is: everything is
// on the main actor unless it says otherwise. What such a module must write differently
// (the README explains it):
// - main-actor types (the default here) are built by a `MainActorProvider`;
// - a type a plain or async provider builds is declared `nonisolated`, since their builders
//   are not on the main actor;
// - a provider that code off the main actor resolves is declared `nonisolated let`.

/// Main-actor state, like any type in this module.
final class ProfileViewModel {
  let client: APIClient
  var name = ""
  init(client: APIClient) { self.client = client }
}

/// A service used from anywhere.
nonisolated final class APIClient: Sendable {
  let host: String
  init(host: String) { self.host = host }
}

nonisolated struct RemoteConfig: Sendable {
  let welcomeText: String
}

nonisolated let apiClientProvider = Provider { _ in APIClient(host: "api.example.com") }
let remoteConfigProvider = AsyncProvider { pod in
  RemoteConfig(welcomeText: "Welcome to \(pod.resolve(apiClientProvider).host)")
}
let profileViewModelProvider = MainActorProvider { pod in
  ProfileViewModel(client: pod.resolve(apiClientProvider))
}

@Suite("A module with default MainActor isolation")
struct AppModuleTests {
  @Test("plain, async and main-actor providers resolve on the main actor")
  func resolves() async throws {
    let pod = Pod()
    let viewModel = pod.resolve(profileViewModelProvider)
    viewModel.name = "Ada"
    #expect(pod.resolve(profileViewModelProvider).name == "Ada")
    #expect(viewModel.client === pod.resolve(apiClientProvider))
    #expect(
      try await pod.resolve(remoteConfigProvider).welcomeText == "Welcome to api.example.com")
  }

  @Test("a nonisolated provider resolves off the main actor too")
  func background() async {
    let pod = Pod()
    let host = await Task.detached { pod.resolve(apiClientProvider).host }.value
    #expect(host == "api.example.com")
  }
}
