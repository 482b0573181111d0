// swift-tools-version: 6.1
import PackageDescription

// Measures ProviderPod against Swinject, swift-dependencies and hand-written baselines.
// Two executables (see README.md), and a probe for `Benchmarks/shared-writes`:
// - `ProviderPodMetrics` (package-benchmark): ProviderPod's own workloads, wall time with
//   percentiles and malloc counts; CI checks its malloc counts against committed thresholds.
//     swift package --package-path Benchmarks benchmark
// - `ProviderPodBenchmarks`: the side-by-side table of every library, ratios from one run.
//     swift run -c release --package-path Benchmarks ProviderPodBenchmarks
let package = Package(
  name: "ProviderPodBenchmarks",
  platforms: [.macOS(.v15)],  // Synchronization.Mutex, for the baseline container
  // swift-dependencies brings FoundationNetworking, which a static build cannot link without
  // libcurl: `Benchmarks/scaling` builds without it (--disable-default-traits), its column empty.
  traits: [
    .trait(name: "SwiftDependencies", description: "The swift-dependencies column of the table."),
    .default(enabledTraits: ["SwiftDependencies"]),
  ],
  dependencies: [
    .package(name: "ProviderPod", path: ".."),
    .package(url: "https://github.com/Swinject/Swinject", exact: "2.10.0"),
    .package(url: "https://github.com/pointfreeco/swift-dependencies", exact: "1.17.1"),
    // Only the malloc interposer: its default runtime interposer (ARC counts) is not needed.
    .package(
      url: "https://github.com/ordo-one/benchmark", exact: "1.38.1",
      traits: ["MallocInterposer"]),
  ],
  targets: [
    .target(name: "CallgrindToggles"),
    .executableTarget(
      name: "ProviderPodBenchmarks",
      dependencies: [
        "CallgrindToggles",
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "Swinject", package: "Swinject"),
        .product(
          name: "Dependencies", package: "swift-dependencies",
          condition: .when(traits: ["SwiftDependencies"])),
      ]
    ),
    // `Benchmarks/shared-writes`: the reference-count writes one operation makes on objects
    // that outlive it, counted under gdb.
    .executableTarget(
      name: "SharedWrites",
      dependencies: [.product(name: "ProviderPod", package: "ProviderPod")]
    ),
    .executableTarget(
      name: "ProviderPodMetrics",
      dependencies: [
        .product(name: "ProviderPod", package: "ProviderPod"),
        .product(name: "Benchmark", package: "benchmark"),
      ],
      path: "Benchmarks/ProviderPodMetrics",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
  ],
  swiftLanguageModes: [.v6]
)
