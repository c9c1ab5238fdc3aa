// sheet-fuzz: one libFuzzer entry over the three places untrusted bytes reach sheetd: the request
// screen, router and body decoders (through SheetResponder, as libmicrohttpd's threads call it),
// the JSON reader, and the engine step. The first byte of an input picks the mode:
//
//   "J" + bytes    the JSON reader on raw bytes (JSONTarget)
//   "E" + bytes    an engine session driven by binary-encoded events (EngineTarget)
//   anything else  a script of HTTP requests (HTTPTarget; the whole input is the script)
//
// Built with -sanitize=fuzzer,address (scripts/fuzz) this file is all libFuzzer needs; in a normal
// build Replay.swift adds a `main` that runs files through the same entry.

/// libFuzzer's entry: runs one input. Returns 0 always; a violated invariant traps instead
/// (`check`), which libFuzzer reports as a crash and saves as an artifact.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    switch input[0] {
    case UInt8(ascii: "J"): JSONTarget.run(UnsafeBufferPointer(rebasing: input[1...]))
    case UInt8(ascii: "E"): EngineTarget.run(UnsafeBufferPointer(rebasing: input[1...]))
    default: HTTPTarget.run(input)
    }
    return 0
}

#if SHEET_FUZZ
    // SwiftPM links every executable with `--defsym main=sheet_fuzz_main` (so that test targets can
    // link an executable's module), so a target without a `main` of its own fails to link: the
    // alias needs a definition. This one hands control to libFuzzer's driver, exactly what
    // libFuzzer's own `main` does.

    @_extern(c, "LLVMFuzzerRunDriver")
    private func llvmFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// The process entry of the fuzzing build (see above): libFuzzer parses the arguments and runs.
    @_cdecl("sheet_fuzz_main")
    func fuzzingMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
        var argc = argc
        var argv = argv
        return llvmFuzzerRunDriver(&argc, &argv, fuzzOneInput)
    }
#endif
