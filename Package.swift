// swift-tools-version:6.1
import PackageDescription

/// sheetd: bottom-sheet physics served over HTTP.
/// Graph: sheetd → SheetService → {MicroHTTP → CMicroHTTPD, SheetPhysics, RedisClient → CHiredis, CZlib}.
/// No back edges.
let package = Package(
    name: "sheetd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "sheetd", targets: ["sheetd"]),
        .library(name: "SheetPhysics", targets: ["SheetPhysics"]),
        .library(name: "MicroHTTP", targets: ["MicroHTTP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-numerics", from: "1.1.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // libmicrohttpd through pkg-config; only MicroHTTP imports it.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .target(name: "MicroHTTP", dependencies: ["CMicroHTTPD"]),
        // hiredis for the optional Redis session store; only RedisClient imports it.
        // No pkgConfig: hiredis.pc's -D_FILE_OFFSET_BITS=64 is a flag SwiftPM prohibits (a warning
        // on every build); shim.h includes <hiredis/hiredis.h> from the default include path.
        .systemLibrary(
            name: "CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        .target(name: "RedisClient", dependencies: ["CHiredis"]),
        // zlib, to gzip the served files once at start-up; only SheetService imports it.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Pure physics: no Foundation, no clock, no I/O. RealModule gives exp/sin/cos without libc.
        .target(
            name: "SheetPhysics",
            dependencies: [.product(name: "RealModule", package: "swift-numerics")]
        ),
        .target(
            name: "SheetService",
            dependencies: [
                "MicroHTTP",
                "SheetPhysics",
                "RedisClient",
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            resources: [.copy("Resources")]
        ),
        .executableTarget(
            name: "sheetd",
            dependencies: [
                "SheetService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Release-build micro-benchmarks of the engine (not a test: figures go to docs/PERFORMANCE.md).
        .executableTarget(
            name: "sheet-bench",
            dependencies: [
                "SheetPhysics", "SheetService", "MicroHTTP", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libFuzzer target over the request screen, the JSON decoders and the engine step
        // (scripts/fuzz builds it with -sanitize=fuzzer,address).
        .executableTarget(
            name: "sheet-fuzz",
            dependencies: [
                "SheetPhysics", "SheetService", "MicroHTTP", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The tools every test suite shares (HTTP/SSE client, redis-server, waiting, ports,
        // threads), as HummingbirdTesting is for Hummingbird. It depends on no module of sheetd, so
        // each suite links only what it tests; starting a server stays with the suite that tests it.
        .target(name: "SheetdTesting", path: "Tests/SheetdTesting"),
        // The physics check values, once: the engine's tests and the HTTP tests replay the same rows.
        .target(name: "PhysicsCheckValues", path: "Tests/PhysicsCheckValues"),
        .testTarget(name: "SheetPhysicsTests", dependencies: ["SheetPhysics", "SheetdTesting", "PhysicsCheckValues"]),
        .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "SheetdTesting"]),
        .testTarget(name: "MicroHTTPTests", dependencies: ["MicroHTTP", "SheetdTesting"]),
        .testTarget(
            name: "SheetServiceTests",
            dependencies: [
                "SheetService",
                "SheetPhysics",
                "RedisClient",
                "SheetdTesting",
                "PhysicsCheckValues",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
