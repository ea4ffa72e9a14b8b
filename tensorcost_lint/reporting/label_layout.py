"""Where each point label goes so that no two labels (nor a label and a marker, roof text or the
legend) overlap: a deterministic search over candidate positions in rings around the point.

Pure geometry over display-pixel boxes `(x0, y0, x1, y1)`; the caller measures the real text
extents with matplotlib's renderer, so the boxes are what is drawn, not an estimate from the
character count (an estimate let neighbouring labels print over each other).
"""

from __future__ import annotations

import math
from typing import Sequence

Box = tuple[float, float, float, float]

# Directions tried at every ring, in order of preference: beside the point first (labels read left
# to right), then above/below, then the diagonals and the ones between.
_ANGLES = (0, 180, 90, 270, 45, 315, 135, 225, 22.5, 337.5, 157.5, 202.5, 67.5, 292.5, 112.5, 247.5)


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def inside(box: Box, area: Box) -> bool:
    return area[0] <= box[0] and area[1] <= box[1] and box[2] <= area[2] and box[3] <= area[3]


def candidate_centres(anchor: tuple[float, float], width: float, height: float, step: float, rings: int):
    """(centre, ring) of each candidate box, nearest first. Ring r keeps a gap of r*step between
    the point and the box edge facing it, so the label never covers its own point."""
    for ring in range(1, rings + 1):
        gap = ring * step
        for degrees in _ANGLES:
            cos, sin = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
            # the box edge (or corner) facing the point sits `gap` away along this direction
            reach = min(abs((width / 2) / cos) if abs(cos) > 1e-9 else math.inf,
                        abs((height / 2) / sin) if abs(sin) > 1e-9 else math.inf)
            yield (anchor[0] + cos * (reach + gap), anchor[1] + sin * (reach + gap)), ring


def place_labels(
    anchors: Sequence[tuple[float, float]],
    sizes: Sequence[tuple[float, float]],
    obstacles: Sequence[Box],
    area: Box,
    *,
    step: float,
    rings: int,
    margin: float = 2.0,
) -> list[tuple[Box, int] | None]:
    """For each label in order, the first candidate box (with its ring) inside `area` that overlaps
    no obstacle and no label placed before it; None when every candidate is taken (the caller lists
    that label elsewhere rather than print it over another)."""
    taken = list(obstacles)
    placed: list[tuple[Box, int] | None] = []
    for anchor, (width, height) in zip(anchors, sizes):
        found = None
        for (cx, cy), ring in candidate_centres(anchor, width, height, step, rings):
            box = (cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2)
            padded = (box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin)
            if inside(padded, area) and not any(overlaps(padded, other) for other in taken):
                found = (box, ring)
                taken.append(padded)
                break
        placed.append(found)
    return placed
