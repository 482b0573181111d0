import ProviderPod
import Testing

// The README's snippets, as they appear there, so they keep compiling and stay true.
// Declarations are fileprivate so they cannot collide with other test files.

// MARK: The 30-second tour

private protocol HTTPClient: Sendable {}
private struct LiveHTTPClient: HTTPClient {}
private struct FakeHTTPClient: HTTPClient {}
private final class API: Sendable {
  let client: any HTTPClient
  init(client: any HTTPClient) { self.client = client }
}

private let httpClientProvider = Provider<any HTTPClient> { _ in LiveHTTPClient() }
private let apiProvider = Provider { pod in API(client: pod.resolve(httpClientProvider)) }

// MARK: Providers, scopes and the tree

private struct Configuration: Equatable {
  let host: String
  static let production = Configuration(host: "api.example.com")
  static let staging = Configuration(host: "staging.example.com")
}

private final class SignUpSession: Sendable {
  let configuration: Configuration
  init(configuration: Configuration) { self.configuration = configuration }
  static var empty: SignUpSession { SignUpSession(configuration: .staging) }
}

private struct SignUpFlowScope: ProviderScope {
  var children: [any ProviderScope] { [EmailStepScope(), ProfileStepScope()] }
}
private struct EmailStepScope: ProviderScope {}
private struct ProfileStepScope: ProviderScope {}

private final class EmailForm: Sendable {
  let session: SignUpSession
  init(session: SignUpSession) { self.session = session }
}
private final class SignUpAnalytics: Sendable {
  let session: SignUpSession
  init(session: SignUpSession) { self.session = session }
}
private struct RequestID: Hashable {
  let value: Int
  nonisolated(unsafe) static var counter = 0
  static func next() -> RequestID {
    counter += 1
    return RequestID(value: counter)
  }
}
private final class ImageCache: Sendable {}

private let configurationProvider = Provider { _ in Configuration.production }
private let sessionProvider = Provider(scope: SignUpFlowScope(), name: "sessionProvider") {
  pod in
  SignUpSession(configuration: pod.resolve(configurationProvider))
}
private let requestIDProvider = Provider(scope: AlwaysCreateNewScope()) { _ in
  RequestID.next()
}
private let imageCacheProvider = Provider(scope: WeakScope()) { _ in ImageCache() }
private let emailFormProvider = Provider(scope: EmailStepScope()) { pod in
  EmailForm(session: pod.resolve(sessionProvider))
}
private let analyticsProvider = Provider { pod in
  SignUpAnalytics(session: pod.resolve(sessionProvider))
}

private struct UserID: Hashable, Sendable, CustomStringConvertible {
  let raw: Int
  init(_ raw: Int) { self.raw = raw }
  var description: String { "\(raw)" }
}

private struct Profile: Equatable {
  let userID: UserID
  let isPlaceholder: Bool
  init(userID: UserID, api: API) {
    self.userID = userID
    self.isPlaceholder = false
  }
  private init(placeholderFor userID: UserID) {
    self.userID = userID
    self.isPlaceholder = true
  }
  static func placeholder(_ userID: UserID) -> Profile { Profile(placeholderFor: userID) }
  static let banned = Profile(placeholderFor: UserID(-1))
}

private final class SignUpDraft: @unchecked Sendable {
  let session: SignUpSession
  private(set) var isClosed = false
  init(session: SignUpSession) { self.session = session }
  func close() { isClosed = true }
}

private let profileProvider = ProviderFamily(scope: SignUpFlowScope(), name: "profileProvider") {
  (pod, userID: UserID) in
  Profile(userID: userID, api: pod.resolve(apiProvider))
}

private let draftProvider = Provider(
  scope: SignUpFlowScope(), name: "draftProvider", onDiscard: { draft in draft.close() }
) { pod in
  SignUpDraft(session: pod.resolve(sessionProvider))
}

private struct RemoteConfig: Sendable, Equatable {
  let welcome: String
}

extension API {
  fileprivate func fetchConfiguration() async throws -> RemoteConfig {
    await Task.yield()
    return RemoteConfig(welcome: "hi")
  }
}

@MainActor
private final class SignUpViewModel {
  let session: SignUpSession
  init(session: SignUpSession) { self.session = session }
}

private let remoteConfigProvider = AsyncProvider(name: "remoteConfigProvider") { pod in
  try await pod.resolve(apiProvider).fetchConfiguration()
}

private let signUpViewModelProvider = MainActorProvider(scope: SignUpFlowScope()) { pod in
  SignUpViewModel(session: pod.resolve(sessionProvider))
}

@MainActor private func showSignUp(pod: Pod) -> SignUpViewModel {
  pod.resolve(signUpViewModelProvider)
}

private struct PrintingObserver: PodObserver {
  func pod(_ pod: Pod, didReport event: PodEvent) { print(event) }
}

/// What `PrintingObserver` printed. This file's `print` shadows the standard library's, so the
/// README's observer is checked exactly as the README writes it.
private let printed = Shared<[String]>([])
private func print(_ item: Any) { printed.withLock { $0.append("\(item)") } }

@Suite("README examples")
@MainActor  // RequestID's counter is a plain static
struct ReadmeExamplesTests {
  @Test("the 30-second tour")
  func tour() {
    let pod = Pod()
    let api = pod.resolve(apiProvider)
    #expect(pod.resolve(apiProvider) === api)
    #expect(!(api.client is FakeHTTPClient))

    let testPod = Pod(overrides: [httpClientProvider.override { _ in FakeHTTPClient() }])
    #expect(testPod.resolve(apiProvider).client is FakeHTTPClient)
  }

  @Test("scopes")
  func scopes() {
    let pod = Pod()
    #expect(pod.resolve(requestIDProvider) != pod.resolve(requestIDProvider))
    let cache = pod.resolve(imageCacheProvider)
    #expect(pod.resolve(imageCacheProvider) === cache)
  }

  @Test("the scope tree")
  func scopeTree() {
    let pod = Pod()
    let form = pod.resolve(emailFormProvider)
    let session = pod.resolve(sessionProvider)
    pod.clearCachedInstances(forScope: EmailStepScope())  // the email step only
    #expect(pod.resolve(emailFormProvider) !== form)
    #expect(pod.resolve(sessionProvider) === session)
    let form2 = pod.resolve(emailFormProvider)
    pod.clearCachedInstances(forScope: SignUpFlowScope())  // the flow and both steps
    #expect(pod.resolve(sessionProvider) !== session)
    #expect(pod.resolve(emailFormProvider) !== form2)
  }

  @Test("what was built from a discarded instance is discarded too")
  func dependents() {
    let pod = Pod()
    let first = pod.resolve(analyticsProvider)
    pod.clearCachedInstances(forScope: SignUpFlowScope())
    let second = pod.resolve(analyticsProvider)
    #expect(first !== second)
    #expect(second.session === pod.resolve(sessionProvider))
  }

  @Test("overrides")
  func overrides() {
    let previewPod = Pod(overrides: [
      httpClientProvider.override { _ in FakeHTTPClient() },
      configurationProvider.override(withValue: .staging),
    ])
    #expect(previewPod.resolve(apiProvider).client is FakeHTTPClient)
    #expect(previewPod.resolve(sessionProvider).configuration == .staging)

    let pod = Pod()
    pod.overrideProvider(httpClientProvider) { _ in FakeHTTPClient() }
    pod.overrideProvider(configurationProvider, withValue: .staging)
    pod.overrideProvider(sessionProvider, scope: AlwaysCreateNewScope()) { _ in .empty }
    #expect(pod.resolve(apiProvider).client is FakeHTTPClient)
    #expect(pod.resolve(sessionProvider) !== pod.resolve(sessionProvider))
    pod.removeOverrideProvider(httpClientProvider)
    #expect(!(pod.resolve(apiProvider).client is FakeHTTPClient))
  }

  @Test("provider families")
  func families() {
    let pod = Pod()
    let ada = pod.resolve(profileProvider(UserID(42)))
    #expect(pod.resolve(profileProvider(UserID(42))) == ada)
    #expect(pod.resolve(profileProvider(UserID(7))).userID == UserID(7))
    #expect(profileProvider(UserID(42)).name == "profileProvider(42)")

    pod.overrideProvider(profileProvider) { _, id in Profile.placeholder(id) }
    pod.overrideProvider(profileProvider(UserID(7))) { _ in .banned }
    #expect(pod.resolve(profileProvider(UserID(42))).isPlaceholder)
    #expect(pod.resolve(profileProvider(UserID(7))) == .banned)
    let testPod = Pod(overrides: [profileProvider.override { _, id in Profile.placeholder(id) }])
    #expect(testPod.resolve(profileProvider(UserID(1))).isPlaceholder)
  }

  @Test("clearing one provider")
  func clearingOne() {
    // `Profile` is a struct, so a rebuilt one is equal to the old: count the builds instead.
    let recorder = EventRecorder()
    let pod = Pod(observer: recorder)
    func builds(of userID: Int) -> Int {
      recorder.events.count {
        $0 == .built(provider: "profileProvider(\(userID))", scope: "SignUpFlowScope")
      }
    }
    let first = pod.resolve(profileProvider(UserID(42)))
    _ = pod.resolve(profileProvider(UserID(7)))
    pod.clearCachedInstance(of: profileProvider(UserID(42)))  // the profile changed on the server
    #expect(pod.resolve(profileProvider(UserID(42))) == first)  // equal, rebuilt
    #expect(builds(of: 42) == 2)
    #expect(builds(of: 7) == 1)
    pod.clearCachedInstances(of: profileProvider)  // every profile
    _ = pod.resolve(profileProvider(UserID(42)))
    _ = pod.resolve(profileProvider(UserID(7)))
    #expect(builds(of: 42) == 3)
    #expect(builds(of: 7) == 2)
  }

  @Test("disposal with onDiscard")
  func disposal() {
    let pod = Pod()
    let draft = pod.resolve(draftProvider)
    #expect(!draft.isClosed)
    pod.clearCachedInstances(forScope: SignUpFlowScope())
    #expect(draft.isClosed)
    #expect(pod.resolve(draftProvider) !== draft)
  }

  @Test("async providers")
  func asyncProviders() async throws {
    let pod = Pod()
    let config = try await pod.resolve(remoteConfigProvider)
    #expect(config == RemoteConfig(welcome: "hi"))
  }

  @Test("main-actor providers")
  func mainActorProviders() {
    let pod = Pod()
    let viewModel = showSignUp(pod: pod)
    #expect(showSignUp(pod: pod) === viewModel)
    #expect(viewModel.session === pod.resolve(sessionProvider))
  }

  @Test("observing the pod")
  func observing() {
    let observedPod = Pod(observer: PrintingObserver())
    _ = observedPod.resolve(apiProvider)
    #expect(observedPod.resolve(apiProvider) === observedPod.resolve(apiProvider))
    let api = apiProvider.name
    let client = httpClientProvider.name
    #expect(
      printed.withLock { $0 } == [
        "built \(client) in SingletonScope", "built \(api) in SingletonScope",
        "reused \(api) in SingletonScope", "reused \(api) in SingletonScope",
      ])
  }
}
