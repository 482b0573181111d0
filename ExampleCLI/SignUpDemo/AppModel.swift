import Foundation

// The app: what a person would write for a two-screen sign-up. Nothing here knows about the
// demo's numbering or printing; the demo learns what happened from the pod's events.

/// Settings compiled into the app.
struct AppConfiguration: Sendable {
  /// The shortest display name the profile screen accepts.
  var minimumNameLength = 2
}

/// What the server says about signing up, fetched when the app launches. A class so that two
/// screens can see they hold the same instance.
final class SignUpConfiguration: Sendable {
  /// The terms of service a new account accepts; sent with the sign-up.
  let termsVersion: String

  init(termsVersion: String) { self.termsVersion = termsVersion }
}

/// What the app sends to its server.
protocol HTTPClient: Sendable {
  /// Sends a POST and returns the status code.
  func post(_ path: String, body: String) -> Int
}

/// Stands in for the network in this demo: a server on which every address except
/// `taken@example.com` is free and every sign-up is accepted. It is still starting when the
/// app launches, so it refuses the first configuration request with 503, as real servers
/// sometimes do.
final class DemoServerClient: HTTPClient, @unchecked Sendable {
  private let lock = NSLock()
  private var configurationRequests = 0

  func post(_ path: String, body: String) -> Int {
    switch path {
    case "/email-available": return body == "taken@example.com" ? 409 : 200
    case "/configuration":
      let count = lock.withLock {
        configurationRequests += 1
        return configurationRequests
      }
      return count == 1 ? 503 : 200
    default: return 201
    }
  }
}

/// The server could not answer; worth another try.
struct ServerUnavailable: Error, CustomStringConvertible {
  let status: Int
  var description: String { "the server answered \(status)" }
}

/// Whether an address is free to sign up with, as the server answered. One per address asked
/// about, kept for the sign-up, so going back and forth does not ask again.
struct EmailAvailability: Sendable {
  let email: String
  let isAvailable: Bool
}

/// The form data of one sign-up, shared by both screens. Its provider's `onDiscard` closes
/// it when the sign-up ends.
@MainActor
final class SignUpSession {
  var email: String?
  var name: String?
  /// Whether `close()` ran: the demo shows the provider's `onDiscard` hook running.
  private(set) var isClosed = false

  init() {}

  /// Erases the form data, so nothing personal outlives the sign-up.
  func close() {
    email = nil
    name = nil
    isClosed = true
  }
}

/// Checks email addresses.
///
/// An address is accepted when it has something before its last `@`, something after it,
/// and no spaces. Dotless domains are valid (`a@b`, `postmaster@localhost`: RFC 5321 allows
/// them), and only a confirmation mail proves an address exists, so this only catches typos.
struct EmailValidator: Sendable {
  /// Why `email` is not acceptable, or nil.
  func problem(with email: String) -> String? {
    guard let at = email.lastIndex(of: "@"), at != email.startIndex,
      email.index(after: at) != email.endIndex, !email.contains(where: \.isWhitespace)
    else {
      return "'\(email)' is not an email address: it needs a name, an @ and a domain, no spaces"
    }
    return nil
  }
}

/// Checks display names against the app's configuration.
struct NameValidator: Sendable {
  let minimumLength: Int

  func problem(with name: String) -> String? {
    name.count >= minimumLength ? nil : "a name needs at least \(minimumLength) characters"
  }
}

/// The email screen's state.
@MainActor
final class EmailStepViewModel {
  let session: SignUpSession
  private let validator: EmailValidator

  init(session: SignUpSession, validator: EmailValidator) {
    self.session = session
    self.validator = validator
  }

  /// Stores the email in the session, or says why it cannot. `availability` asks the server,
  /// and is only called for a well-formed address.
  func submit(_ email: String, availability: (String) -> EmailAvailability) -> String? {
    if let problem = validator.problem(with: email) { return problem }
    guard availability(email).isAvailable else {
      return "\(email) already has an account: sign in instead, or use another address"
    }
    session.email = email
    return nil
  }
}

/// The profile screen's state.
@MainActor
final class ProfileStepViewModel {
  let session: SignUpSession
  private let validator: NameValidator

  init(session: SignUpSession, validator: NameValidator) {
    self.session = session
    self.validator = validator
  }

  /// Stores the name in the session, or says why it cannot.
  func submit(_ name: String) -> String? {
    if let problem = validator.problem(with: name) { return problem }
    session.name = name
    return nil
  }
}

/// Sends finished sign-ups to the server.
struct SignUpService: Sendable {
  let client: any HTTPClient

  /// Posts a sign-up; returns the status code (201 when the account was created).
  func submit(email: String, name: String, termsVersion: String) -> Int {
    client.post("/signup", body: "email=\(email) name=\(name) terms=\(termsVersion)")
  }
}
