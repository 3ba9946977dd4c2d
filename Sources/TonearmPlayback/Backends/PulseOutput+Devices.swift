import TonearmCore

extension PulseOutputBackend {
    /// The server's sinks, the default one marked, through libpulse's asynchronous API.
    /// '!dev' when the libraries are missing, no server answers (within `listingTimeout`
    /// seconds: this never hangs on a dead socket) or the server refuses the connection.
    public func devices() throws(AudioError) -> [AudioOutputDevice] {
        let lib = try PulseLibrary.load()
        let found = try PulseSinkQuery(lib: lib, timeout: listingTimeout).run()
        return found.sinks.map {
            AudioOutputDevice(name: $0.name, description: $0.description, isDefault: $0.name == found.defaultSink)
        }
    }
}

/// One connection to the server on a private main loop, driven on the calling thread until
/// the answers are in or the deadline passes.
private struct PulseSinkQuery {
    let lib: PulseLibrary
    let timeout: Double

    /// What the callbacks collect; they reach it through the userdata pointer.
    final class Answers {
        var defaultSink: String?
        var sinks: [(name: String, description: String)] = []
    }

    // The C structs' fields read here, laid out as the C compiler does: pointers at pointer
    // alignment, pa_sample_spec as 12 bytes at 4-byte alignment.
    // pa_sink_info { const char *name; uint32_t index; const char *description; ... }
    static let sinkNameOffset = 0
    static let sinkDescriptionOffset = align(MemoryLayout<UnsafeRawPointer>.size + 4)
    // pa_server_info { const char *user_name, *host_name, *server_version, *server_name;
    //                  pa_sample_spec sample_spec; const char *default_sink_name; ... }
    static let defaultSinkOffset = align(4 * MemoryLayout<UnsafeRawPointer>.size + 12)

    static func align(_ offset: Int) -> Int {
        let a = MemoryLayout<UnsafeRawPointer>.alignment
        return (offset + a - 1) / a * a
    }

    static func string(in info: UnsafeRawPointer, at offset: Int) -> String? {
        info.load(fromByteOffset: offset, as: UnsafePointer<CChar>?.self).map { String(cString: $0) }
    }

    func run() throws(AudioError) -> Answers {
        let deadline = Clock.nanoseconds + UInt64(max(0.05, min(timeout, 60)) * 1e9)
        guard let loop = lib.mainloopNew() else { throw AudioError(.badDevice, "PulseAudio: cannot make a main loop") }
        defer { lib.mainloopFree(loop) }
        guard let api = lib.mainloopGetAPI(loop), let context = lib.contextNew(api, "tonearm") else {
            throw AudioError(.badDevice, "PulseAudio: cannot make a context")
        }
        defer { lib.contextUnref(context) }
        if lib.contextConnect(context, nil, PulseConstant.contextNoAutospawn, nil) < 0 {
            throw connectionError(context)
        }
        defer { lib.contextDisconnect(context) }

        while true {
            let state = lib.contextGetState(context)
            if state == PulseConstant.contextReady { break }
            if state == PulseConstant.contextFailed || state == PulseConstant.contextTerminated {
                throw connectionError(context)
            }
            guard iterate(loop, until: deadline) else { throw timedOut() }
        }

        let answers = Answers()
        let userdata = Unmanaged.passUnretained(answers).toOpaque()
        try wait(for: lib.contextGetServerInfo(context, { _, info, userdata in
            guard let info, let userdata else { return }
            let answers = Unmanaged<Answers>.fromOpaque(userdata).takeUnretainedValue()
            answers.defaultSink = PulseSinkQuery.string(in: info, at: PulseSinkQuery.defaultSinkOffset)
        }, userdata), context: context, loop: loop, deadline: deadline)
        try wait(for: lib.contextGetSinkInfoList(context, { _, info, eol, userdata in
            guard eol == 0, let info, let userdata else { return }
            let answers = Unmanaged<Answers>.fromOpaque(userdata).takeUnretainedValue()
            guard let name = PulseSinkQuery.string(in: info, at: PulseSinkQuery.sinkNameOffset) else { return }
            let description = PulseSinkQuery.string(in: info, at: PulseSinkQuery.sinkDescriptionOffset) ?? ""
            answers.sinks.append((name, description))
        }, userdata), context: context, loop: loop, deadline: deadline)
        withExtendedLifetime(answers) {}
        return answers
    }

    /// Runs the loop until `operation` is done; its callbacks fill the answers meanwhile.
    private func wait(for operation: PulseLibrary.Object?, context: PulseLibrary.Object, loop: PulseLibrary.Object,
                      deadline: UInt64) throws(AudioError)
    {
        guard let operation else { throw connectionError(context) }
        defer { lib.operationUnref(operation) }
        while lib.operationGetState(operation) == PulseConstant.operationRunning {
            guard iterate(loop, until: deadline) else { throw timedOut() }
        }
        if lib.contextGetState(context) != PulseConstant.contextReady { throw connectionError(context) }
    }

    /// One pass of the loop, its poll bounded by the time left; false once the deadline passed
    /// or the loop failed.
    private func iterate(_ loop: PulseLibrary.Object, until deadline: UInt64) -> Bool {
        let now = Clock.nanoseconds
        guard now < deadline else { return false }
        let micros = Int32(min((deadline - now) / 1000, 100_000))
        guard lib.mainloopPrepare(loop, micros) >= 0, lib.mainloopPoll(loop) >= 0 else { return false }
        return lib.mainloopDispatch(loop) >= 0
    }

    private func connectionError(_ context: PulseLibrary.Object) -> AudioError {
        AudioError(.badDevice, "PulseAudio: cannot connect to the server: \(lib.message(lib.contextErrno(context)))")
    }

    private func timedOut() -> AudioError {
        AudioError(.badDevice, "PulseAudio: the server did not answer within \(timeout) s")
    }
}
