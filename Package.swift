// swift-tools-version: 6.2
import PackageDescription

let package = Package(
  name: "ProviderPod",
  products: [
    .library(name: "ProviderPod", targets: ["ProviderPod"])
  ],
  targets: [
    .target(name: "ProviderPod"),
    .executableTarget(
      name: "ExampleCLI",
      dependencies: ["ProviderPod"],
      path: "ExampleCLI"
    ),
    .testTarget(
      name: "ProviderPodTests",
      dependencies: ["ProviderPod"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
