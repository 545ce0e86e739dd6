"""A minimal PNG decoder (8-bit RGB/RGBA, non-interlaced: what rsvg-convert writes), enough to
check that a rendered chart is not blank."""
import struct
import zlib


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(path):
    """Returns (width, height, rows), rows being lists of (r, g, b) tuples over white."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unsupported PNG {header}"
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(a, b, c)) & 0xFF
        prev = line
        pixels = []
        for x in range(width):
            p = line[x * bpp:(x + 1) * bpp]
            alpha = p[3] if bpp == 4 else 255
            # Composite over white so transparent areas read as background.
            pixels.append(tuple((v * alpha + 255 * (255 - alpha)) // 255 for v in p[:3]))
        rows.append(pixels)
    return width, height, rows


def ink(rows, white=245):
    """Fraction of pixels that are not (near) white."""
    total = sum(len(r) for r in rows)
    dark = sum(1 for r in rows for p in r if min(p) < white)
    return dark / total


def has_colour(rows, rgb, tolerance=24):
    """Number of pixels within `tolerance` of `rgb` on every channel."""
    return sum(1 for r in rows for p in r
               if all(abs(p[i] - rgb[i]) <= tolerance for i in range(3)))
