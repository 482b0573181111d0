/// Something that resolves providers: a ``Pod``, or the ``BuildContext`` a builder receives.
///
/// Write helpers against it when they should work both inside builders and outside:
///
/// ```swift
/// func makeAPI(_ resolver: some ProviderResolver) -> API {
///   API(client: resolver.resolve(httpClientProvider))
/// }
///
/// let apiProvider = Provider { pod in makeAPI(pod) }  // inside a builder
/// let api = makeAPI(pod)                             // outside
/// ```
public protocol ProviderResolver: Sendable {
  /// Returns the provider's instance: the cached one, or a new one from its builder.
  func resolve<Value>(_ provider: Provider<Value>) -> Value
}

extension Pod: ProviderResolver {}
