import Foundation
import KioskDemoUpstream
import Testing

@Suite("NYT Most Popular emulation")
struct NYTTests {
    @Test("every kind and period answers 20 complete articles with the kind's count field")
    func listsHaveTwentyCompleteArticles() async throws {
        try await withUpstream { upstream in
            var orders: Set<[Int]> = []
            var facetsSentAsEmptyString = false
            var emptyMedia = false
            var syndicationValues: Set<String> = []
            for kind in ["emailed", "viewed", "shared"] {
                for period in [1, 7, 30] {
                    // When that kind and period's list is asked for
                    let response = try await Client.get(upstream.nytURL("\(kind)/\(period).json"))

                    // Then it is 20 complete articles, in NYT's envelope, with the kind's own count field
                    #expect(response.status == 200)
                    // JSONSerialization turns both 1 and true into NSNumber, so look at the text.
                    let text = String(decoding: response.body, as: UTF8.self)
                    for value in ["1", "true"] where text.contains("\"approved_for_syndication\":\(value)") {
                        syndicationValues.insert(value)
                    }
                    let body = try response.object()
                    #expect(body["status"] as? String == "OK")
                    #expect((body["copyright"] as? String)?.contains("The New York Times Company") == true)
                    #expect(body["num_results"] as? Int == 20)
                    let results = try #require(body["results"] as? [[String: Any]])
                    #expect(results.count == 20)
                    orders.insert(results.compactMap { $0["id"] as? Int })
                    let countKey = ["emailed": "email_count", "viewed": "views", "shared": "share_count"][kind]!
                    for article in results {
                        for key in ["uri", "url", "id", "asset_id", "source", "published_date", "updated", "section",
                                    "subsection", "nytdsection", "adx_keywords", "column", "byline", "type", "title",
                                    "abstract", "des_facet", "org_facet", "per_facet", "geo_facet", "media", "eta_id", countKey] {
                            #expect(article[key] != nil, "missing \(key)")
                        }
                        #expect(article["column"] is NSNull)
                        #expect((article["byline"] as? String)?.hasPrefix("By ") == true)
                        #expect((article["url"] as? String)?.hasPrefix(upstream.baseURL.absoluteString) == true)
                        let published = try #require(article["published_date"] as? String)
                        #expect(published.count == 10)
                        let updated = try #require(article["updated"] as? String)
                        #expect(updated.count == 19)
                        for facet in ["des_facet", "org_facet", "per_facet", "geo_facet"] where article[facet] is String {
                            #expect(article[facet] as? String == "")
                            facetsSentAsEmptyString = true
                        }
                        let media = try #require(article["media"] as? [[String: Any]])
                        if media.isEmpty { emptyMedia = true }
                        for item in media {
                            let metadata = try #require(item["media-metadata"] as? [[String: Any]])
                            let sizes = metadata.map { "\($0["format"]!) \($0["width"]!)x\($0["height"]!)" }
                            #expect(sizes == ["Standard Thumbnail 75x75", "mediumThreeByTwo210 210x140",
                                              "mediumThreeByTwo440 440x293"])
                        }
                    }
                }
            }
            // The awkward shapes older real responses have must all appear somewhere.
            #expect(facetsSentAsEmptyString)
            #expect(emptyMedia)
            #expect(syndicationValues.count == 2, "approved_for_syndication should appear both as 1 and as true")
            #expect(orders.count == 9, "each kind/period combination ranks the pool differently")
        }
    }

    @Test("shared lists by channel answer 20 articles")
    func sharedByChannel() async throws {
        try await withUpstream { upstream in
            for channel in ["email", "facebook", "twitter"] {
                // When the list shared on that channel over 7 days is asked for
                let response = try await Client.get(upstream.nytURL("shared/7/\(channel).json"))
                // Then it holds 20 articles
                #expect(response.status == 200)
                #expect((try response.object()["results"] as? [Any])?.count == 20)
            }
        }
    }

    @Test("a missing or wrong api-key is answered 401 with NYT's fault body")
    func apiKeyIsChecked() async throws {
        try await withUpstream { upstream in
            // Given a URL without an api-key and one with a wrong key
            let missing = upstream.url("/svc/mostpopular/v2/viewed/1.json")
            let wrong = upstream.nytURL("viewed/1.json", key: "not-the-key")

            for url in [missing, wrong] {
                // When each is asked for
                let response = try await Client.get(url)
                // Then it is a 401 with NYT's fault body
                #expect(response.status == 401)
                let fault = try #require(try response.object()["fault"] as? [String: Any])
                #expect(fault["faultstring"] as? String == "Invalid ApiKey")
                #expect((fault["detail"] as? [String: Any])?["errorcode"] as? String == "oauth.v2.InvalidApiKey")
            }
        }
    }

    @Test("an unknown kind or period is 404")
    func badKindOrPeriod() async throws {
        try await withUpstream { upstream in
            for path in ["read/7.json", "viewed/2.json", "viewed/7", "shared/7/myspace.json"] {
                // When a kind, a period or a channel NYT does not have is asked for
                let response = try await Client.get(upstream.nytURL(path))
                // Then it is 404
                #expect(response.status == 404, "\(path)")
            }
        }
    }
}
