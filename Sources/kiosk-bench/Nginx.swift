// nginx beside Kiosk in kiosk-bench --proxy: what a proxy written in C that captures nothing reaches on this machine.

import Foundation
import KioskProcess

/// nginx as a reverse proxy in front of the bench upstream, a config of its own in a scratch folder: plain, for the
/// throughput of a proxy that captures nothing; or caching, every answer kept for 10 minutes whatever its fields say,
/// for a hit to compare.
struct Nginx {
    let process: ChildProcess
    let port: Int
    let folder: URL
    let version: String

    /// nil when nginx is not installed.
    static func start(upstream: Int, caching: Bool) async throws -> Nginx? {
        guard let nginx = [URL(fileURLWithPath: "/usr/sbin/nginx")].first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
                ?? executableOnPath("nginx") else { return nil }
        let folder = temporaryDirectory("nginx")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("cache"), withIntermediateDirectories: true)
        // Its workers may run as another user: they must be able to write the cache, and to pass through the bench's
        // scratch folder to it (Kiosk makes the folders of its files its owner's only, 0700).
        try FileManager.default.setAttributes([.posixPermissions: 0o711], ofItemAtPath: scratchFolder.path)
        for path in [folder, folder.appendingPathComponent("cache")] {
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path.path)
        }
        let port = try freePort()
        let dir = folder.path
        let config = """
            worker_processes 2;
            daemon off;
            master_process on;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                keepalive_requests 1000000;
                client_body_temp_path \(dir)/body; proxy_temp_path \(dir)/proxy; fastcgi_temp_path \(dir)/fastcgi;
                uwsgi_temp_path \(dir)/uwsgi; scgi_temp_path \(dir)/scgi;
                proxy_cache_path \(dir)/cache levels=1:2 keys_zone=bench:10m max_size=500m inactive=1d use_temp_path=off;
                upstream app { server 127.0.0.1:\(upstream); keepalive 32; }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://app;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        \(caching ? cachingDirectives : "")
                    }
                }
            }
            """
        let file = folder.appendingPathComponent("nginx.conf")
        try Data(config.utf8).write(to: file)
        let version = (try? await ChildProcess.run(nginx, arguments: ["-v"]))
            .map { ($0.stderr + $0.stdout).trimmingCharacters(in: .whitespacesAndNewlines) }?
            .components(separatedBy: "/").last ?? "?"
        let process = try ChildProcess(nginx, arguments: ["-e", folder.appendingPathComponent("error.log").path, "-p", dir, "-c", file.path],
                                       stdin: .null, stdout: .null, stderr: .null)
        guard await waitUntilListening(port) else {
            process.signal(SIGTERM)
            let log = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            throw BenchFailure("nginx did not start listening: \(log.suffix(400))")
        }
        return Nginx(process: process, port: port, folder: folder, version: "nginx " + version)
    }

    /// What makes the location a cache.
    private static let cachingDirectives = """
        proxy_cache bench;
        proxy_cache_valid 200 10m;
        proxy_ignore_headers Cache-Control Expires Set-Cookie;
        proxy_cache_use_stale error timeout updating http_500 http_502 http_503 http_504;
        add_header X-Cache-Status $upstream_cache_status;
        """

    /// What nginx said of one more request for the bench's answer (X-Cache-Status: HIT when it came from its cache).
    func lastCacheStatus() -> String {
        guard let curl = executableOnPath("curl"),
              let result = try? ChildProcess.run(curl, arguments: ["-s", "-o", "/dev/null", "-D", "-", "http://127.0.0.1:\(port)/2k"]) else {
            return "?"
        }
        return result.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("x-cache-status:") }
            .map { String($0.split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces) } ?? "?"
    }

    func stop() async {
        process.signal(SIGQUIT)
        for _ in 0..<500 where process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        if process.isRunning { process.signal(SIGKILL) }
    }
}
