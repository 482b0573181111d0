// swift-tools-version: 6.2
import PackageDescription

// Measures ProviderPod against Swinject, swift-dependencies and hand-written baselines.
// Run from the repository root:
//   swift run -c release --package-path Benchmarks ProviderPodBenchmarks
let package = Package(
  name: "ProviderPodBenchmarks",
  platforms: [.macOS(.v15)],  // Synchronization.Mutex, for the baseline container
  dependencies: [
    .package(name: "ProviderPod", path: ".."),
    .package(url: "https://github.com/Swinject/Swinject", exact: "2.10.0"),
    .package(url: "https://github.com/pointfreeco/swift-dependencies", exact: "1.17.1"),
  ],
  targets: [
    .executableTarget(
      name: "ProviderPodBenchmarks",
      dependencies: [
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "Swinject", package: "Swinject"),
        .product(name: "Dependencies", package: "swift-dependencies"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
