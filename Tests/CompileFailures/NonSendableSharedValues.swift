// Must NOT compile: .ci/check-compile-failures typechecks this file against the library and
// expects each `// expected-error:` text below among the compiler's errors.
//
// A provider in a scope that caches hands one instance to every caller, on any thread, so its
// value must be Sendable. Each case has a class of its own, so that each error names its case.
import ProviderPod

struct SessionScope: ProviderScope {}

final class SingletonCounter { var count = 0 }
final class ScopedCounter { var count = 0 }
final class WeakCounter { var count = 0 }
final class ExistentialScopeCounter { var count = 0 }
final class FamilyCounter { var count = 0 }
final class ScopedFamilyCounter { var count = 0 }
final class ThrowingCounter { var count = 0 }
final class ScopedThrowingCounter { var count = 0 }
final class UnimplementedCounter { var count = 0 }

// expected-error: type 'SingletonCounter' does not conform to the 'Sendable' protocol
let singleton = Provider { _ in SingletonCounter() }
// expected-error: type 'ScopedCounter' does not conform to the 'Sendable' protocol
let scoped = Provider(scope: SessionScope(), name: "scoped") { _ in ScopedCounter() }
// expected-error: type 'WeakCounter' does not conform to the 'Sendable' protocol
let weak = Provider(scope: WeakScope()) { _ in WeakCounter() }
// Always-new, but the compiler cannot see it through an existential: only the concrete
// `AlwaysCreateNewScope` type lets a value that is not Sendable through.
let anyScope: any ProviderScope = AlwaysCreateNewScope()
// expected-error: type 'ExistentialScopeCounter' does not conform to the 'Sendable' protocol
let throughExistential = Provider(scope: anyScope) { _ in ExistentialScopeCounter() }
// expected-error: type 'FamilyCounter' does not conform to the 'Sendable' protocol
let family = ProviderFamily { (_, id: Int) in FamilyCounter() }
// expected-error: type 'ScopedFamilyCounter' does not conform to the 'Sendable' protocol
let scopedFamily = ProviderFamily(scope: SessionScope()) { (_, id: Int) in ScopedFamilyCounter() }
// expected-error: type 'ThrowingCounter' does not conform to the 'Sendable' protocol
let throwing = ThrowingProvider { _ in ThrowingCounter() }
// expected-error: type 'ScopedThrowingCounter' does not conform to the 'Sendable' protocol
let scopedThrowing = ThrowingProvider(scope: WeakScope()) { _ in ScopedThrowingCounter() }
// expected-error: type 'UnimplementedCounter' does not conform to the 'Sendable' protocol
let unimplemented = Provider<UnimplementedCounter>.unimplemented(scope: SessionScope())
