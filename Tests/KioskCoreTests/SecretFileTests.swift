import Foundation
import KioskCore
import Testing
import KioskProcess

@Suite("Files written whole")
struct SecretFileTests {
    @Test("A write removes the new file a killed process left beside its file, and leaves one a running process is writing")
    func abandonedNewFilesRemoved() throws {
        // Given a folder with a file, the new file of a writer that was killed (its process has ended), and the new file
        // of a writer still running (this test's parent, alive while the test runs)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-secret-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("rules.json")
        let ended = try ChildProcess(URL(fileURLWithPath: "/bin/true"), arguments: [], stdout: .null, stderr: .null)
        ended.waitUntilExit()
        let abandoned = folder.appendingPathComponent("rules.json.new-\(ended.pid)")
        let underWay = folder.appendingPathComponent("rules.json.new-\(getppid())")
        let other = folder.appendingPathComponent("other.json.new-\(ended.pid)")
        let recent = folder.appendingPathComponent("rules.json.new-\(ended.pid + 1_000_000)")
        for leftover in [abandoned, underWay, other, recent] { try Data(repeating: 0x61, count: 1024).write(to: leftover) }
        // (the killed one's last written two minutes ago; one of a process this namespace does not see, a moment ago)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: abandoned.path)

        // When the file is written
        try SecretFile.write("{}", to: file)

        // Then the file holds what was written, the killed writer's new file is gone, the running one's and another
        // file's are left
        #expect(try String(contentsOf: file, encoding: .utf8) == "{}")
        #expect(!FileManager.default.fileExists(atPath: abandoned.path))
        #expect(FileManager.default.fileExists(atPath: underWay.path))
        #expect(FileManager.default.fileExists(atPath: other.path))
        #expect(FileManager.default.fileExists(atPath: recent.path))
    }
}
