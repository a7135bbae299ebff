import Foundation

/// One dog of the bare-array document: `{ dogName, description, age, image }`.
struct DogDTO: Decodable {
    var dogName: String
    var description: String
    var age: Int
    var image: URL?

    enum CodingKeys: String, CodingKey {
        case dogName, description, age, image
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        dogName = try c.decode(String.self, forKey: .dogName)
        description = try c.lenientString(.description)
        // The age is the row's whole subtitle; inventing one would be showing wrong data, so it is required.
        age = try c.wholeNumber(.age)
        // "Almost -4 years" is no age: a negative one is as unreadable as a missing one.
        guard age >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .age, in: c, debugDescription: "expected an age of 0 or more, found \(age)")
        }
        image = try c.optionalURL(.image)
    }
}
