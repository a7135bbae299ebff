#!/usr/bin/env python3
"""Draws Kiosk's app icons (a white "K" on the accent blue) as PNG files in
Sources/KioskWeb/Resources/, with the standard library only. Run it again after changing the drawing;
the PNGs are committed, so building Kiosk never needs this script.

  any:      the K on a rounded square, transparent corners (home screens that do not mask).
  maskable: the K inside the central 80 % safe zone on a full-bleed square (Android masks it).
"""

import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "Sources" / "KioskWeb" / "Resources"
ACCENT = (11, 87, 208)
WHITE = (255, 255, 255)
SAMPLES = 4  # supersampling per axis, for smooth edges


def inside_polygon(x, y, points):
    hit = False
    j = len(points) - 1
    for i, (xi, yi) in enumerate(points):
        xj, yj = points[j]
        if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
            hit = not hit
        j = i
    return hit


def glyph(u, v):
    """Whether (u, v) in the unit square belongs to the K (white)."""
    stem = 0.24 <= u <= 0.40 and 0.20 <= v <= 0.80
    upper = inside_polygon(u, v, [(0.36, 0.52), (0.62, 0.20), (0.82, 0.20), (0.48, 0.60)])
    lower = inside_polygon(u, v, [(0.38, 0.50), (0.56, 0.40), (0.84, 0.80), (0.64, 0.80)])
    return stem or upper or lower


def rounded_square(u, v, radius):
    cx = min(max(u, radius), 1 - radius)
    cy = min(max(v, radius), 1 - radius)
    return (u - cx) ** 2 + (v - cy) ** 2 <= radius ** 2


def draw(size, maskable):
    rows = []
    scale = 0.8 if maskable else 1.0  # the maskable K stays inside the safe zone
    for y in range(size):
        row = bytearray([0])  # filter type 0
        for x in range(size):
            covered = 0
            inked = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    u = (x + (sx + 0.5) / SAMPLES) / size
                    v = (y + (sy + 0.5) / SAMPLES) / size
                    if maskable or rounded_square(u, v, 0.2):
                        covered += 1
                        gu = (u - 0.5) / scale + 0.5
                        gv = (v - 0.5) / scale + 0.5
                        if glyph(gu, gv):
                            inked += 1
            total = SAMPLES * SAMPLES
            alpha = covered / total
            mix = inked / covered if covered else 0
            color = [round(a + (b - a) * mix) for a, b in zip(ACCENT, WHITE)]
            row += bytes(color + [round(alpha * 255)])
        rows.append(bytes(row))
    return b"".join(rows)


def png(size, pixels):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixels, 9)) + chunk(b"IEND", b"")


def main():
    for name, size, maskable in [("icon-192.png", 192, False), ("icon-512.png", 512, False),
                                 ("icon-maskable-192.png", 192, True), ("icon-maskable-512.png", 512, True),
                                 ("apple-touch-icon.png", 180, True)]:
        (OUT / name).write_bytes(png(size, draw(size, maskable)))
        print(f"wrote {name}")


if __name__ == "__main__":
    main()
