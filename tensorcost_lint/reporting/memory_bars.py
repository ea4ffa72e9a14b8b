"""The memory picture of `tensorcost report --memory`: for each configured model, a horizontal bar
per module of the retained bytes `tensorcost model` computes (training: what autograd keeps at the
end of the forward; inference: the largest live set while the module runs), modules in tree order
and indented by depth, the model's peak in the title. Drawn under matplotlib's own defaults, as the
roofline is."""

from __future__ import annotations

import io

from estimator.units import format_bytes_binary

from .roofline import DPI, matplotlib_defaults

WIDTH_INCHES = 12.0
BAR_INCHES, PANEL_EXTRA_INCHES = 0.22, 1.1
MAX_BARS = 40  # a deeper tree is cut at the depth that still fits
BAR_COLORS = {"training": "#d62728", "inference": "#1f77b4"}


def shown_modules(modules: list[dict]) -> list[dict]:
    """Modules that retain something, as deep in the tree as MAX_BARS allows (the root always)."""
    holding = [m for m in modules if m["retained_bytes"]]
    depth = max((_depth(m["path"]) for m in holding), default=0)
    while depth > 0 and sum(1 for m in holding if _depth(m["path"]) <= depth) > MAX_BARS:
        depth -= 1
    return [m for m in holding if _depth(m["path"]) <= depth][:MAX_BARS]


def _depth(path: str) -> int:
    return 0 if not path else path.count(".") + 1


def _label(module: dict) -> str:
    path = module["path"]
    name = path.rsplit(".", 1)[-1] if path else "(root)"
    # tick labels lose leading spaces: the depth is drawn with dots
    return "· " * _depth(path) + (f"{name} ({module['class']})" if module["class"] else name)


def draw_memory_bars(models: list[dict]):
    """One panel per model (`tensorcost model --format json` records); call under matplotlib_defaults()."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    shown = [(model, shown_modules(model["modules"])) for model in models]
    heights = [PANEL_EXTRA_INCHES + BAR_INCHES * max(len(modules), 1) for _, modules in shown]
    figure = Figure(figsize=(WIDTH_INCHES, max(sum(heights), 2.0)), dpi=DPI)
    FigureCanvasAgg(figure)
    if not shown:
        axes = figure.add_subplot(1, 1, 1)
        axes.axis("off")
        axes.text(0.5, 0.5, "no configured model", ha="center", va="center")
        return figure
    grid = figure.add_gridspec(len(shown), 1, height_ratios=heights, left=0.3, right=0.97, hspace=0.6,
                               top=1 - 0.45 / sum(heights), bottom=0.55 / sum(heights))
    for index, (model, modules) in enumerate(shown):
        _draw_model(figure.add_subplot(grid[index, 0]), model, modules)
    return figure


def _draw_model(axes, model: dict, modules: list[dict]) -> None:
    peak = model["totals"]["peak_retained_bytes"]
    what = "saved for backward" if model["mode"] == "training" else "largest live set"
    peak_text = "unknown (a size is not known)" if peak is None else format_bytes_binary(peak)
    axes.set_title(f"{model['name']} ({model['mode']}): peak retained {peak_text}", fontsize=11, loc="left")
    if not modules:
        axes.axis("off")
        axes.text(0.0, 0.5, "no module retains anything the analysis knows", va="center")
        return
    values = [m["retained_bytes"] for m in modules]
    positions = list(range(len(modules)))
    axes.barh(positions, values, color=BAR_COLORS.get(model["mode"], "#7f7f7f"), height=0.7)
    axes.set_yticks(positions)
    axes.set_yticklabels([_label(m) for m in modules], fontsize=8, family="monospace")
    axes.invert_yaxis()  # the tree reads top down
    axes.set_xlim(0, max(values) * 1.18)
    axes.set_xlabel(f"retained bytes per module, its submodules included ({what})", fontsize=9)
    axes.grid(True, axis="x", color="#dddddd", linewidth=0.8)
    for position, value in zip(positions, values):
        axes.text(value, position, " " + format_bytes_binary(value), va="center", ha="left", fontsize=7.5)


def render_memory_bars(models: list[dict], format: str) -> bytes:
    """The picture as PNG or SVG bytes."""
    with matplotlib_defaults():
        from matplotlib import rc_context

        figure = draw_memory_bars(models)
        buffer = io.BytesIO()
        with rc_context({"svg.fonttype": "none"}):  # SVG text stays text
            figure.savefig(buffer, format=format, dpi=DPI)
    return buffer.getvalue()
