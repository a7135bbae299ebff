import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import KioskWeb
#if canImport(Glibc)
import Glibc
#endif

@Suite("Which local user owns a loopback connection")
struct SocketOwnerTests {
    @Test("Addresses are written as the kernel's socket tables write them")
    func keys() throws {
        #expect(SocketOwner.key(try SocketAddress(ipAddress: "127.0.0.1", port: 8080)) == "0100007F:1F90")
        #expect(SocketOwner.key(try SocketAddress(ipAddress: "::1", port: 80)) == "00000000000000000000000001000000:0050")
        #expect(SocketOwner.key(try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: 443)) == "0000000000000000FFFF00000100007F:01BB")
        // An IPv4-mapped address is looked for in both forms (its socket may be IPv4's)
        #expect(SocketOwner.keys(try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: 443))
                == ["0000000000000000FFFF00000100007F:01BB", "0100007F:01BB"])
        #expect(SocketOwner.keys(try SocketAddress(ipAddress: "127.0.0.1", port: 443)) == ["0100007F:01BB"])
    }

    @Test("The user of the row whose ends are the client's and the server's is read, and no other")
    func readsTheMatchingRow() {
        // Given a table with the server's own row (its ends the other way round) and two clients of other users
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 11 1 0 20 4 30 10 -1
               1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001        0 12 1 0 20 4 30 10 -1
               2: 0100007F:C351 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 13 1 0 20 4 30 10 -1
               3: 0100007F:C352 0100007F:1F90 06 00000000:00000000 03:00000DD1 00000000     0        0 0 3 0
            """
        // Then each client's own user is told, and a connection not in it is nobody's
        #expect(SocketOwner.uid(in: table, client: "0100007F:C350", server: "0100007F:1F90") == 1001)
        #expect(SocketOwner.uid(in: table, client: "0100007F:C351", server: "0100007F:1F90") == 1000)
        #expect(SocketOwner.uid(in: table, client: "0100007F:C353", server: "0100007F:1F90") == nil)
        // And a client that closed at once (its row in TIME_WAIT, which the kernel lists as root's) is no one's
        #expect(SocketOwner.uid(in: table, client: "0100007F:C352", server: "0100007F:1F90") == nil)
    }

    @Test("A real connection on loopback is this process's user's")
    func realConnection() async throws {
        // Given a listener on 127.0.0.1 and a client connected to it
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let address = try #require(server.localAddress)
        // (and a few hundred other connections of it first, so the kernel's table is far past a page)
        var others: [any Channel] = []
        for _ in 0..<300 { others.append(try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(to: address).get()) }
        let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(to: address).get()
        // When the client's socket's owner is looked up as the server sees the connection
        let owner = SocketOwner.uid(of: client.localAddress, connectedTo: server.localAddress)
        // Then it is this process's user
        #expect(owner == getuid())
        // And so it is as a listener on `::` sees the same connection: both ends IPv4-mapped, the client's socket IPv4's
        let mapped = { (address: SocketAddress?) in try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: try #require(address?.port)) }
        #expect(SocketOwner.uid(of: try mapped(client.localAddress), connectedTo: try mapped(server.localAddress)) == getuid())
        try await client.close()
        for other in others { try await other.close() }
        try await server.close()
    }
}
