import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What stat(2) tells of a file. Read here, in a module that imports no CoreFoundation: where CoreFoundation is imported
/// (KioskDebugger, for the IANA charset names), the C `stat` is declared by its module too, and its fields would need
/// that import, or CDispatch's, in every file reading them (MemberImportVisibility).
public struct FileStatus: Sendable, Equatable {
    /// What kind of file it is.
    public enum Kind: Sendable, Equatable { case regular, directory, other }

    public let kind: Kind
    /// Its size in bytes.
    public let size: Int64
    /// The device and inode that name it: another file put in its place has other ones.
    public let device: UInt64
    public let inode: UInt64
    /// When its content last changed, in seconds and nanoseconds since 1970.
    public let modifiedSeconds: Int
    public let modifiedNanoseconds: Int

    /// The status of the open file `descriptor` (fstat(2)); nil when it cannot be read.
    public init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The status of `name` in the open folder `folder` (fstatat(2), which spares walking a whole path), or of the file
    /// at `path` when `folder` is negative (stat(2), following a symbolic link); nil when it does not exist or cannot be read.
    public init?(folder: Int32 = -1, name: String, path: String) {
        var info = stat()
        guard (folder >= 0 ? fstatat(folder, name, &info, 0) : stat(path, &info)) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        default: kind = .other
        }
        size = Int64(info.st_size)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        modifiedSeconds = Int(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
    }
}
