// swift-tools-version: 6.2
import PackageDescription

// A command-line tool on ArgumentParser whose commands reach the app's pod through a global,
// and its tests, which give each test a pod of its own with the `.isolated` trait.
//   swift run --package-path Examples/CommandLineTool greet Ada
//   swift test --package-path Examples/CommandLineTool
let package = Package(
  name: "CommandLineTool",
  platforms: [.macOS(.v13)],
  dependencies: [
    .package(name: "ProviderPod", path: "../.."),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
  ],
  targets: [
    // The commands, in a library the tests can reach, and a thin executable.
    .target(
      name: "Greeting",
      dependencies: [
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    .executableTarget(name: "greet", dependencies: ["Greeting"]),
    .testTarget(
      name: "GreetingTests",
      dependencies: [
        "Greeting",
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "ProviderPodTesting", package: "ProviderPod"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
