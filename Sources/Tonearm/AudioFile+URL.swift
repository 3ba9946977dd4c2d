import Foundation
import TonearmCore
import TonearmFormats

extension AudioFile {
    /// Opens a file URL for reading (`AudioFileOpenURL`). Only `file:` URLs are opened here;
    /// network streams go through ``AudioFileStream``.
    public convenience init(url: URL, permissions: Permissions = .read, fileTypeHint: AudioFileTypeID? = nil) throws(AudioError) {
        guard url.isFileURL else {
            throw AudioError(.unsupportedFileType, "\(url) is not a file URL; feed network streams to AudioFileStream")
        }
        try self.init(path: url.path, permissions: permissions, fileTypeHint: fileTypeHint)
    }

    /// Creates a file at a file URL (`AudioFileCreateWithURL`).
    public static func create(url: URL, type: AudioFileTypeID, format: StreamDescription,
                              flags: CreateFlags = []) throws(AudioError) -> AudioFile
    {
        guard url.isFileURL else { throw AudioError(.unsupportedFileType, "\(url) is not a file URL") }
        return try create(path: url.path, type: type, format: format, flags: flags)
    }
}
