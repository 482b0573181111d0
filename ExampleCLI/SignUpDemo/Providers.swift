import ProviderPod

// The app's dependencies: one global provider next to each type, nothing to register.

let appConfigurationProvider = Provider(name: "AppConfiguration") { pod in
  AppConfiguration(label: pod.label("AppConfiguration"))
}

let httpClientProvider = Provider<any HTTPClient>(name: "HTTPClient") { pod in
  InMemoryBackendClient(label: pod.label("HTTPClient"))
}

let analyticsLogProvider = Provider(name: "AnalyticsLog") { pod in
  AnalyticsLog(label: pod.label("AnalyticsLog"))
}

let signUpSessionProvider = Provider(
  scope: SignUpFlowScope(), name: "SignUpSession", onDiscard: { session in session.close() }
) { pod in
  SignUpSession(label: pod.label("SignUpSession"), analytics: pod.resolve(analyticsLogProvider))
}

let signUpServiceProvider = Provider(scope: SignUpFlowScope(), name: "SignUpService") {
  pod in
  SignUpService(
    label: pod.label("SignUpService"),
    client: pod.resolve(httpClientProvider),
    session: pod.resolve(signUpSessionProvider),
    analytics: pod.resolve(analyticsLogProvider))
}

let emailValidatorProvider = Provider(scope: EmailStepScope(), name: "EmailValidator") {
  pod in
  EmailValidator(label: pod.label("EmailValidator"))
}

let emailStepViewModelProvider = Provider(
  scope: EmailStepScope(), name: "EmailStepViewModel"
) { pod in
  EmailStepViewModel(
    label: pod.label("EmailStepViewModel"),
    session: pod.resolve(signUpSessionProvider),
    validator: pod.resolve(emailValidatorProvider),
    analytics: pod.resolve(analyticsLogProvider))
}

let nameValidatorProvider = Provider(scope: ProfileStepScope(), name: "NameValidator") {
  pod in
  NameValidator(
    label: pod.label("NameValidator"), configuration: pod.resolve(appConfigurationProvider))
}

let profileStepViewModelProvider = Provider(
  scope: ProfileStepScope(), name: "ProfileStepViewModel"
) { pod in
  ProfileStepViewModel(
    label: pod.label("ProfileStepViewModel"),
    session: pod.resolve(signUpSessionProvider),
    validator: pod.resolve(nameValidatorProvider))
}

let signUpConfigurationProvider = AsyncProvider(name: "SignUpConfiguration") { pod in
  // Stands in for a network request: suspends, then builds from what it fetched.
  await Task.yield()
  let client = pod.resolve(httpClientProvider)
  _ = client.post("/config", body: "")
  return SignUpConfiguration(label: pod.label("SignUpConfiguration"), requiresName: true)
}
