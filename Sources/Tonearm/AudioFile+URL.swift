import Foundation
import TonearmCore
import TonearmFormats
import TonearmStreaming

extension AudioFile {
    /// Opens a URL for reading (`AudioFileOpenURL`): a `file:` URL as a path, an `http:` or
    /// `https:` URL through an ``HTTPStream`` read with Range requests, so that only the bytes
    /// the parser asks for travel (an MP4's `moov` at the end is one request). A server that
    /// does not serve ranges answers 'rng?': feed such a stream to ``AudioFileStream``.
    public convenience init(url: URL, permissions: Permissions = .read, fileTypeHint: AudioFileTypeID? = nil) throws(AudioError) {
        if url.isFileURL {
            try self.init(path: url.path, permissions: permissions, fileTypeHint: fileTypeHint)
            return
        }
        guard permissions == .read else { throw AudioError(.permissions, "\(url) can only be read") }
        try self.init(remote: url.absoluteString, fileTypeHint: fileTypeHint)
    }

    /// Opens an `http:` or `https:` resource for reading (see ``init(url:permissions:fileTypeHint:)``).
    public convenience init(remote url: String, fileTypeHint: AudioFileTypeID? = nil,
                            options: HTTPStream.Options = HTTPStream.Options()) throws(AudioError)
    {
        guard URL(string: url).map({ ["http", "https"].contains($0.scheme?.lowercased() ?? "") }) == true else {
            throw AudioError(.unsupportedFileType, "\(url) is neither a file URL nor an http or https URL")
        }
        let stream = HTTPStream(url: url, options: options)
        try stream.open()
        guard stream.size != nil else {
            stream.close()
            throw AudioError(.rangeNotSupported, "\(url) is a live stream with no length; feed it to AudioFileStream")
        }
        guard stream.isSeekable else {
            stream.close()
            throw AudioError(.rangeNotSupported, "the server of \(url) does not serve byte ranges; feed it to AudioFileStream")
        }
        try self.init(source: stream, fileTypeHint: fileTypeHint ?? stream.fileTypeHint)
    }

    /// Creates a file at a file URL (`AudioFileCreateWithURL`).
    public static func create(url: URL, type: AudioFileTypeID, format: StreamDescription,
                              flags: CreateFlags = []) throws(AudioError) -> AudioFile
    {
        guard url.isFileURL else { throw AudioError(.unsupportedFileType, "\(url) is not a file URL") }
        return try create(path: url.path, type: type, format: format, flags: flags)
    }
}
