import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why an Icecast test setup could not be made.
public enum IcecastTestServerError: Error, CustomStringConvertible {
    /// icecast2 or ffmpeg is not installed: tests skip unless `TONEARM_ICECAST_REQUIRED=1`.
    case notInstalled(String)
    /// The server did not start or did not accept connections within 10 s (with its log).
    case startFailed(String)
    /// ffmpeg, the source client, failed or its mount did not appear (with ffmpeg's output).
    case sourceFailed(String)
    /// An HTTP request to the server failed or was refused (with the server's answer).
    case requestFailed(String)

    public var description: String {
        switch self {
        case .notInstalled(let what): "\(what) is not installed (apt-get install icecast2 ffmpeg)"
        case .startFailed(let why): "icecast2 did not start: \(why)"
        case .sourceFailed(let why): "the source client failed: \(why)"
        case .requestFailed(let why): "request to icecast2 failed: \(why)"
        }
    }
}

/// A private Icecast2 server for the internet-radio tests (issue 7), started from Debian's
/// `icecast2` on 127.0.0.1 at a free port with a generated configuration in a temporary
/// folder, and ffmpeg as its source client.
///
/// - MP3 mounts: ffmpeg streams a file (`-re`, stream copy) and its tee muxer writes the same
///   muxed bytes to `sentCopy`; titles change through Icecast's admin API (`setTitle`), and
///   Icecast interleaves them as ICY metadata every `metaInterval` bytes for listeners that
///   send `Icy-MetaData: 1`.
/// - Ogg mounts: titles travel in the stream itself, as the comment headers of the links of
///   a chained Ogg file. ffmpeg 5.1's Ogg muxer cannot pass a chain on (with `-c copy` it
///   flattens the links into one logical stream with the first link's tags, and for Vorbis
///   writes the later links' headers as audio packets), so for Ogg ffmpeg is only the
///   connection: it relays the file's bytes unchanged (`-f data` in and out) while the
///   harness feeds them at the pace of the pages' granule positions. Icecast 2.4 inserts no
///   ICY metadata for Ogg listeners (no `icy-metaint`, even when asked; its `icy-metadata: 1`
///   header comes on every mount, asked or not, and means nothing) and passes Opus pages
///   through unchanged; Vorbis it re-pages (new serial numbers, pages of about 0.5 s), so a
///   Vorbis listener gets the sent packets and comment headers but not the sent bytes.
///
/// The burst (`burstSize`, default 1 MiB, with a 2 MiB queue) is larger than every fixture,
/// so a listener that connects while the source is live is sent the stream from its first
/// byte: the audio it receives is the source's bytes from offset 0, not a run to be searched
/// for. With `burstSize: 0` a listener joins at the start of the newest block Icecast holds.
/// Icecast reads an MP3 source in blocks of `mp3BlockSize` (1400) bytes and queues only whole
/// blocks, so a source's last `count % 1400` bytes never reach a listener; Ogg is queued by
/// whole pages, so an Ogg listener gets everything.
///
/// Running as root (CI), the server drops to the Debian package's `icecast2` user through
/// `<changeowner>` (it refuses to run as root otherwise); the temporary folder is readable
/// and its log folder writable by that user.
public final class IcecastTestServer: @unchecked Sendable {
    /// What a source streams.
    public enum SourceFormat: Sendable {
        /// MPEG audio (`audio/mpeg`), muxed by ffmpeg's mp3 muxer.
        case mp3
        /// AAC in ADTS (`audio/aacp`, as AAC+ stations send HE-AAC), muxed by ffmpeg's adts
        /// muxer; Icecast queues it in blocks as it does MP3.
        case adts
        /// An Ogg file, chained or not (`audio/ogg`), relayed byte for byte.
        case ogg
    }

    /// How `setTitle` hands a title to Icecast, and so which bytes the ICY block carries.
    public enum TitleEncoding: Sendable {
        /// The title's UTF-8 bytes with no `charset`: Icecast passes them on unchanged.
        case utf8
        /// The title with `charset=UTF-8`: Icecast converts it to the mount's character
        /// set, ISO 8859-1 by default, so the ICY block carries Latin-1 bytes (what many
        /// real stations send). The title must be representable in Latin-1.
        case latin1
    }

    /// True where the environment promises icecast2 (CI, or any run where
    /// `requirementsAreMandatory`): tests fail rather than skip without it.
    public static var isRequired: Bool {
        ProcessInfo.processInfo.environment["TONEARM_ICECAST_REQUIRED"] == "1" || requirementsAreMandatory
    }

    /// Icecast 2.4 reads MPEG sources in blocks of this many bytes and queues only whole blocks.
    public static let mp3BlockSize = 1400

    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The port of the TLS listen socket, when the server was started with a certificate.
    public let tlsPort: Int?
    /// The temporary folder holding the configuration, logs and the sources' output.
    public let directory: String
    /// Bytes of past stream a new listener is sent at once.
    public let burstSize: Int
    /// Audio bytes between two ICY metadata blocks on MP3 mounts (`icy-metaint`).
    public let metaInterval: Int
    public let sourcePassword = "tonearm-source"
    public let adminUser = "admin"
    public let adminPassword = "tonearm-admin"

    private let server: Process
    private let ffmpeg: String
    private let lock = NSLock()
    private var sources: [IcecastSource] = []
    private var stopped = false

    /// Starts a server and waits (at most 10 s) until it accepts connections. With `tls` (a
    /// certificate and its key, as `HTTPTestServer.tlsFiles` gives them) it also listens with
    /// TLS on ``tlsPort``; sources and the admin API stay on ``port``.
    ///
    /// Throws `.notInstalled` when icecast2 or ffmpeg is missing, so tests can skip
    /// (unless `isRequired`).
    public init(burstSize: Int = 1 << 20, metaInterval: Int = 1000, tls: (cert: String, key: String)? = nil) throws {
        guard let icecast = which("icecast2") else { throw IcecastTestServerError.notInstalled("icecast2") }
        guard let ffmpeg = which("ffmpeg") else { throw IcecastTestServerError.notInstalled("ffmpeg") }
        self.ffmpeg = ffmpeg
        self.burstSize = burstSize
        self.metaInterval = metaInterval
        directory = makeTemporaryDirectory()
        chmod(directory, 0o755)

        // As root: the user Debian's package made (else nobody), owning the log folder.
        var owner: (user: String, group: String, uid: uid_t, gid: gid_t)?
        if geteuid() == 0 {
            for name in ["icecast2", "nobody"] {
                if let pw = getpwnam(name) {
                    let gid = pw.pointee.pw_gid
                    let group = getgrgid(gid).map { String(cString: $0.pointee.gr_name) } ?? "nogroup"
                    owner = (name, group, pw.pointee.pw_uid, gid)
                    break
                }
            }
            if owner == nil {
                try? FileManager.default.removeItem(atPath: directory)
                throw IcecastTestServerError.startFailed("running as root and there is no icecast2 or nobody user to run as")
            }
        }
        let logs = directory + "/log"
        mkdir(logs, 0o755)
        if let owner { chown(logs, owner.uid, owner.gid) }
        // Icecast 2.4 takes the certificate and its key in one file.
        var certificate: String?
        if let tls {
            let path = directory + "/tls.pem"
            let pem = try [tls.cert, tls.key].map { try String(contentsOfFile: $0, encoding: .utf8) }.joined(separator: "\n")
            try Data(pem.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o644)
            certificate = path
        }

        var lastError = ""
        var started: (Process, Int, Int?)?
        // A free port can be taken between asking for it and Icecast binding it: try again.
        for _ in 0..<3 {
            let port = try Self.freePort()
            let tlsPort = try certificate.map { _ in try Self.freePort() }
            let config = directory + "/icecast.xml"
            let xml = Self.configuration(port: port, tlsPort: tlsPort, certificate: certificate,
                                         directory: directory, burstSize: burstSize, metaInterval: metaInterval,
                                         sourcePassword: sourcePassword, adminUser: adminUser, adminPassword: adminPassword,
                                         owner: owner.map { ($0.user, $0.group) })
            try Data(xml.utf8).write(to: URL(fileURLWithPath: config))
            chmod(config, 0o644)
            let out = directory + "/icecast2.out"
            _ = FileManager.default.createFile(atPath: out, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: icecast)
            process.arguments = ["-c", config]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle(forWritingAtPath: out)
            process.standardError = FileHandle(forWritingAtPath: out)
            try process.run()
            let deadline = Date().addingTimeInterval(10)
            var ready = false
            while process.isRunning && Date() < deadline {
                ready = [port, tlsPort].compactMap { $0 }.allSatisfy { p in
                    guard let fd = try? tcpConnect(port: p, timeout: 1) else { return false }
                    close(fd)
                    return true
                }
                // Icecast accepts connections a moment before it answers them (a status
                // request then got no response on a loaded machine): started means answering.
                if ready {
                    let status = try? Listener(port: port, path: "/status-json.xsl", headers: [], timeout: 2)
                    ready = status?.status == 200
                    status?.close()
                }
                if ready { break }
                Thread.sleep(forTimeInterval: 0.02)
            }
            if ready { started = (process, port, tlsPort); break }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            lastError = "port \(port): " + Self.tail(of: out) + Self.tail(of: logs + "/error.log")
        }
        guard let (process, port, tlsPort) = started else {
            try? FileManager.default.removeItem(atPath: directory)
            throw IcecastTestServerError.startFailed(lastError)
        }
        server = process
        self.port = port
        self.tlsPort = tlsPort
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT/mount`, or with `tls` `https://127.0.0.1:TLSPORT/mount`.
    public func url(mount: String, tls: Bool = false) -> String {
        if tls, let tlsPort { return "https://127.0.0.1:\(tlsPort)\(Self.path(mount))" }
        return "http://127.0.0.1:\(port)\(Self.path(mount))"
    }

    /// What the server has logged so far (error.log), for failure messages.
    public var errorLog: String {
        (try? String(contentsOfFile: directory + "/log/error.log", encoding: .utf8)) ?? ""
    }

    /// Starts ffmpeg as the source client of `mount`, streaming `file` (in real time unless
    /// `realtime` is false), and returns once the mount is live (at most 10 s).
    ///
    /// `sentCopy` receives exactly the bytes sent to Icecast: for MP3, ffmpeg's tee muxer
    /// writes them there from the same packets and muxer settings (no ID3v2 tag, no Xing
    /// frame, so a LAME file without a tag comes out unchanged); for Ogg, the harness
    /// appends each piece it hands ffmpeg to relay. Without `realtime` the whole file goes
    /// out at once and the source leaves: a listener may not find the mount any more.
    @discardableResult
    public func startSource(mount: String, file: String, format: SourceFormat, realtime: Bool = true,
                            sentCopy: String, name: String = "Tonearm test radio") throws -> IcecastSource
    {
        let mount = Self.path(mount)
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw IcecastTestServerError.sourceFailed("cannot read \(file)")
        }
        // Icecast would refuse a second source, and the first one's mount would look live.
        guard try !mountIsLive(mount) else { throw IcecastTestServerError.sourceFailed("\(mount) already has a source") }
        let target = "icecast://source:\(sourcePassword)@127.0.0.1:\(port)\(mount)"
        let log = directory + "/ffmpeg" + mount.replacingOccurrences(of: "/", with: "_") + ".log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: log)
        var feeder: OggFeeder?
        switch format {
        case .mp3, .adts:
            // The tee muxer's syntax gives these characters meanings (and unescapes twice).
            guard !sentCopy.contains(where: { "|[]\\'\"".contains($0) }),
                  name.allSatisfy({ $0.isLetter || $0.isNumber || " -_.,".contains($0) }) else {
                throw IcecastTestServerError.sourceFailed("sentCopy '\(sentCopy)' or name '\(name)' has a character the tee muxer would read")
            }
            let (mux, type) = format == .mp3 ? ("f=mp3:id3v2_version=0:write_xing=0", "audio/mpeg") : ("f=adts", "audio/aacp")
            process.standardInput = FileHandle.nullDevice
            process.arguments = ["-hide_banner", "-nostdin", "-loglevel", "error"] + (realtime ? ["-re"] : [])
                + ["-i", file, "-map", "0:a:0", "-c", "copy", "-f", "tee",
                   "[\(mux):content_type=\(type):ice_name=\(name)]\(target)|[\(mux)]\(sentCopy)"]
        case .ogg:
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            _ = FileManager.default.createFile(atPath: sentCopy, contents: nil)
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
                throw IcecastTestServerError.sourceFailed("socketpair: errno \(errno)")
            }
            // A socket rather than a pipe: the feeder writes with MSG_NOSIGNAL, so an ffmpeg
            // that dies does not take the test process down with SIGPIPE.
            process.standardInput = FileHandle(fileDescriptor: fds[1], closeOnDealloc: true)
            process.arguments = ["-hide_banner", "-nostdin", "-loglevel", "error",
                                 "-probesize", "32", "-analyzeduration", "0", "-f", "data", "-i", "pipe:0",
                                 "-map", "0", "-c", "copy", "-flush_packets", "1", "-f", "data",
                                 "-content_type", "audio/ogg", "-ice_name", name, target]
            feeder = OggFeeder(socket: fds[0], bytes: [UInt8](bytes), realtime: realtime, copy: sentCopy)
        }
        do {
            try process.run()
        } catch {
            feeder?.abandon()
            throw IcecastTestServerError.sourceFailed("ffmpeg did not run: \(error)")
        }
        if let input = process.standardInput as? FileHandle, format == .ogg { try? input.close() }
        let source = IcecastSource(mount: mount, sentCopy: sentCopy, process: process, log: log, feeder: feeder)
        lock.withLock { sources.append(source) }
        feeder?.start()

        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            // A status request that Icecast drops while the source connects (seen on a
            // loaded machine) is asked again, as a listener polling it would.
            if (try? mountIsLive(mount)) == true { return source }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.03)
        }
        source.stop()
        throw IcecastTestServerError.sourceFailed("\(mount) did not go live: " + Self.tail(of: log) + Self.tail(of: directory + "/log/error.log"))
    }

    /// Sets the title Icecast sends on an MP3 mount (`/admin/metadata?mode=updinfo&song=…`,
    /// basic auth). It applies from the next block Icecast reads from the source, and reaches
    /// a listener at its next metadata interval. On a Vorbis mount Icecast starts a new link
    /// whose comment header holds the title; an Opus mount refuses (`.requestFailed`).
    public func setTitle(mount: String, _ title: String, encoding: TitleEncoding = .utf8) throws {
        var query = "mount=" + Self.percentEncoded(Array(Self.path(mount).utf8)) + "&mode=updinfo&song="
            + Self.percentEncoded(Array(title.utf8))
        if encoding == .latin1 {
            guard title.unicodeScalars.allSatisfy({ $0.value < 256 }) else {
                throw IcecastTestServerError.requestFailed("'\(title)' is not representable in Latin-1")
            }
            query += "&charset=UTF-8"
        }
        let (status, body) = try request("/admin/metadata?" + query, authorized: true)
        let text = String(decoding: body, as: UTF8.self)
        guard status == 200, text.contains("Metadata update successful") else {
            let message = text.range(of: "<message>").flatMap { start in
                text.range(of: "</message>").map { String(text[start.upperBound..<$0.lowerBound]) }
            } ?? text
            throw IcecastTestServerError.requestFailed("HTTP \(status) for \(Self.path(mount)): \(message)")
        }
    }

    /// A GET to the server: the status code and the body. `authorized` sends the admin's
    /// basic-auth credentials.
    public func request(_ pathAndQuery: String, authorized: Bool = false) throws -> (status: Int, body: [UInt8]) {
        var headers: [(String, String)] = []
        if authorized {
            headers.append(("Authorization", "Basic " + Data("\(adminUser):\(adminPassword)".utf8).base64EncodedString()))
        }
        let connection = try Listener(port: port, path: pathAndQuery, headers: headers, timeout: 10)
        defer { connection.close() }
        return (connection.status, try connection.readToEnd())
    }

    /// Opens a listener connection to `mount` (with `Icy-MetaData: 1` when `icyMetadata`)
    /// and reads the response head.
    public func listen(mount: String, icyMetadata: Bool = true) throws -> Listener {
        try Listener(port: port, path: Self.path(mount), headers: icyMetadata ? [("Icy-MetaData", "1")] : [])
    }

    /// Stops every source and the server, and removes the temporary folder. Safe to call twice.
    public func stop() {
        let (toStop, first) = lock.withLock { () -> ([IcecastSource], Bool) in
            defer { sources = []; stopped = true }
            return (sources, !stopped)
        }
        for source in toStop { source.stop() }
        guard first else { return }
        // SIGTERM makes Icecast 2.4 wait about 2.5 s for its threads; a test server keeps no
        // state worth a clean exit.
        if server.isRunning { kill(server.processIdentifier, SIGKILL) }
        server.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Internals

    private func mountIsLive(_ mount: String) throws -> Bool {
        let (status, body) = try request("/status-json.xsl")
        guard status == 200,
              let json = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let stats = json["icestats"] as? [String: Any] else { return false }
        // One source is an object, several an array.
        let list: [[String: Any]] = (stats["source"] as? [[String: Any]]) ?? ((stats["source"] as? [String: Any]).map { [$0] } ?? [])
        return list.contains { ($0["listenurl"] as? String) == url(mount: mount) }
    }

    static func path(_ mount: String) -> String { mount.hasPrefix("/") ? mount : "/" + mount }

    static func percentEncoded(_ bytes: [UInt8]) -> String {
        var s = ""
        for b in bytes {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                s.unicodeScalars.append(Unicode.Scalar(b))
            default:
                s += "%" + (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true)
            }
        }
        return s
    }

    static func tail(of path: String, lines: Int = 15) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty else { return "" }
        return "\n[" + (path as NSString).lastPathComponent + "]\n" + text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    static func freePort() throws -> Int { try freeLoopbackPort() }

    static func configuration(port: Int, tlsPort: Int? = nil, certificate: String? = nil, directory: String, burstSize: Int, metaInterval: Int, sourcePassword: String,
                              adminUser: String, adminPassword: String, owner: (user: String, group: String)?) -> String
    {
        // The queue must exceed the burst, or a listener's first burst overflows it.
        let queue = max(2 * burstSize, 1 << 19)
        let security = owner.map {
            "<changeowner><user>\($0.user)</user><group>\($0.group)</group></changeowner>"
        } ?? ""
        return """
        <icecast>
            <location>Tonearm tests</location>
            <admin>tonearm@localhost</admin>
            <hostname>127.0.0.1</hostname>
            <limits>
                <clients>32</clients>
                <sources>8</sources>
                <queue-size>\(queue)</queue-size>
                <burst-size>\(burstSize)</burst-size>
                <header-timeout>10</header-timeout>
                <source-timeout>10</source-timeout>
            </limits>
            <authentication>
                <source-password>\(sourcePassword)</source-password>
                <relay-password>\(sourcePassword)</relay-password>
                <admin-user>\(adminUser)</admin-user>
                <admin-password>\(adminPassword)</admin-password>
            </authentication>
            <listen-socket>
                <port>\(port)</port>
                <bind-address>127.0.0.1</bind-address>
            </listen-socket>
            \(tlsPort.map { "<listen-socket><port>\($0)</port><bind-address>127.0.0.1</bind-address><ssl>1</ssl></listen-socket>" } ?? "")
            <mount type="default">
                <mp3-metadata-interval>\(metaInterval)</mp3-metadata-interval>
                <burst-size>\(burstSize)</burst-size>
            </mount>
            <fileserve>1</fileserve>
            <paths>
                <basedir>\(directory)</basedir>
                <logdir>\(directory)/log</logdir>
                <pidfile>\(directory)/icecast.pid</pidfile>
                <webroot>/usr/share/icecast2/web</webroot>
                <adminroot>/usr/share/icecast2/admin</adminroot>
                \(certificate.map { "<ssl-certificate>\($0)</ssl-certificate>" } ?? "")
            </paths>
            <logging>
                <accesslog>access.log</accesslog>
                <errorlog>error.log</errorlog>
                <loglevel>3</loglevel>
            </logging>
            <security>
                <chroot>0</chroot>
                \(security)
            </security>
        </icecast>

        """
    }
}

/// One source client: ffmpeg streaming to a mount.
public final class IcecastSource: @unchecked Sendable {
    /// The mount, with its leading '/'.
    public let mount: String
    /// Where the bytes sent to Icecast are written.
    public let sentCopy: String
    /// ffmpeg.
    public let process: Process
    /// ffmpeg's output.
    public let log: String
    private let feeder: OggFeeder?

    init(mount: String, sentCopy: String, process: Process, log: String, feeder: OggFeeder?) {
        self.mount = mount
        self.sentCopy = sentCopy
        self.process = process
        self.log = log
        self.feeder = feeder
    }

    public var isRunning: Bool { process.isRunning }

    /// Waits until the whole file has been sent and ffmpeg has left; throws when ffmpeg
    /// failed or the harness could not feed it.
    public func waitUntilFinished() throws {
        process.waitUntilExit()
        feeder?.wait()
        if let failure = feeder?.failure {
            throw IcecastTestServerError.sourceFailed("feeding ffmpeg: \(failure)")
        }
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw IcecastTestServerError.sourceFailed("ffmpeg exited with \(process.terminationStatus)" + IcecastTestServer.tail(of: log))
        }
    }

    /// Ends the source at once (the mount goes away and its listeners are disconnected).
    public func stop() {
        feeder?.cancel()
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        feeder?.wait()
    }
}

/// Hands an Ogg file's pages to ffmpeg's standard input (a socket), each when the audio
/// before it would have played: the time is the previous page's granule position over the
/// link's rate (48000 for Opus, less its pre-skip; the identification header's for Vorbis),
/// counted on from the end of the previous link.
final class OggFeeder: @unchecked Sendable {
    private let socket: Int32
    private let bytes: [UInt8]
    private let realtime: Bool
    private let copy: String
    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)
    private var cancelled = false
    private var started = false
    private var finished = false
    private(set) var failure: String?

    init(socket: Int32, bytes: [UInt8], realtime: Bool, copy: String) {
        self.socket = socket
        self.bytes = bytes
        self.realtime = realtime
        self.copy = copy
    }

    func start() {
        lock.withLock { started = true }
        Thread { [self] in
            self.run()
            self.lock.withLock { self.finished = true }
            self.done.signal()
        }.start()
    }

    func cancel() {
        lock.withLock { cancelled = true }
        shutdown(socket, Int32(SHUT_RDWR))
    }

    /// Closes the socket of a feeder that will never start.
    func abandon() {
        lock.withLock { cancelled = true }
        close(socket)
    }

    func wait() {
        if lock.withLock({ finished || !started }) { return }
        done.wait()
        done.signal()
    }

    private var isCancelled: Bool { lock.withLock { cancelled } }

    private func run() {
        defer { close(socket) }
        guard let out = FileHandle(forWritingAtPath: copy) else { failure = "cannot write \(copy)"; return }
        defer { try? out.close() }
        let pages = OggTestPage.pages(in: bytes)
        guard pages.last.map({ $0.offset + $0.size }) == bytes.count else {
            failure = "not a whole Ogg file (pages stop before its end)"; return
        }
        let start = DispatchTime.now().uptimeNanoseconds
        var linkStart = 0.0, linkTime = 0.0, rate = 48000.0, preSkip: Int64 = 0
        for page in pages {
            if isCancelled { return }
            if page.isFirst {
                linkStart += linkTime
                linkTime = 0
                let head = page.firstPacketPrefix(in: bytes, count: 16)
                if head.starts(with: Array("OpusHead".utf8)), head.count >= 12 {
                    rate = 48000
                    preSkip = Int64(head[10]) | Int64(head[11]) << 8
                } else if head.count >= 16, head[0] == 1, head[1...6].elementsEqual("vorbis".utf8) {
                    let r = UInt32(head[12]) | UInt32(head[13]) << 8 | UInt32(head[14]) << 16 | UInt32(head[15]) << 24
                    rate = Double(max(r, 1))
                    preSkip = 0
                }
            }
            if realtime {
                let due = start + UInt64((linkStart + linkTime) * 1e9)
                while !isCancelled {
                    let now = DispatchTime.now().uptimeNanoseconds
                    if now >= due { break }
                    usleep(UInt32(min(due - now, 20_000_000) / 1000))
                }
            }
            let chunk = bytes[page.offset..<(page.offset + page.size)]
            var sent = 0
            while sent < chunk.count {
                let n = chunk.withUnsafeBytes { raw in
                    send(socket, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                }
                if n <= 0 {
                    if n < 0 && errno == EINTR { continue }
                    if !isCancelled { failure = "ffmpeg stopped reading (errno \(errno))" }
                    return
                }
                do {
                    try out.write(contentsOf: chunk[(chunk.startIndex + sent)..<(chunk.startIndex + sent + n)])
                } catch {
                    failure = "writing \(copy): \(error)"
                    return
                }
                sent += n
            }
            if page.granule >= 0 { linkTime = max(linkTime, Double(max(0, page.granule - preSkip)) / rate) }
        }
        shutdown(socket, Int32(SHUT_WR))
    }
}

/// One Ogg page as the harness and its tests read it (RFC 3533 §6), without CRC checks:
/// they look at bytes that real encoders and Icecast wrote.
public struct OggTestPage: Sendable, Equatable {
    /// Where the page starts in the bytes it was read from.
    public var offset: Int
    /// Header and body.
    public var size: Int
    public var flags: UInt8
    public var granule: Int64
    public var serial: UInt32
    public var sequence: UInt32
    public var lacing: [UInt8]

    public var isFirst: Bool { flags & 0x02 != 0 }
    public var isLast: Bool { flags & 0x04 != 0 }
    public var bodyOffset: Int { offset + 27 + lacing.count }

    /// The whole pages at the start of `bytes`, in order; stops at the first thing that is
    /// not a page or a page cut short.
    public static func pages(in bytes: [UInt8]) -> [OggTestPage] {
        var result: [OggTestPage] = []
        var at = 0
        while at + 27 <= bytes.count, bytes[at..<(at + 4)].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[at + 26])
            guard at + 27 + segments <= bytes.count else { break }
            let lacing = Array(bytes[(at + 27)..<(at + 27 + segments)])
            let size = 27 + segments + lacing.reduce(0) { $0 + Int($1) }
            guard at + size <= bytes.count else { break }
            func le(_ from: Int, _ n: Int) -> UInt64 {
                (0..<n).reduce(UInt64(0)) { $0 | UInt64(bytes[at + from + $1]) << (8 * UInt64($1)) }
            }
            result.append(OggTestPage(offset: at, size: size, flags: bytes[at + 5], granule: Int64(bitPattern: le(6, 8)),
                                      serial: UInt32(le(14, 4)), sequence: UInt32(le(18, 4)), lacing: lacing))
            at += size
        }
        return result
    }

    /// Up to `count` bytes of the first packet that starts on this page.
    func firstPacketPrefix(in bytes: [UInt8], count: Int) -> [UInt8] {
        var length = 0
        for v in lacing { length += Int(v); if v < 255 { break } }
        return Array(bytes[bodyOffset..<(bodyOffset + min(length, count))])
    }

    /// The links of a chained stream of one logical stream at a time (what radio sends):
    /// for each, its serial and its packets in order.
    public static func links(in bytes: [UInt8]) -> [(serial: UInt32, packets: [[UInt8]])] {
        var links: [(serial: UInt32, packets: [[UInt8]])] = []
        var current: [UInt8] = []
        for page in pages(in: bytes) {
            if page.isFirst || links.isEmpty { links.append((page.serial, [])); current = [] }
            var at = page.bodyOffset
            for v in page.lacing {
                current += bytes[at..<(at + Int(v))]
                at += Int(v)
                if v < 255 { links[links.count - 1].packets.append(current); current = [] }
            }
        }
        return links
    }

    /// The fields of a Vorbis comment header or an OpusTags packet (keys upper-cased), or nil
    /// when the packet is neither or is cut short.
    public static func comments(_ packet: [UInt8]) -> [(key: String, value: String)]? {
        let start: Int
        if packet.starts(with: Array("OpusTags".utf8)) { start = 8 }
        else if packet.count >= 7, packet[0] == 3, packet[1...6].elementsEqual("vorbis".utf8) { start = 7 }
        else { return nil }
        var at = start
        func u32() -> Int? {
            guard at + 4 <= packet.count else { return nil }
            defer { at += 4 }
            return (0..<4).reduce(0) { $0 | Int(packet[at + $1]) << (8 * $1) }
        }
        guard let vendor = u32(), vendor <= packet.count - at else { return nil }
        at += vendor
        guard let count = u32() else { return nil }
        var fields: [(key: String, value: String)] = []
        for _ in 0..<count {
            guard let n = u32(), n <= packet.count - at else { return nil }
            let text = String(decoding: packet[at..<(at + n)], as: UTF8.self)
            at += n
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            fields.append((String(parts[0]).uppercased(), parts.count > 1 ? String(parts[1]) : ""))
        }
        return fields
    }
}

extension IcecastTestServer {
    /// A listener connection: Tonearm-independent HTTP (``RawHTTPConnection``).
    public typealias Listener = RawHTTPConnection
}
