import ProviderPod

/// The app's pod. ArgumentParser makes each command itself, from the command line, so a
/// command cannot be handed the pod: it reaches it here. Tests isolate it per test with the
/// `.isolated` trait of ProviderPodTesting.
public let appPod = Pod()
