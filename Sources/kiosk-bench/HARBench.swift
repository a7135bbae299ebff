import Foundation
import KioskApp
import KioskDebugger
import KioskProcess

// `kiosk-bench --har`: the memory an archive takes to read (issue 26: "within a few times its size, valid or not").
// Each import runs in a child process of its own (this binary, `--har-child`), which prints its own peak resident size
// (VmHWM: wait4's figure would start from the parent's, which posix_spawn's vfork shares); a one-entry archive's import
// is the baseline subtracted.

/// In a child: imports `file` as `mode` says (`mocks`: as mock rules; `cache`: into the proxy cache) into `directory`
/// and exits, printing its peak resident size in KiB. Exits 1 when the archive is refused (its message on stderr).
func harImportChild(mode: String, file: String, directory: String) -> Never {
    do {
        let kiosk = try Kiosk(configuration: KioskConfiguration(dataDirectory: URL(fileURLWithPath: directory)))
        if mode == "cache" {
            _ = try kiosk.importIntoProxyCache(atPath: file)
        } else {
            _ = try kiosk.debugger.importHAR(atPath: file)
        }
        print("peak \(peakRSSKilobytes())")
        exit(0)
    } catch {
        print("peak \(peakRSSKilobytes())")
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}

/// Writes a HAR archive of about `megabytes` MB (entries of 20 KB JSON bodies), and the same cut short before its
/// end (a malformed one, whose fault is found only at the end); returns their paths and the archive's size.
private func writeArchives(megabytes: Int, in folder: URL) throws -> (valid: URL, malformed: URL, tiny: URL, size: Int) {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let items = (0..<80).map { #"{"id":\#($0),"name":"item \#($0)","text":"\#(String(repeating: "x", count: 200))"}"# }
    let body = #"{"items":["# + items.joined(separator: ",") + "]}"
    let quoted = String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
    func entry(_ index: Int) -> String {
        #"{"startedDateTime":"2024-05-22T08:41:18.352Z","time":12,"request":{"method":"GET","url":"https://api.example.com/items?page=\#(index)","httpVersion":"HTTP/1.1","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"application/json"},{"name":"Cache-Control","value":"max-age=60"}],"cookies":[],"content":{"size":\#(body.utf8.count),"mimeType":"application/json","text":\#(quoted)},"redirectURL":"","headersSize":-1,"bodySize":\#(body.utf8.count)},"cache":{},"timings":{"send":0,"wait":10,"receive":2}}"#
    }
    let count = megabytes * 1_000_000 / (body.utf8.count + 600)
    var text = #"{"log":{"version":"1.2","creator":{"name":"kiosk-bench","version":"1"},"entries":["#
    text += (0..<count).map(entry).joined(separator: ",")
    text += "]}}"
    let valid = folder.appendingPathComponent("valid.har"), malformed = folder.appendingPathComponent("malformed.har")
    let tiny = folder.appendingPathComponent("tiny.har")
    try Data(text.utf8).write(to: valid)
    try Data((text.dropLast(200) + "}}}").utf8).write(to: malformed)
    try Data((#"{"log":{"version":"1.2","entries":["# + entry(0) + "]}}").utf8).write(to: tiny)
    return (valid, malformed, tiny, text.utf8.count)
}

/// `kiosk-bench --har`: peak resident size of importing a 60 MB archive, valid and malformed, as mock rules and into
/// the proxy cache, each above the baseline of a one-entry import.
func harBenchmarks() {
    do {
        let folder = temporaryDirectory("har")
        let archives = try writeArchives(megabytes: 60, in: folder)
        let me = URL(fileURLWithPath: CommandLine.arguments[0])
        func peak(_ mode: String, _ file: URL) throws -> (kib: Int, refused: Bool) {
            let result = try ChildProcess.run(me, arguments: ["--har-child", mode, file.path,
                                                              temporaryDirectory("har-\(mode)").path])
            guard let line = result.stdout.split(separator: "\n").last(where: { $0.hasPrefix("peak ") }),
                  let kib = Int(line.dropFirst(5)) else { throw HARBenchError(output: result.stdout + result.stderr) }
            return (kib, result.status != 0)
        }
        let size = Double(archives.size) / 1_000_000
        for mode in ["mocks", "cache"] {
            let base = try peak(mode, archives.tiny).kib
            for (name, file) in [("valid", archives.valid), ("malformed", archives.malformed)] {
                let (kib, refused) = try peak(mode, file)
                let above = Double(kib - base) / 1000
                print(String(format: "[har] a %.0f MB archive, %@, %@: peak RSS %.0f MB, %.0f MB above a one-entry import's %.0f MB (%.1f× the archive)%@",
                             size, name, mode == "cache" ? "into the proxy cache" : "as mock rules", Double(kib) / 1000, above,
                             Double(base) / 1000, above / size, refused == (name == "malformed") ? "" : "  (UNEXPECTED: \(refused ? "refused" : "accepted"))"))
            }
        }
        print("[har] (target: within a few times the archive's size, valid or not)")
    } catch {
        print("[har] failed: \(error)")
    }
}

/// A child of `--har` that printed no figure.
private struct HARBenchError: Error, CustomStringConvertible {
    let output: String
    var description: String { "the import's process printed no figure: \(output.suffix(500))" }
}
