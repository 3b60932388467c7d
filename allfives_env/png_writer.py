"""PNG encoding of uint8 images with ``zlib`` and ``struct`` alone (no Pillow).

:func:`png_bytes` encodes, :func:`write_png` saves; frames of :mod:`allfives_env.render_image` use them.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Union

import numpy as np

__all__ = ["png_bytes", "write_png"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_BIT_DEPTH = 8  # bits per channel
#: PNG colour type and channel count, by the number of channels of the image (1: grey, 3: RGB, 4: RGBA)
_COLOR_TYPES = {1: (0, 1), 3: (2, 3), 4: (6, 4)}
_ZLIB_LEVEL = 6  # zlib's default: frames compress well, and fast
_FILTER_NONE = 0  # the PNG row filter byte put before every row
_CRC_MASK = 0xFFFFFFFF


def _chunk(tag: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, tag, data, CRC."""
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & _CRC_MASK)


def png_bytes(image: np.ndarray) -> bytes:
    """Encode an ``HxWx3`` (RGB), ``HxWx4`` (RGBA) or ``HxW`` (grey) uint8 image as PNG.

    A minimal encoder (one IDAT chunk, filter 0 on every row) so frames can be saved without Pillow; any
    PNG reader opens the result.
    """
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise TypeError(f"png_bytes needs a uint8 image, got dtype {arr.dtype}")
    if arr.ndim == 2:
        color_type, channels = _COLOR_TYPES[1]
    elif arr.ndim == 3 and arr.shape[2] in (3, 4):
        color_type, channels = _COLOR_TYPES[arr.shape[2]]
    else:
        raise ValueError(f"png_bytes needs an HxW, HxWx3 or HxWx4 image, got shape {arr.shape}")
    h, w = arr.shape[:2]
    if h == 0 or w == 0:
        raise ValueError(f"png_bytes needs a non-empty image, got shape {arr.shape}")
    raw = np.full((h, 1 + w * channels), _FILTER_NONE, dtype=np.uint8)
    raw[:, 1:] = arr.reshape(h, w * channels)
    header = struct.pack(">IIBBBBB", w, h, _BIT_DEPTH, color_type, 0, 0, 0)  # deflate, adaptive filters, no interlace
    return (_PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw.tobytes(), _ZLIB_LEVEL))
            + _chunk(b"IEND", b""))


def write_png(image: np.ndarray, path: Union[str, Path]) -> Path:
    """Save ``image`` as a PNG file at ``path`` (see :func:`png_bytes`) and return the path."""
    path = Path(path)
    path.write_bytes(png_bytes(image))
    return path
