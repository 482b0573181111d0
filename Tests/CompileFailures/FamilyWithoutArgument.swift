// Must NOT compile: .ci/check-compile-failures typechecks this file against the library and
// expects each `// expected-error:` text below among the compiler's errors.
import ProviderPod

struct Profile { let id: Int }
let profiles = ProviderFamily { (_, id: Int) in Profile(id: id) }
let asyncProfiles = AsyncProviderFamily { (_, id: Int) in Profile(id: id) }

// expected-error: a ProviderFamily needs an argument: resolve one member, as in pod.resolve(family(id))
let inBuilder = Provider { pod in pod.resolve(profiles).id }
// expected-error: an AsyncProviderFamily needs an argument: resolve one member, as in try await pod.resolve(family(id))
let inAsyncBuilder = AsyncProvider { pod in try await pod.resolve(asyncProfiles).id }
func outside(_ pod: Pod) -> Profile { pod.resolve(profiles) }
