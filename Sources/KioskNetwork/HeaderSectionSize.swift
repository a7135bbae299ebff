import NIOHTTP1

extension HTTPHeaders {
    /// The bytes these fields take in an HTTP/1.1 head: each name and value with its `: ` and CR LF. NIO's parser limits
    /// only the names' and values' bytes, so that 16,000 fields of `X-H: a` (128 KB) passed a limit of 64 KB.
    package var sectionSize: Int {
        reduce(into: 0) { size, field in size += field.name.utf8.count + field.value.utf8.count + 4 }
    }
}
