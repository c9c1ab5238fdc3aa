import Foundation

// sheet-bench: release-build micro-benchmarks (`swift run -c release sheet-bench`).
// Figures go into docs/PERFORMANCE.md; nothing here is a test.

let rounds = 7
let iterations = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1_000_000 : 1_000_000

print("| operation | ns/op (median of \(rounds)) |")
print("| --- | ---: |")
for f in try runPhysicsBench(rounds: rounds, iterations: iterations) {
    print("| \(f.name) | \(String(format: "%.1f", f.nanosecondsPerOp)) |")
}
