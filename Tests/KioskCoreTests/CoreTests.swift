import Foundation
@testable import KioskCore
import Testing

@Suite("Core values")
struct CoreTests {
    @Test("Redaction replaces NYT and Marvel secrets in URLs and keeps everything else")
    func redactsURLs() {
        let nyt = URL(string: "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=SECRET1")!
        #expect(nyt.redactedString == "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=%3Credacted%3E"
            || nyt.redactedString == "https://api.nytimes.com/svc/mostpopular/v2/viewed/7.json?api-key=<redacted>")
        let marvel = URL(string: "https://gateway.marvel.com/v1/public/characters?limit=20&ts=123&apikey=PUB&hash=abc&nameStartsWith=Spi")!
        let text = marvel.redactedString
        #expect(!text.contains("PUB"))
        #expect(!text.contains("abc"))
        #expect(!text.contains("ts=123"))
        #expect(text.contains("limit=20"))
        #expect(text.contains("nameStartsWith=Spi"))
    }

    @Test("A secret query item is found under any spelling of its name — any case, percent-escaped, form-encoded, a letter that lowercases to ASCII — and a URL naming none is kept byte for byte")
    func redactsQueryNamesAnySpelling() {
        let redactor = Redactor(queryItems: ["api-key", "my key"], headers: [])
        let cases = [
            "http://a.test/x?API-Key=s1&page=2": "http://a.test/x?API-Key=<redacted>&page=2",
            "http://a.test/x?api%2Dkey=s1": "http://a.test/x?api%2Dkey=<redacted>",
            "http://a.test/x?my+key=s1&my%20KEY=s2": "http://a.test/x?my+key=<redacted>&my%20KEY=<redacted>",
            // U+212A KELVIN SIGN lowercases to an ASCII k
            "http://a.test/x?api-%E2%84%AAey=s1#top": "http://a.test/x?api-%E2%84%AAey=<redacted>#top",
            "http://a.test/x?api-keys=s1&key=s2&=s3&&api-key": "http://a.test/x?api-keys=s1&key=s2&=s3&&api-key=<redacted>",
            // Spaces around the name, as a server may trim them
            "http://a.test/x?+api-key=s1&api-key%20=s2": "http://a.test/x?+api-key=<redacted>&api-key%20=<redacted>",
        ]
        for (url, expected) in cases {
            #expect(redactor.redact(URL(string: url)!) == expected, "\(url)")
        }
        let plain = "http://a.test/search?q=caf%C3%A9+au+lait&Page=%32&x=#frag"
        #expect(redactor.redact(URL(string: plain)!) == plain)
    }

    @Test("A form's pairs are cut at every '&' and named up to the first '=' by bytes, as a server reads them: a character that joins one of them to its neighbour hides no secret")
    func formPairsCutByBytes() {
        // Given form bodies where a prepended-concatenation mark (U+0600) makes one character with the '&' after it, and a
        // combining accent (U+0301) one with the '=' before it
        let form = "application/x-www-form-urlencoded"
        let cases = [
            "note=\u{0600}&password=hunter2": "note=\u{0600}&password=<redacted>",
            "password=\u{301}hunter2&a=1": "password=<redacted>&a=1",
            // (a name whose last word says it holds a secret, as a header's does; a page's cursor is no secret)
            "new_password=p2&user[db_secret]=s1&pageToken=c1": "new_password=<redacted>&user[db_secret]=<redacted>&pageToken=c1",
        ]
        for (body, expected) in cases {
            // When each is redacted
            let redacted = String(decoding: Redactor.standard.redactBody(Data(body.utf8), contentType: form), as: UTF8.self)
            // Then the password's value is gone, and nothing else changed
            #expect(redacted == expected, "\(body.debugDescription)")
        }
    }

    @Test("A Content-Type's media type is read without its parameters, the spaces around it, or its capitals")
    func mediaTypeOfContentType() {
        #expect(HTTPSyntax.mediaType("Text/Event-Stream; charset=UTF-8") == "text/event-stream")
        #expect(HTTPSyntax.mediaType(" \tapplication/json\t ;q=1") == "application/json")
        #expect(HTTPSyntax.mediaType("image/png") == "image/png")
        #expect(HTTPSyntax.mediaType(" ; charset=utf-8") == "")
        #expect(HTTPSyntax.mediaType("") == "")
    }

    @Test("The credentials a request sends are the values of the query items its URL's redaction hides — under any spelling of their names, as sent and percent-decoded — besides its secret headers', its cookies' and its password")
    func credentialsFollowQueryRedaction() {
        // Given a redactor hiding `token` and `api-key`, and a URL naming them in several spellings among plain items
        let redactor = Redactor(queryItems: ["token", "api-key"], headers: ["authorization"])
        let url = URL(string: "http://user:hunter22@a.test/x?Token=abc%2Fdef1&page=123456789&user%5Btoken%5D=tok-in-brackets&api%2Dkey=escaped-key&token")!
        // When its credentials are read
        let values = redactor.credentials(in: ["Authorization": "Bearer sesame-123", "Accept": "application/json-long"], url: url)
        // Then each secret item's value is there, as sent and decoded (an echo of the raw query keeps the escapes), and
        // nothing of the plain ones
        #expect(Set(values) == ["hunter22", "abc%2Fdef1", "abc/def1", "tok-in-brackets", "escaped-key", "Bearer sesame-123", "sesame-123"])
        // And a cookie's value too, as sent and as a server reads its escapes (Express's signed session)
        let cookies = Redactor(queryItems: [], headers: ["cookie"]).credentials(in: ["Cookie": "sid=s%3Asigned-session"], url: URL(string: "http://a.test/")!)
        #expect(Set(cookies) == ["sid=s%3Asigned-session", "s%3Asigned-session", "s:signed-session"])
        // And Basic's pair, as sent and decoded (httpbin's /basic-auth says it so), and its password
        let basic = Data("alice:pw-secret-99".utf8).base64EncodedString()
        let pair = redactor.credentials(in: ["Authorization": "Basic \(basic)"], url: URL(string: "http://a.test/")!)
        #expect(Set(pair) == ["Basic \(basic)", basic, "alice:pw-secret-99", "pw-secret-99"])
        // And a Referer's secret items, query and fragment (an OAuth callback's), which an echo would repeat
        let referred = Redactor.standard.credentials(in: ["Referer": "http://app.test/cb?access_token=at-7777777&x=1#id_token=it-8888888"],
                                                     url: URL(string: "http://a.test/")!)
        #expect(Set(referred) == ["at-7777777", "it-8888888"], "\(referred)")
        // And the standard list hides a token's camel-case and dashed names in a URL as it does in JSON
        let standard = Redactor.standard.redact(URL(string: "http://a.test/x?accessToken=at-123456&auth_token=au-123456&page=2")!)
        #expect(standard == "http://a.test/x?accessToken=<redacted>&auth_token=<redacted>&page=2", "\(standard)")
        // And every URL the redaction leaves as it is yields none
        #expect(redactor.credentials(in: [:], url: URL(string: "http://a.test/x?q=caf%C3%A9+au+lait&tokens=123456789")!).isEmpty)
    }

    @Test("A body in a content coding is redacted inside it: gzip and deflate coded again, kept byte for byte when nothing was hidden, withheld when cut; a coding Kiosk cannot read goes as it came")
    func codedBodies() throws {
        // Given a redactor hiding a token, and a JSON answer echoing it and a password field
        let redactor = Redactor.standard.hiding(["tok-1234567"])
        let json = Data(#"{"echo": "Bearer tok-1234567", "password": "pw-7654321", "n": 1}"#.utf8)
        for coding in ["gzip", "deflate", "x-gzip"] {
            let coded = try #require(ContentCoding.encoded(json, coding: coding))
            // When it is redacted as the capture does, with its Content-Encoding
            let redacted = redactor.redactBody(coded, contentType: "application/json", contentEncoding: " \(coding.uppercased()) ")
            // Then it is still in its coding, and decodes to the body with both hidden
            let text = String(decoding: try #require(ContentCoding.decoded(redacted, coding: coding)), as: UTF8.self)
            #expect(text == #"{"echo": "Bearer <redacted>", "password": "<redacted>", "n": 1}"#, "\(coding): \(text)")
            // And a coded body that hides nothing is kept byte for byte
            let plain = try #require(ContentCoding.encoded(Data(#"{"n": 1}"#.utf8), coding: coding))
            #expect(redactor.redactBody(plain, contentType: "application/json", contentEncoding: coding) == plain)
            // And one cut short (at the capture's limit), which cannot be read for secrets, is withheld
            #expect(redactor.redactBody(coded.prefix(coded.count - 6), contentType: "application/json", contentEncoding: coding).isEmpty)
            // And one whose content is larger than the decoding limit (a gzip bomb's) is withheld, never decoded past it
            #expect(redactor.redactBody(coded, contentType: "application/json", contentEncoding: coding, decodingAtMost: 16).isEmpty)
            #expect(!redactor.redactBody(coded, contentType: "application/json", contentEncoding: coding, decodingAtMost: json.count).isEmpty)
            // And one that is no coded body at all (a plain answer mislabelled) is redacted as the plain body it is, not withheld
            #expect(redactor.redactBody(json, contentType: "application/json", contentEncoding: coding)
                == redactor.redactBody(json, contentType: "application/json"))
        }
        // And a raw deflate stream (no zlib header, as old servers send for "deflate", and browsers read) is read and
        // redacted too; one cut short is withheld
        let zlib = try #require(ContentCoding.encoded(json, coding: "deflate"))
        let rawDeflate = Data(zlib.dropFirst(2).dropLast(4))
        #expect(ContentCoding.decoded(rawDeflate, coding: "deflate") == json)
        let hidden = redactor.redactBody(rawDeflate, contentType: "application/json", contentEncoding: "deflate")
        #expect(ContentCoding.decoded(hidden, coding: "deflate").map { String(decoding: $0, as: UTF8.self) }
                == #"{"echo": "Bearer <redacted>", "password": "<redacted>", "n": 1}"#)
        #expect(ContentCoding.decoded(rawDeflate.dropLast(3), coding: "deflate") == nil)
        #expect(redactor.redactBody(rawDeflate.dropLast(3), contentType: "application/json", contentEncoding: "deflate").isEmpty)
        // And bytes that are not text under a coding that does not decode them (zlib labelled gzip) may hide a secret in
        // another coding: withheld, never kept as they came
        #expect(redactor.redactBody(zlib, contentType: "application/json", contentEncoding: "gzip").isEmpty)
        // And a body withheld is one nothing of which was kept, said so by its size
        let withheld = CapturedBody(redacted: Data(), ofFirst: 24, size: 24, limit: 1 << 20)
        #expect(withheld.isWithheld && withheld.originalSize == 24)
        #expect(!CapturedBody(redacted: Data(), ofFirst: 0, size: 0, limit: 1 << 20).isWithheld)
        // And a coding Kiosk cannot read, or none, is as the plain redaction says
        #expect(redactor.redactBody(json, contentType: "application/json", contentEncoding: "zstd") == json)
        #expect(redactor.redactBody(json, contentType: "application/json", contentEncoding: "identity")
            == redactor.redactBody(json, contentType: "application/json"))
    }

    @Test("A secret value is found and replaced wherever it falls in a body — first, last, among near misses, repeated — and a body without it is kept as it was")
    func scrubsSecretValuesAnywhere() {
        // Given a redactor hiding a key whose bytes repeat, and one that contains another's first letters
        let key = "abcabdabcabc", other = "xyzzy-42"
        let redactor = Redactor(queryItems: [], headers: []).hiding([key, other])
        let placeholder = Redactor.placeholder
        let cases = [
            key: placeholder,
            "\(key){}": "\(placeholder){}",
            "{\"k\":\"\(key)\"}": "{\"k\":\"\(placeholder)\"}",
            // Windows that end like the key, or hold all but one of its bytes, are not it
            "abcabdabcab abcabdabcabd bcabdabcabc \(key)": "abcabdabcab abcabdabcabd bcabdabcabc \(placeholder)",
            "abcabcabdabcabc": "abc" + placeholder,
            "\(key)\(key)": placeholder + placeholder,
            "\(other)\(key)é": placeholder + placeholder + "é",
            "xyzzy-4 xyzzy-4": "xyzzy-4 xyzzy-4",
        ]
        // Then each body comes back with exactly the keys replaced, as bytes and as text
        for (body, expected) in cases {
            #expect(redactor.scrub(Data(body.utf8)) == Data(expected.utf8), "\(body)")
            #expect(redactor.scrub(body) == expected, "\(body)")
        }
        // And a body shorter than the key, or with no key, is the same value
        let plain = Data(String(repeating: "{\"id\":1,\"name\":\"abcabdabcab\"},", count: 500).utf8)
        #expect(redactor.scrub(plain) == plain)
        #expect(redactor.scrub("abc") == "abc")
    }

    @Test("A secret spelt in a header's name (an upstream echoing a key or the app's token as a field name) is hidden in the name as in a value")
    func secretInHeaderName() {
        // Given a configured key and an app's token, and an answer whose field names carry them
        let key = "66f45fc686d3ac15c35f90955b83e822", token = "AppTok_9f8e7d6c5b"
        let redactor = Redactor.standard.hiding([key, token])
        let fields: HTTPHeaderFields = ["X-\(key)": "yes", "X-Echo-\(token)": "1", "Content-Type": "application/json"]
        // When they are redacted for the log
        let shown = redactor.redact(fields)
        // Then neither secret is left, in a name or a value, and the other fields are as they came, in order
        #expect(shown.map(\.name) == ["X-\(Redactor.placeholder)", "X-Echo-\(Redactor.placeholder)", "Content-Type"])
        #expect(shown.map(\.value) == ["yes", "1", "application/json"])
    }

    @Test("A secret an upstream spells otherwise is still replaced: with JSON escapes (some characters or all, a surrogate pair near it), in capitals or small letters, in base64")
    func scrubsOtherSpellings() {
        // Given a redactor hiding an API key and a signature (a lowercase hex digest)
        let key = "nytK3yS3cret1111", digest = "c442c232ab12cd34ef56ab78cd90ef12"
        let redactor = Redactor(queryItems: [], headers: []).hiding([key, digest])
        let placeholder = Redactor.placeholder
        let escaped = key.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
        let cases = [
            // Every character escaped, in a JSON string, beside an emoji escaped as its surrogate pair
            #"{"title":"ESCKEY:\#(escaped) \ud83d\ude00"}"#: #"{"title":"ESCKEY:\#(placeholder) \ud83d\ude00"}"#,
            // One character escaped, capitals in the escape, and an escaped slash before it
            #"{"u":"a\/nytK3y\u0053\u0033cret1111"}"#: #"{"u":"a\/\#(placeholder)"}"#,
            // The digest in capitals, and the key in base64 (as a header may carry it), with and without padding
            "hash=\(digest.uppercased())": "hash=\(placeholder)",
            // The key in capitals or in small letters (a search index's words)
            "KEY \(key.uppercased()) key \(key.lowercased())": "KEY \(placeholder) key \(placeholder)",
            "X: \(Data(key.utf8).base64EncodedString())": "X: \(placeholder)",
        ]
        // Then each comes back with the secret replaced, the rest as it was, as bytes and as text
        for (body, expected) in cases {
            #expect(String(decoding: redactor.scrub(Data(body.utf8)), as: UTF8.self) == expected, "\(body)")
            #expect(redactor.scrub(body) == expected, "\(body)")
        }
        // And escapes that spell no secret are left exactly as they were
        let other = #"{"a":"\u0041\/\\\"\n\ud83d\ude00\ud800 nytK3yS3cret111"}"#
        #expect(redactor.scrub(Data(other.utf8)) == Data(other.utf8))
    }

    @Test("A key of characters a URL escapes is replaced in its escaped form too, in capital or small hex digits, as an echo of the URL carries it")
    func scrubsEscapedSpelling() {
        // Given a redactor hiding a key holding +, / and =
        let key = "nyt+KEY/with=Chars~SECRET0042"
        let redactor = Redactor(queryItems: [], headers: []).hiding([key])
        let placeholder = Redactor.placeholder
        // When an upstream echoes the path it was asked for, with the key %XX-escaped, in either case of hex
        for echoed in ["nyt%2BKEY%2Fwith%3DChars~SECRET0042", "nyt%2bKEY%2fwith%3dChars~SECRET0042"] {
            let body = #"{"title":"asked /svc?api-key=\#(echoed)&x=1"}"#
            // Then the key is replaced, the rest as it was
            #expect(redactor.scrub(body) == #"{"title":"asked /svc?api-key=\#(placeholder)&x=1"}"#, "\(echoed)")
            #expect(String(decoding: redactor.scrub(Data(body.utf8)), as: UTF8.self) == redactor.scrub(body))
        }
    }

    @Test("Searching for several keys at once finds one exactly where a search for each key in turn does")
    func secretScanAgreesWithSearchingEachKey() {
        // Given keys of different lengths over a small alphabet, one the start of another, one ending like another
        let keys = ["abcaab", "abcaabcb", "bacbbaca", "cabbacabbc", "aabcaab"]
        let scan = SecretScan(keys.map { Array($0.utf8) })
        var random = SplitMix64(seed: 2026)
        func next() -> UInt64 { random.next() }

        // When 4,000 bodies of 0 to 40 bytes of that alphabet, many holding a key or most of one, are searched
        var found = 0
        for _ in 0..<4000 {
            var body = (0..<Int(next() % 41)).map { _ in [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "c")][Int(next() % 3)] }
            if next() % 3 == 0, !body.isEmpty {
                let key = Array(keys[Int(next() % UInt64(keys.count))].utf8)
                let at = Int(next() % UInt64(body.count))
                body.insert(contentsOf: key.prefix(key.count - Int(next() % 2)), at: at)
            }
            let expected = keys.contains { key in
                let key = Array(key.utf8)
                return body.count >= key.count && (0...(body.count - key.count)).contains { Array(body[$0..<($0 + key.count)]) == key }
            }
            found += expected ? 1 : 0

            // Then the scan says a key is there exactly when one is
            #expect(body.withUnsafeBytes { scan.occurs(in: $0) } == expected, "\(String(decoding: body, as: UTF8.self))")
        }
        #expect(found > 500)
        // And a scan for no keys finds none
        #expect(Data("abcaab".utf8).withUnsafeBytes { SecretScan([]).occurs(in: $0) } == false)
    }

    @Test("The search for secret field names finds a name ending in a stem exactly where a JSON object has one, and every field the walk redacts")
    func fieldNameScanFindsEveryNameTheWalkRedacts() throws {
        // Given names of two to six letters (stems of one to four: a name's last four letters, all of it when shorter)
        let names: Set<String> = ["abba", "bab", "cbcbab", "ca"]
        let fields = JSONFields(names)
        var random = SplitMix64(seed: 1127)
        func next() -> UInt64 { random.next() }
        func word(_ alphabet: String, upTo length: UInt64) -> String {
            let letters = Array(alphabet)
            return String((0..<Int(next() % (length + 1))).map { _ in letters[Int(next() % UInt64(letters.count))] })
        }
        let stems = Set(names.map { JSONFields.normalized($0).suffix(4) }.map(Array.init))

        // When 4,000 JSON objects of up to four fields are searched, their names of those letters in both cases with
        // `_` and `-`, spaces around the colons, and values that may hold a colon, a quote or another object
        var found = 0
        for _ in 0..<4000 {
            var keys: [String] = []
            var members: [String] = []
            for _ in 0..<Int(next() % 5) {
                // A third of the names are one of the names, in any case, split by `_` or `-`, after other letters
                var key = word("abcABC_-", upTo: 8)
                if next() % 3 == 0 {
                    let name = names.sorted()[Int(next() % UInt64(names.count))]
                    key = word("abc_", upTo: 2) + name.map { letter in
                        let spelled = next() % 2 == 0 ? letter.uppercased() : String(letter)
                        return spelled + ["", "", "_", "-"][Int(next() % 4)]
                    }.joined()
                }
                keys.append(key)
                let value: String = switch next() % 4 {
                case 0: "\"" + word("abc:\\\" ", upTo: 6).replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "\"", with: "\\\"") + "\""
                case 1: "{\"" + word("abc", upTo: 3) + "\" :\"x\"}"
                default: String(next() % 100)
                }
                members.append("\"\(key)\"" + [" ", "", "\n "][Int(next() % 3)] + ":" + [" ", ""][Int(next() % 2)] + value)
            }
            let body = Data(("{" + members.joined(separator: ",") + "}").utf8)
            let expected = keys.contains { key in
                let name = JSONFields.normalized(key)
                return !name.isEmpty && stems.contains(Array(name.suffix(4)))
            }
            let occurs = body.withUnsafeBytes { fields.scan.occurs(in: $0) }
            found += expected ? 1 : 0

            // Then it finds a stem where a name ends in one (values' own colons may be found too: only more walks)
            if expected { #expect(occurs, "\(String(decoding: body, as: UTF8.self))") }
            // And every body the walk redacts a field of was found
            if !fields.values(in: body).isEmpty { #expect(occurs, "\(String(decoding: body, as: UTF8.self))") }
        }
        #expect(found > 300 && found < 3700)
        // And a search for no names finds none; nor a stem that ends no name (`abba` as a value)
        #expect(Data(#"{"abba":1}"#.utf8).withUnsafeBytes { JSONFields([]).scan.occurs(in: $0) } == false)
        #expect(Data(#"{"x":"abba"}"#.utf8).withUnsafeBytes { fields.scan.occurs(in: $0) } == false)
    }

    @Test("The setup steps' kiosk proxy env names the proxy's own port and host when they are not the defaults")
    func proxyGuideEnvironment() {
        let downloads = ProxyGuide.Downloads(pem: "/ca.pem", der: "/ca.crt", profile: nil)
        #expect(ProxyGuide(language: .english, proxy: "127.0.0.1:8888", downloads: downloads).environmentCommand == "kiosk proxy env")
        #expect(ProxyGuide(language: .english, proxy: "127.0.0.1:45007", downloads: downloads).environmentCommand
            == "kiosk proxy env --port 45007")
        #expect(ProxyGuide(language: .english, proxy: "[::1]:9000", downloads: downloads).environmentCommand
            == "kiosk proxy env --port 9000 --host ::1")
    }

    @Test("The setup steps of a proxy on loopback say first that a phone cannot reach it, and how to start one it can")
    func proxyGuideLoopback() {
        let downloads = ProxyGuide.Downloads(pem: "/ca.pem", der: "/ca.crt", profile: nil)
        for proxy in ["127.0.0.1:8888", "[::1]:9000", "localhost:8888"] {
            let guide = ProxyGuide(language: .english, proxy: proxy, downloads: downloads)
            #expect(guide.loopbackNote != nil, "\(proxy)")
            #expect(guide.rendered().rendered.contains("--host 0.0.0.0 --proxy-auth"), "\(proxy)")
        }
        #expect(ProxyGuide(language: .english, proxy: "192.168.1.4:8888", downloads: downloads).loopbackNote == nil)
        // (One bound to every address, reached at 127.0.0.1 by a browser on its machine, is reachable: no note)
        #expect(ProxyGuide(language: .english, proxy: "127.0.0.1:8888", downloads: downloads, boundHost: "0.0.0.0").loopbackNote == nil)
    }

    @Test("A JSON body's secret fields are redacted under any spelling, in any nesting, and nothing else is changed",
          arguments: [
            (#"{"user":"ann","password":"hunter2"}"#, #"{"user":"ann","password":"<redacted>"}"#),
            (#"{"access_token" : "a.b.c", "expires_in": 3600, "refreshToken":"r\"1"}"#,
             #"{"access_token" : "<redacted>", "expires_in": 3600, "refreshToken":"<redacted>"}"#),
            (#"[{"auth":{"API_KEY":"k1","apiKey":"k2"}}]"#, #"[{"auth":{"API_KEY":"<redacted>","apiKey":"<redacted>"}}]"#),
            // A name found however it is cased and split, alone in the body: its last letters are looked for as names are read
            (#"{"API_KEY":"k1"}"#, #"{"API_KEY":"<redacted>"}"#),
            (#"{"Api-Key" : "k2", "n": 1}"#, #"{"Api-Key" : "<redacted>", "n": 1}"#),
            (#"{"aPiKeY":"k3"}"#, #"{"aPiKeY":"<redacted>"}"#),
            (#"{"CLIENT_sEcReT":"s1"}"#, #"{"CLIENT_sEcReT":"<redacted>"}"#),
            // A name whose last word says it holds a secret, as a header's does; a page's cursor token is no secret
            (#"{"current_password":"p1","new_password":"p2","githubToken":"t1","db_secret":"s2","nextPageToken":"c1"}"#,
             #"{"current_password":"<redacted>","new_password":"<redacted>","githubToken":"<redacted>","db_secret":"<redacted>","nextPageToken":"c1"}"#),
            // Ordinary data under names that are secrets only in a query; a secret's name as a value; a number
            (#"{"key":"id-1","hash":"abc","note":"password","token":42}"#, #"{"key":"id-1","hash":"abc","note":"password","token":42}"#),
            // A body cut short inside a secret value is left as it is: nothing whole to replace
            (#"{"password":"hun"#, #"{"password":"hun"#),
            // An echo service's copy of the request's credential headers, and the other names logins and tokens go by
            (#"{"headers":{"Authorization":"Bearer b1","Cookie":"sid=c1","X-Api-Key":"k1","Accept":"*/*"}}"#,
             #"{"headers":{"Authorization":"<redacted>","Cookie":"<redacted>","X-Api-Key":"<redacted>","Accept":"*/*"}}"#),
            (#"{"passwd":"p1","secret":"s1","auth":"a1","session_token":"t1","private_key":"k1","pin_code":"1234"}"#,
             #"{"passwd":"<redacted>","secret":"<redacted>","auth":"<redacted>","session_token":"<redacted>","private_key":"<redacted>","pin_code":"1234"}"#),
            // A JWT and a session id are secrets; an error's code and a session's description are data
            (#"{"jwt":"j1","session_id":"s1","code":"NOT_FOUND","session":"spring","Private-Token":"g1","X-CSRF-Token":"c1"}"#,
             #"{"jwt":"<redacted>","session_id":"<redacted>","code":"NOT_FOUND","session":"spring","Private-Token":"<redacted>","X-CSRF-Token":"<redacted>"}"#),
            // A list under a secret's name is the secret's, each string in it (names and numbers kept); an object under one
            // is more often a schema's description of the field than the secret: kept
            (#"{"password":["SEKRIT24", "x", [1, {"k":"v2"}]],"after":"kept","api_key":{"type":"string"}}"#,
             #"{"password":["<redacted>", "<redacted>", [1, {"k":"<redacted>"}]],"after":"kept","api_key":{"type":"string"}}"#),
            // A line feed inside a string (not JSON, but some servers write it) does not put the quotes after it out of step
            ("{\"note\":\"a\nb\",\"access_token\":\"T0KEN123\"}", "{\"note\":\"a\nb\",\"access_token\":\"<redacted>\"}"),
            // A name written with escapes is the name every parser reads, whichever letters are escaped, even the last four
            (#"{"p\u0061ssword":"p1","access_t\u006Fken":"t1","note\/path":"https:\/\/x"}"#,
             #"{"p\u0061ssword":"<redacted>","access_t\u006Fken":"<redacted>","note\/path":"https:\/\/x"}"#),
          ])
    func redactsJSONBodies(body: String, expected: String) {
        let redacted = Redactor.standard.redactBody(Data(body.utf8), contentType: "application/json; charset=utf-8")
        #expect(String(decoding: redacted, as: UTF8.self) == expected)
        // And so is text, which carries JSON without saying so (a beacon's text/plain, a page's state), and a body that
        // starts as JSON does whatever its label: none, bytes, a form's (Python's urlopen(url, data=json.dumps(…)))
        for type in ["text/plain;charset=UTF-8", nil, "application/octet-stream", "application/x-www-form-urlencoded", "text/html"] {
            #expect(String(decoding: Redactor.standard.redactBody(Data(body.utf8), contentType: type), as: UTF8.self) == expected,
                    "\(type ?? "no type")")
        }
        // But not bytes that do not start as JSON, nor a form
        let bytes = Data("GIF89a".utf8) + Data(body.utf8)
        #expect(Redactor.standard.redactBody(bytes, contentType: "application/octet-stream") == bytes)
        #expect(Redactor.standard.redactBody(bytes, contentType: nil) == bytes)
    }

    @Test("Header names written with underscores for hyphens name the same secrets", arguments: [
        "access_token", "client_secret", "X_Auth_Token", "X_API_KEY", "Api_Key", "x_my_token",
    ])
    func underscoredSecretHeaders(name: String) {
        // Given a request sending a credential under the name with underscores
        let fields: HTTPHeaderFields = [name: "value-1234567", "Accept": "*/*"]
        // When its fields are redacted
        // Then the value is hidden, as under the hyphenated name
        #expect(Redactor.standard.redact(fields)[name] == Redactor.placeholder)
        #expect(Redactor.standard.credentials(in: fields, url: URL(string: "http://app.test/")!).contains("value-1234567"))
    }

    @Test("An event stream's JSON events are redacted, a stray quote in the text around them (on its line) hiding none")
    func redactsEventStreams() {
        // Given a token stream as a server sends it: events of JSON data, a comment with an unpaired quote, JSON as text
        let stream = """
            : the server said "hello
            event: token
            data: {"n":0,"access_token":"SSESECRETTOKEN0"}

            data: {"n":1, "access_token": "SSESECRETTOKEN1", "note": "a \\"quoted\\" word"}

            """
        // When it is redacted as an event stream
        let redacted = String(decoding: Redactor.standard.redactBody(Data(stream.utf8), contentType: "text/event-stream"), as: UTF8.self)
        // Then each event's token is hidden, the rest kept as it was
        #expect(!redacted.contains("SSESECRETTOKEN"), "\(redacted)")
        #expect(redacted.contains(#"data: {"n":0,"access_token":"<redacted>"}"#) && redacted.contains(#": the server said "hello"#), "\(redacted)")
        #expect(redacted.contains(#""note": "a \"quoted\" word""#), "\(redacted)")
    }

    @Test("A file failure is said in the system's words, or by what the path shows, never Foundation's error domains")
    func fileReasons() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-file-reason-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        // A folder wanted under a file
        let under = file.appendingPathComponent("sub")
        let made = #expect(throws: (any Error).self) { try FileManager.default.createDirectory(at: under, withIntermediateDirectories: true) }
        #expect(KioskError.fileReason(try #require(made), path: under.path) == "\(file.path) is a file, not a folder")
        // A file that is not there
        let missing = folder.appendingPathComponent("missing")
        let absent = #expect(throws: (any Error).self) { try Data(contentsOf: missing) }
        #expect(KioskError.fileReason(try #require(absent), path: missing.path) == "No such file or directory")
        // A folder read as a file
        let read = #expect(throws: (any Error).self) { try Data(contentsOf: folder) }
        let reason = KioskError.fileReason(try #require(read), path: folder.path)
        #expect(!reason.contains("NSCocoaErrorDomain") && !reason.contains("could not be completed"), "\(reason)")
    }

    @Test("A header whose name ends in a secret's word is redacted, off the lists too, and its value hidden where it is echoed; ordinary names ending alike are kept",
          arguments: [("X-Secret", true), ("X-Client-Secret", true), ("CF-Access-Client-Secret", true), ("X-Auth-Password", true),
                      ("X-Request-Signature", true), ("X-Shop-Api-Key", true), ("X-My-Token", true), ("X-Amz-Credential", true),
                      ("Sec-WebSocket-Key", false), ("Idempotency-Key", false), ("X-Token-Expires", false), ("Secret", true),
                      ("X-Secretary", false), ("Ocp-Apim-Subscription-Key", true), ("X-Auth", true), ("Authentication", true),
                      ("X-Supabase-Auth", true), ("X-Session-Id", true), ("DPoP", true), ("X-Firebase-AppCheck", true),
                      ("X-Author", false), ("X-Request-Id", false), ("X-Authorization", true), ("X-Secret-Key", true),
                      ("X-Private-Key", true), ("X-Access-Key", true), ("X-Master-Key", true), ("X-RapidAPI-Key", true),
                      ("X-Consumer-Key", true), ("X-Client-Key", true), ("X-Upload-Key", true), ("X-Key", true),
                      ("X-Hub-Signature-256", true), ("X-CSRFToken", true), ("X-AccessKey", true), ("X-Cache-Key", false),
                      ("X-Idempotency-Key", false), ("X-Monkey", false), ("Keep-Alive", false), ("X-Public-Key", false),
                      ("Access-Control-Allow-Credentials", false), ("Surrogate-Key", false), ("X-Tenant-Key", false),
                      ("Key", true), ("X_Hub_Signature_256", true)])
    func redactsHeadersNamedAsSecrets(name: String, secret: Bool) {
        // Given a request sending a value under that name
        let fields: HTTPHeaderFields = [name: "value-1234567", "Accept": "*/*"]
        // When its fields are redacted, and the values to hide elsewhere are taken from it
        let redacted = Redactor.standard.redact(fields)
        let hidden = Redactor.standard.credentials(in: fields, url: URL(string: "http://app.test/")!)
        // Then a secret's name loses its value, everywhere, and another keeps it
        #expect(redacted[name] == (secret ? Redactor.placeholder : "value-1234567"))
        #expect(hidden.contains("value-1234567") == secret)
        #expect(redacted["Accept"] == "*/*")
    }

    @Test("Secrets a body's text spells out are hidden: a key in an address's query or fragment, however short, after `;` or Go's \\u0026, a text form's token, a JSON Web Token under any name; ordinary text and pictures are kept",
          arguments: [
            (#"{"next":"http://a.example/?api_key=BODYURL90&x=1"}"#, "application/json", #"{"next":"http://a.example/?api_key=<redacted>&x=1"}"#),
            (#"{"link":"https://a.example/cb#access_token=FRAG91&state=s"}"#, "application/json", #"{"link":"https://a.example/cb#access_token=<redacted>&state=s"}"#),
            (#"{"path":"/echo?token=ABCDF"}"#, "application/json", #"{"path":"/echo?token=<redacted>"}"#),
            (#"{"u":"https:\/\/a.example\/?x=1\u0026apikey=GOAMP7"}"#, "application/json", #"{"u":"https:\/\/a.example\/?x=1\u0026apikey=<redacted>"}"#),
            ("x=1;api_key=SEMI39", "text/plain", "x=1;api_key=<redacted>"),
            ("token=PLAINTOKEN46", "text/plain", "token=<redacted>"),
            (#"{"data":"token=PLAINTOKEN46"}"#, "application/json", #"{"data":"token=<redacted>"}"#),
            ("password=p;ss&x=1", "text/plain", "password=<redacted>&x=1"),
            (#"<a href="/logout?session=S1">out</a><script src="/app.js?ts=1"></script>"#, "text/html", #"<a href="/logout?session=S1">out</a><script src="/app.js?ts=1"></script>"#),
            ("n&&(this.token=e);u.password=t;fetch('/a?key=1')", "application/javascript", "n&&(this.token=e);u.password=t;fetch('/a?key=1')"),
            (#"{"data":"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJKV1RPTkxZMzAifQ.JWTONLYSIG30abcdefghijk"}"#, "application/json", #"{"data":"<redacted>"}"#),
            ("Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. was sent", "text/plain", "Bearer <redacted> was sent"),
            (#"{"q":"see code=42; key ideas","Jeyes":"eyJust a word"}"#, "application/json", #"{"q":"see code=42; key ideas","Jeyes":"eyJust a word"}"#),
            ("?api_key=PICTURE", "image/png", "?api_key=PICTURE"),
          ])
    func redactsSecretsWrittenInText(body: String, type: String, expected: String) {
        // (An HTML page or a script is not read so: its own code reads the same, and must stay as it is.)
        // Given a body of that type holding it
        // When it is redacted for the log
        let redacted = String(decoding: Redactor.standard.redactBody(Data(body.utf8), contentType: type), as: UTF8.self)
        // Then the secret is replaced where it stands, the rest kept as written
        #expect(redacted == expected)
    }

    @Test("A query item after `;`, or named with a control character, is hidden in a URL as after `&`, each separator kept")
    func redactsOddQuerySpellings() {
        // Given URLs spelling a key's item in ways some servers still read
        let urls = ["http://app.test/a?x=1;api_key=SEMI39&y=2", "http://app.test/a?apikey%00=SECRETNUL22&y=2"]
        // When they are redacted
        let redacted = urls.map { Redactor.standard.redact(URL(string: $0)!) }
        // Then the values are hidden, and the rest is as written
        #expect(redacted == ["http://app.test/a?x=1;api_key=<redacted>&y=2", "http://app.test/a?apikey%00=<redacted>&y=2"])
        // And a `;` inside a secret's value does not show its tail
        #expect(Redactor.standard.redact(URL(string: "http://app.test/a?password=p;ss&y=2")!) == "http://app.test/a?password=<redacted>&y=2")
    }

    @Test("A plain-text form's secret, hidden in the request's record, is hidden where an upstream echoes it too")
    func plainTextFormSecretsHiddenInEchoes() {
        // Given a beacon's body sent as plain text, and an answer echoing it in a JSON string
        let values = Redactor.standard.credentials(inBody: Data("token=PLAINTOKEN46&x=1".utf8), contentType: "text/plain;charset=UTF-8")
        // When the answer is scrubbed by a redactor hiding what the request sent
        let echoed = Redactor.standard.hiding(values).redactBody(Data(#"{"got":"you sent PLAINTOKEN46"}"#.utf8), contentType: "application/json")
        // Then the value is gone from it
        #expect(values == ["PLAINTOKEN46"])
        #expect(String(decoding: echoed, as: UTF8.self) == #"{"got":"you sent <redacted>"}"#)
    }

    @Test("A signature header is a secret but no identity however its name is spelt; a credential key is both")
    func signaturesAreNoIdentity() {
        #expect(!Redactor.isIdentityField("x-hub-signature-256") && !Redactor.isIdentityField("x_hub_signature_256"))
        #expect(Redactor.isIdentityField("x-secret-key") && !Redactor.isIdentityField("access-control-allow-credentials"))
    }

    @Test("A bearer token sent as a WebSocket subprotocol (Kubernetes' form, or a JWT alone) is hidden, the other subprotocols kept")
    func redactsTokensInSubprotocols() {
        // Given a WebSocket handshake offering a token among its subprotocols
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLWhlcmU"
        let fields: HTTPHeaderFields = ["Sec-WebSocket-Protocol": "base64url.bearer.authorization.k8s.io.SUBPROTOTOKEN42, v4.channel.k8s.io, \(jwt)"]
        // When its fields are redacted, and the values to hide elsewhere are taken from it
        let redacted = Redactor.standard.redact(fields)["Sec-WebSocket-Protocol"] ?? ""
        let hidden = Redactor.standard.credentials(in: fields, url: URL(string: "http://app.test/")!)
        // Then the token's items lose their secret and keep what says what they are; the others are kept as sent
        #expect(redacted == "base64url.bearer.authorization.k8s.io.<redacted>, v4.channel.k8s.io, <redacted>", "\(redacted)")
        #expect(hidden.contains("base64url.bearer.authorization.k8s.io.SUBPROTOTOKEN42") && hidden.contains("SUBPROTOTOKEN42")
                && hidden.contains(jwt), "\(hidden)")
        // And the server's answer naming the protocol it chose hides it as well
        #expect(Redactor.standard.redact(["Sec-WebSocket-Protocol": jwt])["Sec-WebSocket-Protocol"] == "<redacted>")
    }

    @Test("Redaction replaces credential headers, case-insensitively")
    func redactsHeaders() {
        let headers: HTTPHeaderFields = ["authorization": "Bearer x", "Cookie": "a=b", "Accept": "application/json"]
        let redacted = Redactor.standard.redact(headers)
        #expect(redacted["Authorization"] == Redactor.placeholder)
        #expect(redacted["cookie"] == Redactor.placeholder)
        #expect(redacted["accept"] == "application/json")
        // And a URL-valued field's secret query items: the previous page's address in Referer, a redirect's Location
        let addresses: HTTPHeaderFields = ["Referer": "http://app.test/page?token=t1&q=2", "Location": "/next?apikey=k1"]
        let hidden = Redactor.standard.redact(addresses)
        #expect(hidden["referer"] == "http://app.test/page?token=<redacted>&q=2")
        #expect(hidden["location"] == "/next?apikey=<redacted>")
        // And a fragment written as pairs, where an OAuth implicit grant's redirect carries its token; any other fragment kept
        let fragments: HTTPHeaderFields = ["Location": "https://app.test/cb#access_token=t1&token_type=bearer&state=s",
                                           "Content-Location": "/docs?q=1#section-2", "Referer": "https://a.test/?token=t2#id_token=t3"]
        let hiddenFragments = Redactor.standard.redact(fragments)
        #expect(hiddenFragments["location"] == "https://app.test/cb#access_token=<redacted>&token_type=bearer&state=s")
        #expect(hiddenFragments["content-location"] == "/docs?q=1#section-2")
        #expect(hiddenFragments["referer"] == "https://a.test/?token=<redacted>#id_token=<redacted>")
        // And a redirect's password, a Refresh's address and each address a Link lists, the rest of each field kept
        let more: HTTPHeaderFields = ["Location": "http://admin:pass-word-1@a.test/z", "Refresh": "0; url=/x?token=t4&page=2",
                                      "Link": #"</n?sig=s5>; rel="next", </p?page=1>; rel="prev""#]
        let hiddenMore = Redactor.standard.redact(more)
        #expect(hiddenMore["location"] == "http://admin:<redacted>@a.test/z")
        #expect(hiddenMore["refresh"] == "0; url=/x?token=<redacted>&page=2")
        #expect(hiddenMore["link"] == #"</n?sig=<redacted>>; rel="next", </p?page=1>; rel="prev""#)
    }

    @Test("A multipart form's secret fields are redacted, its files and other fields kept byte for byte; a body cut inside one is read as far as it goes")
    func redactsMultipartForms() {
        // Given a form as curl -F sends it: a user, a password, a file whose field is named token, the closing boundary
        let form = "--XyZ\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nann\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nhunter2-secret\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"token\"; filename=\"t.txt\"\r\nContent-Type: text/plain\r\n\r\nfile body\r\n"
            + "--XyZ--\r\n"
        let type = "multipart/form-data; boundary=XyZ"
        // When it is redacted, then the password's content alone is replaced
        let redacted = String(decoding: Redactor.standard.redactBody(Data(form.utf8), contentType: type), as: UTF8.self)
        #expect(redacted == form.replacingOccurrences(of: "hunter2-secret", with: "<redacted>"))
        // And its value is among the credentials to hide elsewhere (an echo of the form); the file's is not
        #expect(Redactor.standard.credentials(inBody: Data(form.utf8), contentType: type) == ["hunter2-secret"])
        // And a quoted boundary is read too; a body cut inside the password hides what came of it
        let cut = String(form.prefix(form.distance(from: form.startIndex, to: form.range(of: "hunter2")!.upperBound)))
        let cutRedacted = Redactor.standard.redactBody(Data(cut.utf8), contentType: "multipart/form-data; boundary=\"XyZ\"")
        #expect(!String(decoding: cutRedacted, as: UTF8.self).contains("hunter2"))
    }

    @Test("The credentials a body sends are its form's, JSON's and multipart form's secret values, decoded, at least 6 characters long")
    func bodyCredentials() {
        let redactor = Redactor.standard
        #expect(redactor.credentials(inBody: Data("user=ann&password=p%40ss+word&pin=1".utf8),
                                     contentType: "application/x-www-form-urlencoded") == ["p@ss word"])
        #expect(redactor.credentials(inBody: Data(#"{"login":{"password":"secret-1"},"token":"short"}"#.utf8),
                                     contentType: "application/json") == ["secret-1"])
        // (JSON sent as text, or under no label or a wrong one, is read as JSON; bytes that do not start as JSON are not)
        #expect(redactor.credentials(inBody: Data(#"{"password":"secret-1"}"#.utf8), contentType: "text/plain") == ["secret-1"])
        #expect(redactor.credentials(inBody: Data(#"{"password":"secret-1"}"#.utf8), contentType: "application/octet-stream") == ["secret-1"])
        #expect(redactor.credentials(inBody: Data(#" {"password":"secret-1"}"#.utf8), contentType: nil) == ["secret-1"])
        #expect(redactor.credentials(inBody: Data(#"x{"password":"secret-1"}"#.utf8), contentType: "application/octet-stream").isEmpty)
    }

    @Test("The standard redaction hides the query items apps put tokens, keys and signatures under, and the key headers of the big clouds")
    func standardRedactionCoversCommonTokens() {
        // Given URLs an app might send through the proxy: a token, Google's key, OAuth's tokens, a pre-signed S3 URL
        let cases = [
            "https://a.test/feed?token=t1&page=2": "https://a.test/feed?token=<redacted>&page=2",
            "https://maps.test/api?key=AIzaS&q=x": "https://maps.test/api?key=<redacted>&q=x",
            "https://a.test/cb?refresh_token=r&id_token=i": "https://a.test/cb?refresh_token=<redacted>&id_token=<redacted>",
            "https://b.test/o?X-Amz-Credential=c&X-Amz-Signature=s&X-Amz-Security-Token=t&X-Amz-Expires=60":
                "https://b.test/o?X-Amz-Credential=<redacted>&X-Amz-Signature=<redacted>&X-Amz-Security-Token=<redacted>&X-Amz-Expires=60",
            "https://c.test/img?sig=abc&w=100": "https://c.test/img?sig=<redacted>&w=100",
            // An OAuth redirect's authorization code, a PKCE verifier, a JWT and session ids in a query
            "https://app.test/cb?code=4%2F0Ab&state=xyz": "https://app.test/cb?code=<redacted>&state=xyz",
            "https://e.test/?jwt=eyJ.a.b&session=s1&sessionid=s2&session_id=s3&code_verifier=v":
                "https://e.test/?jwt=<redacted>&session=<redacted>&sessionid=<redacted>&session_id=<redacted>&code_verifier=<redacted>",
            // A form's array and map fields, and an escaped name
            "https://d.test/?token%5B%5D=a&user%5Bpassword%5D=b&%74oken=c&list%5B%5D=d":
                "https://d.test/?token%5B%5D=<redacted>&user%5Bpassword%5D=<redacted>&%74oken=<redacted>&list%5B%5D=d",
        ]
        // Then each secret is replaced and the rest kept
        for (url, expected) in cases {
            #expect(Redactor.standard.redact(URL(string: url)!) == expected, "\(url)")
        }
        // And the key headers of Azure and Google are hidden too
        let headers: HTTPHeaderFields = ["api-key": "k1", "X-Goog-Api-Key": "k2", "X-Amz-Security-Token": "k3", "Accept": "*/*",
                                         "X-Access-Token": "k4", "x-session-token": "k5", "X-Refresh-Token": "k6",
                                         "Private-Token": "glpat-1", "X-CSRF-Token": "c1", "X-XSRF-TOKEN": "c2"]
        let redacted = Redactor.standard.redact(headers)
        #expect(redacted["api-key"] == Redactor.placeholder && redacted["x-goog-api-key"] == Redactor.placeholder)
        #expect(redacted["x-amz-security-token"] == Redactor.placeholder && redacted["accept"] == "*/*")
        // And the access, session and refresh token headers many APIs use
        #expect(["x-access-token", "x-session-token", "x-refresh-token"].allSatisfy { redacted[$0] == Redactor.placeholder })
        // And GitLab's token header and the CSRF tokens web frameworks send
        #expect(["private-token", "x-csrf-token", "x-xsrf-token"].allSatisfy { redacted[$0] == Redactor.placeholder })
    }

    @Test("Field names match whatever the case of their letters, and only then")
    func fieldNamesMatchWithoutCase() {
        // Given names that differ in case alone, and ones that differ otherwise
        let same = [("Content-Type", "content-type"), ("ETAG", "ETag"), ("x-a_1", "X-A_1"), ("", "")]
        let different = [("Content-Type", "Content-Typ"), ("ETag", "ETaf"), ("x-a", "x-A "), ("@", "`"), ("[", "{"), ("é", "É")]
        // Then the first are one name and the others are not, both ways round
        for (a, b) in same { #expect(HTTPHeaderFields.sameName(a, b) && HTTPHeaderFields.sameName(b, a), "\(a) \(b)") }
        for (a, b) in different { #expect(!HTTPHeaderFields.sameName(a, b) && !HTTPHeaderFields.sameName(b, a), "\(a) \(b)") }
        // And lookups use it
        var headers: HTTPHeaderFields = ["Vary": "Accept", "vary": "Cookie"]
        #expect(headers.values(for: "VARY") == ["Accept", "Cookie"])
        headers.removeAll(named: "vArY")
        #expect(headers.fields.isEmpty)
    }

    @Test("A page request's cache key ignores filter order, query case and surrounding spaces")
    func cacheKeyIsCanonical() {
        let a = PageRequest(source: .rickandmorty, page: 2, query: "  Rick ", filters: ["status": "alive", "gender": "male"])
        let b = PageRequest(source: .rickandmorty, page: 2, query: "rick", filters: ["gender": "male", "status": "alive"])
        #expect(a.cacheKey == b.cacheKey)
        #expect(a.cacheKey != PageRequest(source: .rickandmorty, page: 3).cacheKey)
        #expect(PageRequest(source: .nyt, query: "   ").query == nil)
    }

    @Test("Item details encode as a flat, typed JSON shape and round-trip")
    func itemDetailCoding() throws {
        let item = CatalogItem(source: .dogs, itemID: "rex", title: "Rex", subtitle: "Almost 3 years", summary: "Good dog",
                               imageURL: URL(string: "http://127.0.0.1/rex.png"),
                               detail: .dog(Dog(name: "Rex", description: "Good dog", age: 3, image: nil)))
        let data = try JSONEncoder().encode(item)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let detail = try #require(object["detail"] as? [String: Any])
        #expect(detail["type"] as? String == "dog")
        #expect(try JSONDecoder().decode(CatalogItem.self, from: data) == item)
        #expect(item.id == "dogs/rex")
    }

    @Test("Source names parse from what users type, and unknown names do not")
    func sourceNames() {
        #expect(SourceID(userInput: "Rick-and-Morty") == .rickandmorty)
        #expect(SourceID(userInput: "NYT") == .nyt)
        #expect(SourceID(userInput: "pokemon") == nil)
    }

    @Test("Rick and Morty status emoji follow the original app")
    func statusEmoji() {
        func character(_ status: String) -> RickAndMortyCharacter {
            RickAndMortyCharacter(status: status, species: "", type: "", gender: "", origin: .init(name: "", url: nil),
                                  location: .init(name: "", url: nil), episodes: [], created: "")
        }
        #expect(character("Alive").statusEmoji == "🕺")
        #expect(character("Dead").statusEmoji == "💀")
        #expect(character("unknown").statusEmoji == "?")
    }

    @Test("A record without a status was answered from the store unless it failed on the wire or was aborted at a breakpoint",
          arguments: [(CacheDecision.fresh, nil as String?, true), (.offline, "Offline: cannot connect to x", true),
                      (.fallback, "HTTP 503 from u", true), (.network, "Offline: cannot connect to x", false),
                      (.revalidated, "timed out", false), (.edited, "aborted at a breakpoint", false)])
    func answeredFromStore(decision: CacheDecision, error: String?, fromStore: Bool) {
        let record = RequestRecord(startedAt: Date(), source: nil, endpoint: "e", method: "GET", url: "http://x/", error: error,
                                   timings: RequestTimings(total: 0), decision: decision)
        #expect(record.isAnsweredFromStore == fromStore)
    }

    @Test("Errors say what happened in one line")
    func errorMessages() {
        #expect(KioskError.offline(host: "127.0.0.1").description == "Offline: cannot connect to 127.0.0.1")
        // A name that does not resolve and a refused connection say which, and are not called "offline"
        #expect(KioskError.offline(host: "x.test", reason: .unresolved).description == "Cannot connect to x.test: the name does not resolve (DNS)")
        #expect(KioskError.offline(host: "127.0.0.1", reason: .refused).description
            == "Cannot connect to 127.0.0.1: it refused the connection (nothing listens on that port)")
        #expect(KioskError.offline(host: "x.test", reason: .refused).isConnectivityFailure)
        // A connection nothing answered in time is not "no route": the host is down or a firewall drops it
        #expect(KioskError.offline(host: "x.test:443", reason: .noAnswer).description
            == "Cannot connect to x.test:443: it did not answer the connection in time (it is down, or a firewall drops it)")
        #expect(KioskError.malformedResponse(path: "results[3].name", message: "expected a string").description
            == "Malformed response at results[3].name: expected a string")
        #expect(KioskError.offline(host: "x").isConnectivityFailure)
        #expect(KioskError.httpStatus(503, url: "u").isRetryable)
        #expect(!KioskError.httpStatus(404, url: "u").isRetryable)
        #expect(KioskError.httpStatus(304, url: "u").description == "HTTP 304 Not Modified from u, though no stored copy was named for it to confirm")
        // A wait is said as a person says it, however long
        #expect([7, 119, 300, 7199, 7200, 172_799, 2_300_019_121].map { KioskError.rateLimited(url: "u", retryAfterSeconds: $0).description }
            == ["Rate limited by u; retry after 7 s", "Rate limited by u; retry after 119 s", "Rate limited by u; retry after 5 min",
                "Rate limited by u; retry after 120 min", "Rate limited by u; retry after 2 h", "Rate limited by u; retry after 48 h",
                "Rate limited by u; retry after 26621 days"])
    }
}

@Suite("Item ids")
struct ItemIDTests {
    @Test("A page leaves out an item whose id is too long to link, and says why among the skipped")
    func unlinkableIDs() {
        // Given items with an id at the limit and one byte over it
        func dog(_ id: String) -> CatalogItem {
            CatalogItem(source: .dogs, itemID: id, title: "Dog \(id.count)", subtitle: "", summary: "", imageURL: nil,
                        detail: .dog(Dog(name: "Dog", description: "", age: 1, image: nil)))
        }
        let fits = String(repeating: "a", count: CatalogItem.maximumIDLength)
        let tooLong = String(repeating: "b", count: CatalogItem.maximumIDLength + 1)
        // When a page is made of them
        let page = Page(request: PageRequest(source: .dogs), items: [dog(fits), dog(tooLong)])
        // Then only the linkable one is listed, and the other is reported with its title and the limit
        #expect(page.items.map(\.itemID) == [fits])
        #expect(page.skipped.count == 1)
        #expect(page.skipped.first?.message.contains("Dog \(tooLong.count)") == true)
        #expect(page.skipped.first?.message.contains("\(CatalogItem.maximumIDLength)") == true)
    }
}

@Suite("Addresses a person can open")
struct OpensInABrowserTests {
    @Test("Only http and https addresses whose host is outside the .invalid domain open in a browser", arguments: [
        ("https://www.nytimes.com/2025/10/21/a.html", true), ("http://127.0.0.1:8080/x", true), ("HTTP://Example.COM/", true),
        ("http://demo.invalid/svc/a.html", false), ("http://DEMO.INVALID./x", false), ("http://invalid/", false),
        ("ftp://example.com/a", false), ("javascript:alert(1)", false), ("http:///no-host", false),
    ])
    func opensInABrowser(_ text: String, _ opens: Bool) throws {
        // Given an address; Then whether it opens is by its scheme and host
        #expect(try #require(URL(string: text)).opensInABrowser == opens)
    }
}
