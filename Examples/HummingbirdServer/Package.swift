// swift-tools-version: 6.1
import PackageDescription

// A Hummingbird 2 server built on ProviderPod the way the docs recommend: the app's pod holds
// the singletons, a middleware gives each request a child pod that owns the request scope and
// is given the request's data, and handlers resolve through that pod only.
//   swift run --package-path Examples/HummingbirdServer
//   swift test --package-path Examples/HummingbirdServer
let package = Package(
  name: "HummingbirdServer",
  platforms: [.macOS(.v15)],  // Synchronization's Atomic, for the example's counters
  dependencies: [
    .package(name: "ProviderPod", path: "../.."),
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.8.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
  ],
  targets: [
    .target(
      name: "GreetingServer",
      dependencies: [
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]
    ),
    .executableTarget(
      name: "HummingbirdServer",
      dependencies: ["GreetingServer"]
    ),
    // What a pod per request costs, against the same server by hand; run it in release.
    .executableTarget(
      name: "RequestCost",
      dependencies: [
        "GreetingServer",
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .testTarget(
      name: "GreetingServerTests",
      dependencies: [
        "GreetingServer",
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "InMemoryLogging", package: "swift-log"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
