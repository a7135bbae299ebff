import KioskCore

/// Generated pictures: a symmetric 5×5 block pattern in flat colours, like the identicons code hosts
/// give users without a photo.
///
/// Everything derives from a hash of the picture's key, so one URL always yields the same bytes and
/// the variants of one Marvel thumbnail (same key, other size) show the same pattern. Flat colour
/// areas keep the PNGs to a few hundred bytes with the simple encoder.
enum Identicon {
    /// The PNG bytes of the picture for `key` at `width`×`height`; `placeholder` draws Marvel's grey
    /// "image not available" picture instead.
    static func png(key: String, width: Int, height: Int, placeholder: Bool = false) -> [UInt8] {
        var random = SplitMix64(seed: Hashing.fnv1a(key))
        let palette: [RGB]
        var cells = [[UInt8]](repeating: [UInt8](repeating: 0, count: 5), count: 5)
        if placeholder {
            palette = [RGB(red: 236, green: 236, blue: 236), RGB(red: 160, green: 160, blue: 160),
                       RGB(red: 200, green: 200, blue: 200)]
            // A hollow square: recognisably "no picture" and identical for every placeholder.
            for row in 0..<5 {
                for column in 0..<5 where row == 0 || row == 4 || column == 0 || column == 4 {
                    cells[row][column] = 1
                }
            }
            cells[2][2] = 2
        } else {
            let hue = random.unit() * 360
            palette = [
                hsl(hue: hue + 180, saturation: 0.25, lightness: 0.93),
                hsl(hue: hue, saturation: 0.55, lightness: 0.45),
                hsl(hue: hue + 40, saturation: 0.65, lightness: 0.62),
            ]
            for row in 0..<5 {
                for column in 0..<3 {
                    let value: UInt8 = switch random.int(in: 0...5) {
                    case 0, 1: 0
                    case 2, 3, 4: 1
                    default: 2
                    }
                    cells[row][column] = value
                    cells[row][4 - column] = value
                }
            }
        }

        let cell = max(1, min(width, height) * 4 / 25)
        let originX = (width - 5 * cell) / 2
        let originY = (height - 5 * cell) / 2
        let blankRow = [UInt8](repeating: 0, count: width)
        // One pixel row per pattern row, reused for every pixel row the cell covers.
        let patternRows: [[UInt8]] = cells.map { cellRow in
            var row = blankRow
            for column in 0..<5 where cellRow[column] != 0 {
                let start = originX + column * cell
                for x in start..<(start + cell) { row[x] = cellRow[column] }
            }
            return row
        }

        var indices: [UInt8] = []
        indices.reserveCapacity(width * height)
        for y in 0..<height {
            let patternRow = y - originY
            if patternRow >= 0, patternRow < 5 * cell {
                indices.append(contentsOf: patternRows[patternRow / cell])
            } else {
                indices.append(contentsOf: blankRow)
            }
        }
        return PNGEncoder.encode(width: width, height: height, palette: palette, indices: indices)
    }

    private static func hsl(hue: Double, saturation: Double, lightness: Double) -> RGB {
        let h = hue.truncatingRemainder(dividingBy: 360) / 60
        let chroma = (1 - abs(2 * lightness - 1)) * saturation
        let x = chroma * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
        let (r, g, b): (Double, Double, Double) = switch Int(h) {
        case 0: (chroma, x, 0)
        case 1: (x, chroma, 0)
        case 2: (0, chroma, x)
        case 3: (0, x, chroma)
        case 4: (x, 0, chroma)
        default: (chroma, 0, x)
        }
        let m = lightness - chroma / 2
        func channel(_ value: Double) -> UInt8 { UInt8(max(0, min(255, ((value + m) * 255).rounded()))) }
        return RGB(red: channel(r), green: channel(g), blue: channel(b))
    }
}
