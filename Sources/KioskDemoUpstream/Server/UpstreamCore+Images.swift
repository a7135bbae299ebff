extension UpstreamCore {
    /// Every image URL in the data resolves here to a generated PNG of the size the URL implies;
    /// anything else is 404, as a CDN would answer.
    func image(path: String) -> Reply {
        guard let spec = Self.imageSpec(path: path) else { return .notFoundText }
        return cache.reply(for: "img|\(path)") {
            .png(Identicon.png(key: spec.key, width: spec.width, height: spec.height, placeholder: spec.placeholder))
        }
    }

    struct ImageSpec: Equatable {
        /// What the picture's pattern derives from: renditions of one picture share it.
        var key: String
        var width: Int
        var height: Int
        var placeholder = false
    }

    static func imageSpec(path: String) -> ImageSpec? {
        let catalog = DemoCatalog.shared
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let directory = String(path[..<slash])
        let file = path[path.index(after: slash)...]

        if path.hasPrefix("/images/nyt/") {
            // <directory>/<name>-<rendition>.jpg, where <name> is the directory's last component.
            guard catalog.nyt.imageDirectories.contains(directory), file.hasSuffix(".jpg") else { return nil }
            let name = directory.split(separator: "/").last.map(String.init) ?? ""
            for format in NYTCatalog.imageFormats where file == "\(name)-\(format.suffix).jpg" {
                return ImageSpec(key: directory, width: format.width, height: format.height)
            }
            return nil
        }
        if path.hasPrefix("/images/marvel/") {
            // <thumbnail.path>/<variant>.<extension>, or <thumbnail.path>.<extension> for full size.
            guard let dot = file.lastIndex(of: ".") else { return nil }
            let stem = String(file[..<dot])
            let placeholder = directory == MarvelCatalog.notAvailablePath
            if catalog.marvel.thumbnailPaths.contains(directory), let size = MarvelCatalog.imageVariants[stem] {
                return ImageSpec(key: directory, width: size.width, height: size.height, placeholder: placeholder)
            }
            let fullPath = directory + "/" + stem
            if catalog.marvel.thumbnailPaths.contains(fullPath), let size = MarvelCatalog.imageVariants["detail"] {
                return ImageSpec(key: fullPath, width: size.width, height: size.height,
                                 placeholder: fullPath == MarvelCatalog.notAvailablePath)
            }
            return nil
        }
        if path.hasPrefix("/api/character/avatar/") {
            guard file.hasSuffix(".jpeg"), let id = Int(file.dropLast(5)),
                  (1...RickAndMortyCatalog.count).contains(id) else { return nil }
            return ImageSpec(key: "rickandmorty/\(id)", width: 300, height: 300)
        }
        if path.hasPrefix("/images/dogs/") {
            guard catalog.dogs.dogs.contains(where: { $0.imagePath == path }) else { return nil }
            return ImageSpec(key: path, width: DogsCatalog.imageSize.width, height: DogsCatalog.imageSize.height)
        }
        return nil
    }
}
