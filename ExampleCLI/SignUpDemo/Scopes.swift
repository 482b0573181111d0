import ProviderPod

/// One window of the app. Nothing lives in it directly: each window's pod owns it, and so
/// owns the sign-up flow below it, while the app's singletons stay in the app's pod.
struct WindowScope: ProviderScope {
  var children: [any ProviderScope] { [SignUpFlowScope()] }
}

/// One sign-up, from "Sign up" to "Finish". Clearing it clears both step scopes.
struct SignUpFlowScope: ProviderScope {
  var children: [any ProviderScope] { [EmailStepScope(), ProfileStepScope()] }
}

/// The email screen of the sign-up flow.
struct EmailStepScope: ProviderScope {}

/// The profile screen of the sign-up flow.
struct ProfileStepScope: ProviderScope {}
