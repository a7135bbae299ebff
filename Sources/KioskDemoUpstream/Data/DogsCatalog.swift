/// The dogs document: a bare JSON array of five dogs, like the jsonblob the original app read.
struct DogsCatalog: Sendable {
    let dogs: [DogRecord]

    static let imageSize = (width: 400, height: 300)

    static func build() -> DogsCatalog {
        DogsCatalog(dogs: [
            DogRecord(name: "Rex", description: "A loyal German Shepherd who has never missed a walk, rain or shine.", age: 5),
            DogRecord(name: "Bella", description: "A Beagle with a nose for snacks and a talent for escaping the yard.", age: 3),
            DogRecord(name: "Max", description: "A gentle Golden Retriever who greets every visitor with a toy.", age: 8),
            DogRecord(name: "Luna", description: "A Border Collie puppy who herds the cats when nobody is looking.", age: 1),
            DogRecord(name: "Charlie", description: "A senior Dachshund who prefers naps in the sun to long walks.", age: 11),
        ])
    }
}

/// One dog; its picture lives at `/images/dogs/<slug>.jpg`.
struct DogRecord: Sendable {
    let name: String
    let description: String
    let age: Int

    var imagePath: String { "/images/dogs/\(name.slug).jpg" }
}

/// Every catalog, built once on first use and shared by all servers in the process.
///
/// Data is independent of the server's address: URLs are stored as paths and made absolute when a
/// response is encoded, so several demo servers (tests run in parallel) share one copy.
struct DemoCatalog: Sendable {
    let nyt: NYTCatalog
    let marvel: MarvelCatalog
    let rickAndMorty: RickAndMortyCatalog
    let dogs: DogsCatalog

    static let shared = DemoCatalog(
        nyt: .build(), marvel: .build(), rickAndMorty: .build(), dogs: .build()
    )
}
