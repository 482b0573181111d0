import ProviderPod

/// One sign-up, from "Sign up" to "Finish". Clearing it clears both step scopes.
struct SignUpFlowScope: ProviderScope {
  var children: [any ProviderScope] { [EmailStepScope(), ProfileStepScope()] }
}

/// The email screen of the sign-up flow.
struct EmailStepScope: ProviderScope {}

/// The profile screen of the sign-up flow.
struct ProfileStepScope: ProviderScope {}
