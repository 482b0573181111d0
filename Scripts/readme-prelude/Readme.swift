// What README.md's examples use without showing it: the app's own types. Scripts/check-readme
// compiles these with every README block that is not in a module of its own (the tour is
// checked alone too, without this file, so that it stays self-contained).
import ProviderPod

struct Configuration: Sendable {
  let host: String
  static let production = Configuration(host: "api.example.com")
  static let staging = Configuration(host: "staging.example.com")
}

final class SignUpSession: Sendable {
  let configuration: Configuration
  init(configuration: Configuration) { self.configuration = configuration }
  static var empty: SignUpSession { SignUpSession(configuration: .staging) }
  func close() {}
}

final class SignUpDraft: Sendable {
  let session: SignUpSession
  init(session: SignUpSession) { self.session = session }
  func close() {}
}

final class EmailForm {
  let session: SignUpSession
  init(session: SignUpSession) { self.session = session }
}

final class SignUpAnalytics {
  let session: SignUpSession
  init(session: SignUpSession) { self.session = session }
}

struct RequestID: Hashable {
  let value: Int
  static func next() -> RequestID { RequestID(value: 1) }
}

final class ImageCache {}

struct UserID: Hashable, Sendable, CustomStringConvertible {
  let raw: Int
  init(_ raw: Int) { self.raw = raw }
  var description: String { "\(raw)" }
}

final class Profile {
  let userID: UserID
  init(userID: UserID, api: API) { self.userID = userID }
  private init(userID: UserID) { self.userID = userID }
  static func placeholder(_ userID: UserID) -> Profile { Profile(userID: userID) }
  static var banned: Profile { Profile(userID: UserID(0)) }
}

extension API {
  func fetchConfiguration() async throws -> Configuration { .production }
}

@MainActor final class SignUpViewModel {
  let session: SignUpSession
  init(session: SignUpSession) { self.session = session }
}

struct Repository: Sendable {
  let table: String
}
