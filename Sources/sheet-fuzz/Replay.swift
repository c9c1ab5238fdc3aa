#if !SHEET_FUZZ
    import Foundation

    /// The normal build's `main`: replays files through the fuzz entry, so the seed corpus (and any
    /// crash reproducer) runs in the test suite without libFuzzer or sanitizers.
    ///
    ///     sheet-fuzz FILE_OR_DIR...
    ///
    /// Directories are walked recursively, files run in sorted order; a violated invariant traps
    /// with the file's name.
    @main
    enum Replay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard !arguments.isEmpty, !arguments.contains(where: { $0 == "-h" || $0 == "--help" }) else {
                print("usage: sheet-fuzz FILE_OR_DIR...  (replays inputs through the fuzz target; see scripts/fuzz)")
                exit(arguments.isEmpty ? 2 : 0)
            }
            var files: [String] = []
            for argument in arguments {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                    FileHandle.standardError.write(Data("sheet-fuzz: no such file or directory: \(argument)\n".utf8))
                    exit(2)
                }
                if isDirectory.boolValue {
                    let walker = FileManager.default.enumerator(atPath: argument)
                    var found: [String] = []
                    while let path = walker?.nextObject() as? String {
                        let full = (argument as NSString).appendingPathComponent(path)
                        var dir: ObjCBool = false
                        if FileManager.default.fileExists(atPath: full, isDirectory: &dir), !dir.boolValue {
                            found.append(full)
                        }
                    }
                    files += found.sorted()
                } else {
                    files.append(argument)
                }
            }
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("sheet-fuzz: cannot read \(file)\n".utf8))
                    exit(2)
                }
                replayingFile = file
                _ = [UInt8](data).withUnsafeBufferPointer { fuzzOneInput($0.baseAddress, $0.count) }
            }
            replayingFile = nil
            print("sheet-fuzz: \(files.count) inputs replayed")
        }
    }
#endif
