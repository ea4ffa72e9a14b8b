"""The roofline picture: a device's compute roofs and bandwidth slope, and every site on it.

Axes are log-log: arithmetic intensity (FLOP per byte of traffic) against attained FLOP/s. A
site's modelled point sits on the roof of its dtype at its intensity — FLOPs / lower bound, the
best it could do. A measured point (from `measure`) sits below it at FLOPs / measured time; the
vertical gap is the measured/bound ratio. A measured point above its roof means the evidence is
wrong and is drawn in red.
"""

from __future__ import annotations

import io
import math
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass

from estimator.units import format_rate

from .cost_table import SiteRow, seconds_text
from .label_layout import Box, overlaps, place_labels

WIDTH_INCHES, HEIGHT_INCHES, DPI = 12.0, 6.75, 120  # 1440 x 810 pixels per device
KEY_LINES = 28
LABEL_STEP_POINTS, LABEL_RINGS = 5, 12  # labels search up to 60 pt from their point before giving up
LABEL_FONT_SIZE, LABEL_PAD = 8, 0.15  # pad in fractions of the font size, as matplotlib's boxstyle takes it
DTYPE_COLORS = {
    "float32": "#1f77b4", "bfloat16": "#d62728", "float16": "#ff7f0e", "float64": "#2ca02c",
    "float8_e4m3fn": "#9467bd", "float8_e5m2": "#8c564b", "int8": "#e377c2",
}
OTHER_COLORS = ("#17becf", "#bcbd22", "#7f7f7f")


@dataclass
class Point:
    row: SiteRow
    intensity: float
    modelled: float  # FLOP/s at the lower bound
    measured: float | None  # FLOP/s at the measured median

    @property
    def violated(self) -> bool:
        return self.measured is not None and self.measured > self.modelled


def color_for(dtype: str) -> str:
    if dtype in DTYPE_COLORS:
        return DTYPE_COLORS[dtype]
    return OTHER_COLORS[sum(map(ord, dtype)) % len(OTHER_COLORS)]


def device_groups(rows: list[SiteRow], fallback=None) -> list[tuple]:
    """[(device, boundary, points)] in order of first appearance; sites without a bound are left out
    (their roof is unknown)."""
    groups: dict = {}
    for row in rows:
        if row.hardware is None or row.bound is None or row.bound <= 0:
            continue
        device, boundary, points = groups.setdefault(row.hardware.id, (row.hardware, row.traffic_boundary, []))
        seconds = row.measured_seconds
        measured = row.flops / seconds if seconds else None
        points.append(Point(row, float(row.intensity), float(row.flops / row.bound), measured))
    if not groups and fallback is not None:
        groups[fallback[0].id] = (fallback[0], fallback[1], [])
    return list(groups.values())


def _limits(values, pad_low: float, pad_high: float) -> tuple[float, float]:
    return min(values) / pad_low, max(values) * pad_high


def _roofs(device) -> list[tuple[str, list[str], str, float]]:
    """(label, dtypes, operation class, peak) per distinct roof: dtypes with the same peak for the
    same operation class (float8_e4m3fn and float8_e5m2, say) share one line and one label."""
    merged: dict = {}
    for c in device.compute:
        tf32 = c.operation_class.endswith("tf32")
        key = (c.operation_class, float(c.peak_flops_per_second))
        merged.setdefault(key, []).append(c.operand_dtype.name + (" (TF32)" if tf32 else ""))
    return [(", ".join(names), [name.split(" ")[0] for name in names], operation_class, peak)
            for (operation_class, peak), names in merged.items()]


def _draw_device(figure, axes, key_axes, device, boundary, points) -> None:
    bandwidths = {b.traffic_boundary: float(b.sustained_bytes_per_second) for b in device.bandwidth}
    bandwidth = bandwidths.get(boundary) or (max(bandwidths.values()) if bandwidths else None)
    roofs = _roofs(device)
    ridges = [peak / bandwidth for *_, peak in roofs] if bandwidth else []
    xs = [p.intensity for p in points] + ridges or [1.0]
    ys = [peak for *_, peak in roofs] + [p.modelled for p in points] + [p.measured for p in points if p.measured]
    x_low, x_high = _limits(xs, 4, 6)
    y_low, y_high = _limits(ys or [1.0], 3, 2.2)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(x_low, x_high)
    axes.set_ylim(y_low, y_high)
    axes.grid(True, which="major", color="#dddddd", linewidth=0.8)
    axes.grid(True, which="minor", color="#f0f0f0", linewidth=0.5)
    axes.set_xlabel("arithmetic intensity (FLOP per byte of traffic)")
    axes.set_ylabel("attained FLOP/s")
    renderer = figure.canvas.get_renderer()
    used = {(p.row.dtype, p.row.operation_class) for p in points}
    top = max((peak for *_, peak in roofs), default=y_high)
    obstacles: list = []  # drawn text boxes (display pixels) later labels must not cover
    highest_first = sorted(zip(roofs, ridges or [x_low] * len(roofs)), key=lambda item: -item[0][3])
    for (label, dtypes, operation_class, peak), ridge in highest_first:
        emphasis = any((dtype, operation_class) in used for dtype in dtypes) or not points
        color = color_for(next((d for d in dtypes if (d, operation_class) in used), dtypes[0]))
        axes.plot([max(ridge, x_low), x_high], [peak, peak], color=color,
                  linewidth=2.4 if emphasis else 1.2, alpha=1.0 if emphasis else 0.45,
                  linestyle="--" if operation_class.endswith("tf32") else "-")
        text = axes.text(x_high / 1.15, peak * 1.07, f"{label} {operation_class}: {format_rate(peak, 'FLOP/s')}",
                         ha="right", va="bottom", fontsize=8.5, color=color, alpha=1.0 if emphasis else 0.6)
        _clear_roof_text(axes, text, peak, renderer, obstacles)
    for name, rate in bandwidths.items():
        main = rate == bandwidth
        x_end = min(top / rate, x_high)
        axes.plot([x_low, x_end], [rate * x_low, rate * x_end], color="#333333" if main else "#999999",
                  linewidth=2.4 if main else 1.0, linestyle="-" if main else ":")
        x_text = math.sqrt(max(x_low, y_low / rate * 1.5) * x_end)
        start, end = axes.transData.transform([(x_low, rate * x_low), (x_end, rate * x_end)])
        angle = math.degrees(math.atan2(end[1] - start[1], end[0] - start[0]))
        text = axes.text(x_text, rate * x_text * 1.25, f"{name}: {format_rate(rate, 'B/s')}", rotation=angle,
                         rotation_mode="anchor", ha="center", va="bottom", fontsize=8.5,
                         color="#333333" if main else "#888888")
        obstacles.append(_box(text, renderer))
    legend = _draw_markers_and_legend(axes, points)
    obstacles.append(_box(legend, renderer))
    _draw_labels(axes, points, obstacles, renderer)
    _draw_key(key_axes, points)
    axes.set_title(f"Roofline: {device.id} ({device.device})", fontsize=12, loc="left", pad=16)
    axes.text(0.0, 1.012, f"evidence of {device.measured}, owner {device.owner}; traffic across {boundary}",
              transform=axes.transAxes, fontsize=8, color="#666666", va="bottom")


def _box(artist, renderer) -> Box:
    extent = artist.get_window_extent(renderer)
    return (extent.x0, extent.y0, extent.x1, extent.y1)


def _clear_roof_text(axes, text, peak: float, renderer, obstacles: list) -> None:
    """Roofs close in height (float32 and float64 at 67 TFLOP/s each on one device, say) would print
    their labels over each other: below the line, then further left, until the text is clear."""
    for attempt in range(8):
        box = _box(text, renderer)
        clash = next((other for other in obstacles if overlaps(box, other)), None)
        if clash is None:
            break
        if attempt == 0:
            text.set_y(peak / 1.07)
            text.set_va("top")
            continue
        x, _ = axes.transData.transform((text.get_position()[0], peak))
        left = clash[0] - 8 * DPI / 72 - (box[2] - x)
        text.set_x(axes.transData.inverted().transform((left, 0))[0])
    obstacles.append(_box(text, renderer))


def _draw_markers_and_legend(axes, points):
    from matplotlib.lines import Line2D

    for point in points:
        color = color_for(point.row.dtype or "")
        axes.scatter([point.intensity], [point.modelled], s=46, color=color, edgecolors="white", linewidths=0.8,
                     zorder=4)
        if point.measured is not None:
            edge = "#d62728" if point.violated else color
            axes.plot([point.intensity] * 2, [point.modelled, point.measured], color=edge, linewidth=0.9,
                      linestyle=":", zorder=3)
            axes.scatter([point.intensity], [point.measured], s=46, marker="D", facecolors="white", edgecolors=edge,
                         linewidths=1.6, zorder=5)
    handles = [Line2D([], [], marker="o", linestyle="", color="#555555", label="modelled: FLOPs / lower bound"),
               Line2D([], [], color="#333333", linewidth=2.4, label="bandwidth slope (evidence)"),
               Line2D([], [], color="#555555", linewidth=2.4, label="compute roof per dtype (evidence)")]
    if any(p.measured is not None for p in points):
        handles.insert(1, Line2D([], [], marker="D", linestyle="", markerfacecolor="white", color="#555555",
                                 label="measured: FLOPs / measured median"))
    if any(p.violated for p in points):
        handles.append(Line2D([], [], marker="D", linestyle="", markerfacecolor="white", color="#d62728",
                              label="above its roof: evidence violated"))
    return axes.legend(handles=handles, loc="lower right", fontsize=8, framealpha=0.92)


def _draw_labels(axes, points, obstacles: list, renderer) -> None:
    """One label per place (sites at the same point share it), each where it overlaps nothing
    drawn, with a leader line when it sits away from its point; labels that find no free place
    are named in one line under the plot instead of printed over another."""
    groups: dict = {}
    for point in points:
        place = (round(math.log10(point.intensity), 2), round(math.log10(point.modelled), 2))
        groups.setdefault(place, (point, []))[1].append(f"#{point.row.id}")
    ordered = sorted(groups.values(), key=lambda item: (item[0].intensity, item[0].modelled, item[1]))
    scale = DPI / 72
    pad = 2 * LABEL_PAD * LABEL_FONT_SIZE * scale  # the white box drawn behind the text, both sides
    texts, anchors, sizes = [], [], []
    for point, names in ordered:
        text = " ".join(names) if len(names) <= 4 else " ".join(names[:3]) + f" +{len(names) - 3}"
        probe = axes.text(0, 0, text, fontsize=LABEL_FONT_SIZE)
        box = _box(probe, renderer)
        probe.remove()
        texts.append((point, text))
        anchors.append(tuple(axes.transData.transform((point.intensity, point.modelled))))
        sizes.append((box[2] - box[0] + pad, box[3] - box[1] + pad))
    area = tuple(axes.get_window_extent(renderer).extents)
    placed = place_labels(anchors, sizes, _marker_boxes(axes, points) + obstacles, area,
                          step=LABEL_STEP_POINTS * scale, rings=LABEL_RINGS)
    left_out = []
    for (point, text), anchor, spot in zip(texts, anchors, placed):
        if spot is None:
            left_out.append(text)
            continue
        box, ring = spot
        offset = (((box[0] + box[2]) / 2 - anchor[0]) / scale, ((box[1] + box[3]) / 2 - anchor[1]) / scale)
        leader = {"arrowstyle": "-", "color": "#999999", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4}
        axes.annotate(text, (point.intensity, point.modelled), xytext=offset, textcoords="offset points",
                      ha="center", va="center", fontsize=LABEL_FONT_SIZE, color="#222222", zorder=6, gid="site-label",
                      arrowprops=leader if ring > 1 else None,
                      bbox={"boxstyle": f"round,pad={LABEL_PAD}", "facecolor": "white", "edgecolor": "none",
                            "alpha": 0.8})
    if left_out:
        axes.text(0.0, -0.085, "not labelled (crowded; see the key): " + " ".join(left_out), transform=axes.transAxes,
                  fontsize=7.5, color="#666666", va="top")


def _marker_boxes(axes, points) -> list:
    """Every drawn marker as a box labels must not cover."""
    boxes = []
    radius = 5 * DPI / 72
    for point in points:
        for y in (point.modelled, point.measured):
            if y is not None:
                x0, y0 = axes.transData.transform((point.intensity, y))
                boxes.append((x0 - radius, y0 - radius, x0 + radius, y0 + radius))
    return boxes


def _draw_key(key_axes, points) -> None:
    key_axes.axis("off")
    ordered = sorted(points, key=lambda p: p.row.id)
    lines = [_key_line(p) for p in ordered]
    if len(lines) > KEY_LINES:
        lines = lines[:KEY_LINES - 1] + [f"... and {len(lines) - KEY_LINES + 1} more (see the table)"]
    if not lines:
        lines = ["no site has a bound on this device"]
    title = "site".ljust(24) + "bound".rjust(9) + ("   ratio" if any(p.measured for p in points) else "")
    key_axes.text(0.0, 1.0, title + "\n" + "\n".join(lines), va="top", ha="left", family="monospace", fontsize=7.5,
                  transform=key_axes.transAxes, linespacing=1.35)


def _key_line(point: Point) -> str:
    row = point.row
    place = f"{os.path.basename(row.path)}:{row.line}"
    if len(place) > 19:  # keep the start of the name and the line number
        place = place[:9] + "…" + place[-9:]
    text = f"#{row.id:<3} {place}"[:24].ljust(24)
    text += seconds_text(row.bound).rjust(9)
    ratio = (row.measured or {}).get("ratio")
    return text + (f" {ratio:7.2f}x" if ratio is not None else "")


@contextmanager
def matplotlib_defaults():
    """matplotlib with its own defaults, whatever the machine or the analysed repository says.

    Importing matplotlib reads `./matplotlibrc` from the working directory — the analysed
    repository when `report` runs there — and `text.usetex: True` in it made the picture need
    LaTeX and crash; a FIFO named matplotlibrc would hang the import. So the first import reads
    matplotlib's own shipped file (MATPLOTLIBRC), and drawing runs under rcParamsDefault.
    """
    import importlib
    import importlib.util

    if "matplotlib" not in sys.modules:
        spec = importlib.util.find_spec("matplotlib")
        shipped = os.path.join(spec.submodule_search_locations[0], "mpl-data", "matplotlibrc")
        saved = os.environ.get("MATPLOTLIBRC")
        os.environ["MATPLOTLIBRC"] = shipped
        try:
            importlib.import_module("matplotlib")
        finally:
            if saved is None:
                os.environ.pop("MATPLOTLIBRC", None)
            else:
                os.environ["MATPLOTLIBRC"] = saved
    import matplotlib

    defaults = {key: value for key, value in matplotlib.rcParamsDefault.items() if key != "backend"}
    with matplotlib.rc_context(defaults):
        yield


def draw_roofline(rows: list[SiteRow], fallback=None):
    """The figure, one panel per device; call under matplotlib_defaults()."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    groups = device_groups(rows, fallback)
    panels = max(len(groups), 1)
    figure = Figure(figsize=(WIDTH_INCHES, HEIGHT_INCHES * panels), dpi=DPI)
    FigureCanvasAgg(figure)
    grid = figure.add_gridspec(panels, 2, width_ratios=(3, 1), left=0.065, right=0.995, bottom=0.09 / panels,
                               top=1 - 0.08 / panels, hspace=0.3, wspace=0.04)
    if not groups:
        axes = figure.add_subplot(grid[0, :])
        axes.axis("off")
        axes.text(0.5, 0.5, "no resolved call site with hardware evidence", ha="center", va="center")
    for index, (device, boundary, points) in enumerate(groups):
        _draw_device(figure, figure.add_subplot(grid[index, 0]), figure.add_subplot(grid[index, 1]),
                     device, boundary, points)
    return figure


def render_roofline(rows: list[SiteRow], format: str, fallback=None) -> bytes:
    """The picture as PNG or SVG bytes; one panel per device."""
    with matplotlib_defaults():
        from matplotlib import rc_context

        figure = draw_roofline(rows, fallback)
        buffer = io.BytesIO()
        with rc_context({"svg.fonttype": "none"}):  # SVG text stays text: searchable in the HTML page
            figure.savefig(buffer, format=format, dpi=DPI)
    return buffer.getvalue()
