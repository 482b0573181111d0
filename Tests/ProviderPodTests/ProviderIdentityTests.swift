import ProviderPod
import Testing

/// This file's name, as default provider names and cycle reports give it.
private let thisFileName = fileName()

@Suite("Provider identity")
struct ProviderIdentityTests {
  @Test("two providers with the same type and builder are separate dependencies")
  func separateProvidersSeparateCaches() {
    let counter = Counter()
    let first = Provider { _ in Instance("same", serial: counter.next()) }
    let second = Provider { _ in Instance("same", serial: counter.next()) }
    let pod = Pod()
    let a = pod.resolve(first)
    let b = pod.resolve(second)
    #expect(a !== b)
    #expect(pod.resolve(first) === a)
    #expect(pod.resolve(second) === b)
    #expect(counter.value == 2)
  }

  @Test("scopes are identified by their type, not their value")
  func scopeIdentityIsItsType() {
    let provider = instanceProvider("scoped", scope: StepScope())
    let pod = Pod()
    let before = pod.resolve(provider)
    pod.clearCachedInstances(forScope: StepScope())  // another value of the same type
    #expect(pod.resolve(provider) !== before)
  }

  @Test("the default name is the value type and where the provider was declared")
  func defaultName() {
    let provider = Provider { _ in 42 }
    let line = #line - 1
    #expect(provider.name == "Int (\(thisFileName):\(line))")
    #expect(provider.description == provider.name)
  }

  @Test("a given name is used as it is")
  func givenName() {
    let provider = Provider(name: "answerProvider") { _ in 42 }
    #expect(provider.name == "answerProvider")
  }

  @Test("the scope a provider was declared with is visible")
  func declaredScope() {
    let provider = Provider(scope: WeakScope()) { _ in Instance("x", serial: 0) }
    #expect(provider.scope is WeakScope)
    #expect(Provider { _ in 1 }.scope is SingletonScope)
  }
}
