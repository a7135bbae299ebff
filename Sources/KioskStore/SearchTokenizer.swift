import GRDB
import GRDBSQLite

/// Tokenizes text exactly as the `itemSearch` table does, so that the search vocabulary and the
/// tokens of a query are the index's own terms (lowercased, accents removed, split the same way).
struct SearchTokenizer {
    /// The tokenizer of the `itemSearch` table.
    static let descriptor: FTS5TokenizerDescriptor = .unicode61(diacritics: .remove)

    private let tokenizer: any FTS5Tokenizer

    /// Valid only inside the database access that created it.
    init(_ db: Database) throws {
        tokenizer = try db.makeTokenizer(Self.descriptor)
    }

    /// Calls `body` with each token of `text`, in order.
    func forEachToken(in text: String, tokenization: FTS5Tokenization, _ body: (String) -> Void) throws {
        guard !text.isEmpty else { return }
        try withoutActuallyEscaping(body) { body in
            // FTS5 calls back through a C function pointer, which cannot capture: the closure
            // travels in the context pointer instead.
            let box = CallbackBox(body)
            var text = text
            let code = text.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { chars in
                    tokenizer.tokenize(
                        context: Unmanaged.passUnretained(box).toOpaque(), tokenization: tokenization,
                        pText: chars.baseAddress, nText: CInt(chars.count)
                    ) { context, flags, pToken, nToken, _, _ in
                        // Colocated tokens are synonyms at the same position; unicode61 makes none.
                        guard let context, let pToken, nToken > 0, flags & FTS5_TOKEN_COLOCATED == 0 else {
                            return SQLITE_OK
                        }
                        let token = String(decoding: UnsafeRawBufferPointer(start: pToken, count: Int(nToken)),
                                           as: UTF8.self)
                        Unmanaged<CallbackBox>.fromOpaque(context).takeUnretainedValue().body(token)
                        return SQLITE_OK
                    }
                }
            }
            guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
        }
    }

    private final class CallbackBox {
        let body: (String) -> Void
        init(_ body: @escaping (String) -> Void) { self.body = body }
    }
}
