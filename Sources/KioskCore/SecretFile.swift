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

    /// Makes the folder at `url` and any missing above it, each its owner's only (XDG's data folders are 0700), whatever
    /// the umask; one that exists is left as it is, but one that others may write to is refused (`KioskError.storage`
    /// saying so): anyone on the machine could put files of their own there for Kiosk to read as its own — a database
    /// of answers the proxy would replay, rules that mock an app's answers, a WAL the next open would apply.
    public static func makeFolder(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var info = stat()
        if stat(url.path, &info) == 0, info.st_mode & S_IWOTH != 0 {
            let mode = String(Int(info.st_mode) & 0o7777, radix: 8)
            throw KioskError.storage("other users may write to the folder \(url.path) (mode \(mode)), so any of them could put "
                                     + "files of their own there for Kiosk to read; use a folder of your own, or make it so with "
                                     + "chmod o-w \(url.path)")
        }
    }

    /// Why the file at `path` must not be used, when it belongs to another user than this process's: another user made
    /// it where Kiosk's file goes (nil when it is this user's, or is not there).
    public static func foreignOwner(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_uid != geteuid() else { return nil }
        return "\(path) belongs to another user (uid \(info.st_uid)), who could have put anything in it; remove it, or run "
            + "Kiosk as its owner"
    }

    /// Runs `body` holding an exclusive `flock(2)` on the file at `path` (made, mode 0600, when missing), which every
    /// process that changes what it guards takes first: two at once then run one after the other, the second seeing what
    /// the first wrote. Closing the descriptor releases the lock, and so does a process killed while holding it. Blocks
    /// the calling thread while another holds it: never call it on an event loop. Throws `failure` of the system's words
    /// when the lock cannot be taken, else what `body` throws.
    public static func withLock<Result, Failure: Error>(_ path: String, failure: (String) -> Failure,
                                                       _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw failure(String(cString: strerror(errno))) }
        }
        return try body()
    }

    /// Writes `text` to `url` through a new file that has `mode` (0600 by default: never readable by others, not even for
    /// a moment) from its creation — whatever the umask allows, which only ever takes bits away — then renamed over the
    /// old one. 0644 suits a file others may read and no one else may change (a trust bundle).
    public static func write(_ text: String, to url: URL, mode: mode_t = 0o600) throws {
        try write(Data(text.utf8), to: url, mode: mode)
    }

    /// Writes `data` to `url` as `write(_:to:mode:)` writes text: a new file of `mode`, renamed over the old one, so a
    /// reader sees the old file or the new one whole.
    public static func write(_ data: Data, to url: URL, mode: mode_t = 0o600) throws {
        let temporary = url.path + ".new-\(getpid())"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        // write(2) may take part of a large buffer (or be interrupted): the rest is written until all is, or it fails.
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if close(descriptor) != 0, failure == 0 { failure = errno }
        if failure == 0, rename(temporary, url.path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        removeAbandonedTemporaries(of: url)
    }

    /// Deletes the new files of writes to `url` that a killed process left (`.new-PID` of a process no longer running, not
    /// written for a minute): a HAR import's rules, stopped by kill -9, left 48 MB for good. Another process's write under
    /// way is left alone, one in another PID namespace (a container sharing the folder) too: it is being written.
    private static func removeAbandonedTemporaries(of url: URL) {
        let prefix = url.lastPathComponent + ".new-"
        let folder = url.deletingLastPathComponent()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid > 0, pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = folder.appendingPathComponent(name).path
            var status = stat()
            guard stat(path, &status) == 0, time(nil) - status.st_mtim.tv_sec > 60 else { continue }
            unlink(path)
        }
    }
}
