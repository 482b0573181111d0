import ProviderPod

// The app's dependencies: one global provider next to each type, nothing to register.

let appConfigurationProvider = Provider(name: "AppConfiguration") { _ in AppConfiguration() }

let httpClientProvider = Provider<any HTTPClient>(name: "HTTPClient") { _ in DemoServerClient() }

/// Loaded once when the app launches; screens that ask while it loads share the one load, and
/// its retries when the server does not answer.
let signUpConfigurationProvider = AsyncProvider(
  name: "SignUpConfiguration",
  retry: .exponentialBackoff(initialDelay: .milliseconds(100), maxAttempts: 4)
) { pod in
  let client = pod.resolve(httpClientProvider)
  // Stands in for the network's latency.
  await Task.yield()
  let status = client.post("/configuration", body: "")
  guard status == 200 else { throw ServerUnavailable(status: status) }
  return SignUpConfiguration(termsVersion: "2026-01")
}

let signUpServiceProvider = Provider(name: "SignUpService") { pod in
  SignUpService(client: pod.resolve(httpClientProvider))
}

/// One server answer per address, kept for the sign-up: every member goes when the flow
/// scope is cleared.
let emailAvailabilityProvider = ProviderFamily(
  scope: SignUpFlowScope(), name: "EmailAvailability"
) { (pod, email: String) in
  let status = pod.resolve(httpClientProvider).post("/email-available", body: email)
  return EmailAvailability(email: email, isAvailable: status == 200)
}

let signUpSessionProvider = MainActorProvider(
  scope: SignUpFlowScope(), name: "SignUpSession", onDiscard: { session in session.close() }
) { _ in SignUpSession() }

let emailValidatorProvider = Provider(scope: EmailStepScope(), name: "EmailValidator") { _ in
  EmailValidator()
}

let emailStepViewModelProvider = MainActorProvider(
  scope: EmailStepScope(), name: "EmailStepViewModel"
) { pod in
  EmailStepViewModel(
    session: pod.resolve(signUpSessionProvider), validator: pod.resolve(emailValidatorProvider))
}

let nameValidatorProvider = Provider(scope: ProfileStepScope(), name: "NameValidator") { pod in
  NameValidator(minimumLength: pod.resolve(appConfigurationProvider).minimumNameLength)
}

let profileStepViewModelProvider = MainActorProvider(
  scope: ProfileStepScope(), name: "ProfileStepViewModel"
) { pod in
  ProfileStepViewModel(
    session: pod.resolve(signUpSessionProvider), validator: pod.resolve(nameValidatorProvider))
}
