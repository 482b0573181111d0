// swift-tools-version: 6.1
import PackageDescription

// A Vapor 4 server built on ProviderPod the way the docs recommend, the same shape as
// Examples/HummingbirdServer: the app's pod holds the singletons, a middleware gives each
// request a child pod that owns the request scope and is given the request's data, and route
// handlers resolve through `request.pod` only.
//   swift run --package-path Examples/VaporServer
//   swift test --package-path Examples/VaporServer
let package = Package(
  name: "VaporServer",
  platforms: [.macOS(.v15)],  // Synchronization's Atomic, for the example's counters
  dependencies: [
    .package(name: "ProviderPod", path: "../.."),
    .package(url: "https://github.com/vapor/vapor", from: "4.0.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.8.0"),
  ],
  targets: [
    .target(
      name: "VaporGreetingServer",
      dependencies: [
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "Vapor", package: "vapor"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .executableTarget(
      name: "VaporServer",
      dependencies: ["VaporGreetingServer"]
    ),
    .testTarget(
      name: "VaporGreetingServerTests",
      dependencies: [
        "VaporGreetingServer",
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "VaporTesting", package: "vapor"),
        .product(name: "InMemoryLogging", package: "swift-log"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
