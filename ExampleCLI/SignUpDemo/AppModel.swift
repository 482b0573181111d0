/// The app's settings. A singleton: the same for every sign-up.
final class AppConfiguration: CustomStringConvertible {
  let label: String
  let apiHost = "api.example.com"
  let minimumNameLength = 2

  init(label: String) { self.label = label }
  var description: String { label }
}

/// The sign-up rules, fetched from the server when the app starts. Built by an
/// `AsyncProvider`: the load is shared by everyone who asks while it is running.
struct SignUpConfiguration: Sendable, CustomStringConvertible {
  let label: String
  let requiresName: Bool
  var description: String { label }
}

/// What the app sends to its server.
protocol HTTPClient: AnyObject, CustomStringConvertible {
  /// Sends a POST and returns the status code.
  func post(_ path: String, body: String) -> Int
  /// Every request sent so far, as `POST /path body`.
  var sentRequests: [String] { get }
}

/// The live client: a fake backend that accepts every sign-up.
final class InMemoryBackendClient: HTTPClient {
  let label: String
  private(set) var sentRequests: [String] = []

  init(label: String) { self.label = label }
  var description: String { label }

  func post(_ path: String, body: String) -> Int {
    sentRequests.append("POST \(path) \(body)")
    return 201
  }
}

/// A test double that records requests and answers with a fixed status.
final class RecordingHTTPClient: HTTPClient {
  let label: String
  let status: Int
  private(set) var sentRequests: [String] = []

  init(label: String, status: Int = 201) {
    self.label = label
    self.status = status
  }
  var description: String { label }

  func post(_ path: String, body: String) -> Int {
    sentRequests.append("POST \(path) \(body)")
    return status
  }
}

/// App-wide analytics. A singleton.
final class AnalyticsLog: CustomStringConvertible {
  let label: String
  private(set) var events: [String] = []

  init(label: String) { self.label = label }
  var description: String { label }

  func track(_ event: String) { events.append(event) }
}

/// The form data of one sign-up, shared by both steps. Lives in `SignUpFlowScope`; its
/// provider's `onDiscard` closes it when the flow scope is cleared.
final class SignUpSession: CustomStringConvertible {
  let label: String
  var email: String?
  var name: String?
  private let analytics: AnalyticsLog

  init(label: String, analytics: AnalyticsLog) {
    self.label = label
    self.analytics = analytics
  }
  var description: String { label }

  /// Erases the form data, so nothing personal outlives the sign-up.
  func close() {
    email = nil
    name = nil
    analytics.track("\(label) closed by onDiscard: form data erased")
  }
}

/// Checks email addresses. Lives in `EmailStepScope`.
final class EmailValidator: CustomStringConvertible {
  let label: String

  init(label: String) { self.label = label }
  var description: String { label }

  /// Why `email` is not acceptable, or nil.
  func problem(with email: String) -> String? {
    let parts = email.split(separator: "@", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, parts[1].contains(".") else {
      return "'\(email)' is not an email address: it needs a name, an @ and a domain"
    }
    return nil
  }
}

/// Checks display names against the configuration. Lives in `ProfileStepScope`.
final class NameValidator: CustomStringConvertible {
  let label: String
  let minimumLength: Int

  init(label: String, configuration: AppConfiguration) {
    self.label = label
    self.minimumLength = configuration.minimumNameLength
  }
  var description: String { label }

  func problem(with name: String) -> String? {
    name.count >= minimumLength ? nil : "a name needs at least \(minimumLength) characters"
  }
}

/// The email screen's state. Lives in `EmailStepScope`.
final class EmailStepViewModel: CustomStringConvertible {
  let label: String
  let session: SignUpSession
  let validator: EmailValidator
  let analytics: AnalyticsLog

  init(label: String, session: SignUpSession, validator: EmailValidator, analytics: AnalyticsLog) {
    self.label = label
    self.session = session
    self.validator = validator
    self.analytics = analytics
  }
  var description: String { label }

  /// Stores the email in the session, or says why it cannot.
  func submit(_ email: String) -> String? {
    if let problem = validator.problem(with: email) { return problem }
    session.email = email
    analytics.track("email entered")
    return nil
  }
}

/// The profile screen's state. Lives in `ProfileStepScope`.
final class ProfileStepViewModel: CustomStringConvertible {
  let label: String
  let session: SignUpSession
  let validator: NameValidator

  init(label: String, session: SignUpSession, validator: NameValidator) {
    self.label = label
    self.session = session
    self.validator = validator
  }
  var description: String { label }

  func submit(_ name: String) -> String? {
    if let problem = validator.problem(with: name) { return problem }
    session.name = name
    return nil
  }
}

/// Sends a finished sign-up to the server. Lives in `SignUpFlowScope`.
final class SignUpService: CustomStringConvertible {
  let label: String
  let client: any HTTPClient
  let session: SignUpSession
  let analytics: AnalyticsLog

  init(label: String, client: any HTTPClient, session: SignUpSession, analytics: AnalyticsLog) {
    self.label = label
    self.client = client
    self.session = session
    self.analytics = analytics
  }
  var description: String { label }

  /// Posts the session's data; returns the status code.
  func submit() -> Int {
    let status = client.post(
      "/signup", body: "email=\(session.email ?? "") name=\(session.name ?? "")")
    analytics.track("sign-up submitted (\(status))")
    return status
  }
}
