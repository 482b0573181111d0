// swift-tools-version: 6.2
import PackageDescription

let package = Package(
  name: "ProviderPod",
  // Retry back-off delays are `Duration`s, which these systems introduced.
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
  products: [
    .library(name: "ProviderPod", targets: ["ProviderPod"]),
    // For test targets only: the Swift Testing trait that isolates a global pod per test, and
    // a clock for retries that does not wait. Apart, so that the library never imports
    // Testing.
    .library(name: "ProviderPodTesting", targets: ["ProviderPodTesting"]),
  ],
  targets: [
    .target(
      name: "ProviderPod",
      dependencies: ["CProviderPod"],
      // The contributors' note on the engine, beside the code it describes.
      exclude: ["Engine/README.md"]
    ),
    .target(name: "ProviderPodTesting", dependencies: ["ProviderPod"]),
    // A thread-local variable and an atomic counter, which Swift offers portably only from
    // macOS 15: they take the locks off the always-new build. Internal to the library.
    .target(name: "CProviderPod"),
    // The demo: its app model and command handling in a library the tests can reach,
    // and a thin executable.
    .target(
      name: "SignUpDemo",
      dependencies: ["ProviderPod"],
      path: "ExampleCLI/SignUpDemo"
    ),
    .executableTarget(
      name: "ExampleCLI",
      dependencies: ["SignUpDemo"],
      path: "ExampleCLI/Main"
    ),
    // The hostile check: a client module that imports ProviderPod as an app does (no
    // `@testable`), so a release build inlines the library's generic resolve into it, and
    // races it on several threads. Built and run by `.ci/run`; not a product.
    .executableTarget(
      name: "PodStress",
      dependencies: ["ProviderPod", "PodStressHeap"],
      path: "Stress",
      exclude: ["Heap"]
    ),
    // What the stress client's leak scenarios measure: the bytes the allocator has handed out
    // and not had back. In C, since Swift's Glibc module leaves `mallinfo2` out.
    .target(name: "PodStressHeap", path: "Stress/Heap"),
    .testTarget(
      name: "ProviderPodTests",
      dependencies: ["ProviderPod"]
    ),
    // Compiled the way Xcode 26 compiles apps: default MainActor isolation.
    .testTarget(
      name: "MainActorDefaultTests",
      dependencies: ["ProviderPod"],
      swiftSettings: [.defaultIsolation(MainActor.self)]
    ),
    .testTarget(
      name: "ProviderPodTestingTests",
      dependencies: ["ProviderPodTesting", "ProviderPod"]
    ),
    .testTarget(
      name: "SignUpDemoTests",
      dependencies: ["SignUpDemo", "ProviderPod"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
