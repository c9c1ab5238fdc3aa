import Foundation

// sheet-bench: release-build micro-benchmarks (`swift run -c release sheet-bench [iterations]`).
// Figures go into docs/PERFORMANCE.md; nothing here is a test.

let rounds = 7
let iterations = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1_000_000 : 1_000_000

// `sheet-bench N service` runs only the service figures (for profiling).
let only = CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : nil

print("| operation | ns/op (median of \(rounds) rounds) |")
print("| --- | ---: |")
if only == "service" {
    for f in try runServiceBench(rounds: rounds, iterations: iterations) {
        print("| \(f.name) | \(String(format: "%.0f", f.nanosecondsPerOp)) |")
    }
    exit(0)
}
for f in try runPhysicsBench(rounds: rounds, iterations: iterations) {
    print("| engine: \(f.name) | \(String(format: "%.1f", f.nanosecondsPerOp)) |")
}
for f in try runServiceBench(rounds: rounds, iterations: max(iterations / 10, 1000)) {
    print("| \(f.name) | \(String(format: "%.0f", f.nanosecondsPerOp)) |")
}
for (name, ns) in runJSONBench(iterations: max(iterations / 10, 1000), rounds: rounds) {
    print("| json: \(name) | \(String(format: "%.0f", ns)) |")
}
