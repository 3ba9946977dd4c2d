// TLS for the socket client (`https:` radio), through the system's OpenSSL loaded at run time
// with `dlopen`: the default build links nothing, and without libssl `https:` goes through
// URLSession instead. Types mirror <openssl/ssl.h>, <openssl/bio.h> and <openssl/err.h>: every
// object is an opaque pointer, `long` is Int, `unsigned long` is UInt.
//
// OpenSSL never touches the socket. It reads and writes two memory BIOs, and the socket client
// moves their bytes with its own poll/recv/send: a cancel or a timeout ends a TLS read as it
// ends a plain one, and a write to a closed connection cannot raise SIGPIPE (send takes
// MSG_NOSIGNAL; OpenSSL's socket BIO would call write).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCore

/// The OpenSSL functions the client calls, looked up once, and one client context for the
/// process (the system's trusted certificates, peer verification on).
struct OpenSSL: @unchecked Sendable {
    typealias Object = OpaquePointer

    let sslNew: @convention(c) (Object) -> Object?
    let sslFree: @convention(c) (Object) -> Void
    /// SSL_set_bio(ssl, rbio, wbio): the SSL owns both from then on.
    let sslSetBIO: @convention(c) (Object, Object, Object) -> Void
    let sslSet1Host: @convention(c) (Object, UnsafePointer<CChar>) -> Int32
    /// SSL_ctrl(ssl, cmd, larg, parg): SNI is SSL_CTRL_SET_TLSEXT_HOSTNAME.
    let sslCtrl: @convention(c) (Object, Int32, Int, UnsafeMutableRawPointer?) -> Int
    let sslGet0Param: @convention(c) (Object) -> Object?
    let paramSet1IPAscii: @convention(c) (Object, UnsafePointer<CChar>) -> Int32
    let sslConnect: @convention(c) (Object) -> Int32
    let sslRead: @convention(c) (Object, UnsafeMutableRawPointer, Int32) -> Int32
    let sslWrite: @convention(c) (Object, UnsafeRawPointer, Int32) -> Int32
    let sslGetError: @convention(c) (Object, Int32) -> Int32
    let sslGetVerifyResult: @convention(c) (Object) -> Int
    let verifyErrorString: @convention(c) (Int) -> UnsafePointer<CChar>?
    let errGetError: @convention(c) () -> UInt
    let errErrorStringN: @convention(c) (UInt, UnsafeMutablePointer<CChar>, Int) -> Void
    let errClearError: @convention(c) () -> Void
    let bioMemoryMethod: @convention(c) () -> Object?
    let bioNew: @convention(c) (Object) -> Object?
    let bioFree: @convention(c) (Object) -> Int32
    let bioRead: @convention(c) (Object, UnsafeMutableRawPointer, Int32) -> Int32
    let bioWrite: @convention(c) (Object, UnsafeRawPointer, Int32) -> Int32
    let bioCtrlPending: @convention(c) (Object) -> Int
    let context: Object

    static let fileNames = ["libssl.so.3", "libssl.so.1.1", "libssl.so"]
    static let sslErrorWantRead: Int32 = 2, sslErrorWantWrite: Int32 = 3, sslErrorZeroReturn: Int32 = 6
    static let sslCtrlSetTLSExtHostname: Int32 = 55

    /// The library, loaded on first use; an error saying why when it cannot be.
    static func load() throws(AudioError) -> OpenSSL { try loaded.get() }

    /// True when `https:` can go through the socket client.
    static var isAvailable: Bool { (try? load()) != nil }

    private static let loaded: Result<OpenSSL, AudioError> = {
        guard let lib = fileNames.lazy.compactMap({ DynamicLibrary($0, missingSymbol: .network) }).first else {
            return .failure(AudioError(.network, "OpenSSL (libssl.so.3) is not installed (apt-get install libssl3)"))
        }
        do throws(AudioError) {
            return .success(try OpenSSL(lib))
        } catch {
            return .failure(error)
        }
    }()

    private init(_ lib: DynamicLibrary) throws(AudioError) {
        // libcrypto's functions are found through libssl's handle: dlsym searches its dependencies.
        let initSSL = try lib.function("OPENSSL_init_ssl", as: (@convention(c) (UInt64, UnsafeRawPointer?) -> Int32).self)
        let clientMethod = try lib.function("TLS_client_method", as: (@convention(c) () -> Object?).self)
        let contextNew = try lib.function("SSL_CTX_new", as: (@convention(c) (Object) -> Object?).self)
        let defaultPaths = try lib.function("SSL_CTX_set_default_verify_paths", as: (@convention(c) (Object) -> Int32).self)
        let setVerify = try lib.function("SSL_CTX_set_verify", as: (@convention(c) (Object, Int32, UnsafeRawPointer?) -> Void).self)
        sslNew = try lib.function("SSL_new")
        sslFree = try lib.function("SSL_free")
        sslSetBIO = try lib.function("SSL_set_bio")
        sslSet1Host = try lib.function("SSL_set1_host")
        sslCtrl = try lib.function("SSL_ctrl")
        sslGet0Param = try lib.function("SSL_get0_param")
        paramSet1IPAscii = try lib.function("X509_VERIFY_PARAM_set1_ip_asc")
        sslConnect = try lib.function("SSL_connect")
        sslRead = try lib.function("SSL_read")
        sslWrite = try lib.function("SSL_write")
        sslGetError = try lib.function("SSL_get_error")
        sslGetVerifyResult = try lib.function("SSL_get_verify_result")
        verifyErrorString = try lib.function("X509_verify_cert_error_string")
        errGetError = try lib.function("ERR_get_error")
        errErrorStringN = try lib.function("ERR_error_string_n")
        errClearError = try lib.function("ERR_clear_error")
        bioMemoryMethod = try lib.function("BIO_s_mem")
        bioNew = try lib.function("BIO_new")
        bioFree = try lib.function("BIO_free")
        bioRead = try lib.function("BIO_read")
        bioWrite = try lib.function("BIO_write")
        bioCtrlPending = try lib.function("BIO_ctrl_pending")
        guard initSSL(0, nil) == 1, let method = clientMethod(), let context = contextNew(method) else {
            throw AudioError(.network, "\(lib.name) could not make a TLS context")
        }
        guard defaultPaths(context) == 1 else {
            throw AudioError(.network, "\(lib.name) could not load the system's trusted certificates")
        }
        setVerify(context, 1 /* SSL_VERIFY_PEER */, nil)
        self.context = context
    }

    /// The oldest error on this thread's OpenSSL queue, as text; the queue is emptied.
    func takeErrorText() -> String? {
        let code = errGetError()
        defer { errClearError() }
        guard code != 0 else { return nil }
        var text = [CChar](repeating: 0, count: 256)
        errErrorStringN(code, &text, text.count)
        return String(cString: text)
    }
}

/// One TLS connection's state: OpenSSL's SSL object between two memory BIOs. The socket client
/// hands it the bytes that arrive (``receive(_:)``) and sends what it has to send
/// (``takeOutput()``). Not thread-safe: one reader owns it.
final class TLSSession {
    enum Step { case done(Int), needsInput, closed }

    private let openSSL: OpenSSL
    private let ssl: OpenSSL.Object
    private let input: OpenSSL.Object
    private let output: OpenSSL.Object
    private let host: String

    /// A client session for `host`: its certificate must be trusted and carry that name (or
    /// that IP address); a name is also sent as SNI.
    init(host: String) throws(AudioError) {
        let openSSL = try OpenSSL.load()
        self.openSSL = openSSL
        self.host = host
        guard let method = openSSL.bioMemoryMethod(), let input = openSSL.bioNew(method) else {
            throw AudioError(.network, "OpenSSL could not make a buffer")
        }
        guard let output = openSSL.bioNew(method) else {
            _ = openSSL.bioFree(input)
            throw AudioError(.network, "OpenSSL could not make a buffer")
        }
        guard let ssl = openSSL.sslNew(openSSL.context) else {
            _ = openSSL.bioFree(input)
            _ = openSSL.bioFree(output)
            throw AudioError(.network, "OpenSSL could not make a connection")
        }
        openSSL.sslSetBIO(ssl, input, output)
        self.ssl = ssl
        self.input = input
        self.output = output
        let checked: Bool
        if Self.isIPAddress(host), let parameters = openSSL.sslGet0Param(ssl) {
            checked = openSSL.paramSet1IPAscii(parameters, host) == 1
        } else {
            _ = host.withCString {   // OpenSSL copies the name
                openSSL.sslCtrl(ssl, OpenSSL.sslCtrlSetTLSExtHostname, 0 /* TLSEXT_NAMETYPE_host_name */,
                                UnsafeMutableRawPointer(mutating: $0))
            }
            checked = openSSL.sslSet1Host(ssl, host) == 1
        }
        guard checked else { throw AudioError(.network, "\(host) is not a name a certificate can be checked against") }
    }

    deinit { openSSL.sslFree(ssl) }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// One step of the handshake: done, or it needs more bytes from the server (send
    /// ``takeOutput()`` first).
    func handshake() throws(AudioError) -> Step {
        openSSL.errClearError()
        let r = openSSL.sslConnect(ssl)
        if r == 1 { return .done(0) }
        let error = openSSL.sslGetError(ssl, r)
        if error == OpenSSL.sslErrorWantRead || error == OpenSSL.sslErrorWantWrite { return .needsInput }
        let verify = openSSL.sslGetVerifyResult(ssl)
        if verify != 0 {
            let why = openSSL.verifyErrorString(verify).map { String(cString: $0) } ?? "error \(verify)"
            openSSL.errClearError()
            throw AudioError(.network, "the certificate of \(host) is not trusted: \(why)")
        }
        throw failure("the TLS handshake with \(host) failed", error: error)
    }

    /// Decrypted bytes into `buffer`: `.done(n)`, `.needsInput`, or `.closed` when the server
    /// ended the session.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Step {
        openSSL.errClearError()
        let r = openSSL.sslRead(ssl, buffer.baseAddress!, Int32(min(buffer.count, Int(Int32.max))))
        if r > 0 { return .done(Int(r)) }
        let error = openSSL.sslGetError(ssl, r)
        if error == OpenSSL.sslErrorWantRead || error == OpenSSL.sslErrorWantWrite { return .needsInput }
        if error == OpenSSL.sslErrorZeroReturn { return .closed }
        throw failure("reading from \(host) over TLS failed", error: error)
    }

    /// Encrypts `bytes` into the output (with memory buffers a write never waits).
    func write(_ bytes: UnsafeRawBufferPointer) throws(AudioError) {
        var offset = 0
        while offset < bytes.count {
            openSSL.errClearError()
            let r = openSSL.sslWrite(ssl, bytes.baseAddress! + offset, Int32(min(bytes.count - offset, 1 << 20)))
            guard r > 0 else { throw failure("writing to \(host) over TLS failed", error: openSSL.sslGetError(ssl, r)) }
            offset += Int(r)
        }
    }

    /// Bytes from the server, for OpenSSL to decrypt.
    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        _ = openSSL.bioWrite(input, base, Int32(bytes.count))
    }

    /// What OpenSSL has to send to the server (empty when nothing).
    func takeOutput() -> [UInt8] {
        let count = openSSL.bioCtrlPending(output)
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { openSSL.bioRead(output, $0.baseAddress!, Int32(count)) }
        return Array(bytes.prefix(max(0, Int(n))))
    }

    private func failure(_ what: String, error: Int32) -> AudioError {
        let detail = openSSL.takeErrorText() ?? "SSL error \(error)"
        return AudioError(.network, "\(what): \(detail)")
    }
}
