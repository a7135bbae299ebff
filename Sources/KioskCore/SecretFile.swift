public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files that hold keys: written so that no one else can ever read them, and checked before use.
public enum SecretFile {
    /// The permission bits of the file at `path` when its group or others may read or write it; nil when only
    /// its owner can (or it cannot be examined, which loading it then reports).
    public static func othersCanRead(_ path: String) -> Int? {
        // stat(2), which follows a symbolic link to the file that holds the key: a link's own mode is always 0777.
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = Int(info.st_mode) & 0o777
        return mode & 0o066 == 0 ? nil : mode
    }

    /// Writes `text` to `url` through a new file that has `mode` (0600 by default: never readable by others, not even for
    /// a moment) from its creation — whatever the umask allows, which only ever takes bits away — then renamed over the
    /// old one. 0644 suits a file others may read and no one else may change (a trust bundle).
    public static func write(_ text: String, to url: URL, mode: mode_t = 0o600) throws {
        let temporary = url.path + ".new-\(getpid())"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let closed = close(descriptor)
        guard written == bytes.count, closed == 0, rename(temporary, url.path) == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            unlink(temporary)
            throw error
        }
    }
}
