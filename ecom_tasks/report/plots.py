"""The report's figures as PNG bytes, drawn with matplotlib (the ``plots`` extra, imported lazily) through
``matplotlib.figure.Figure`` only: no pyplot, so no GUI backend and no global state."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from ecom_tasks.tables import Row, Table

INSTALL_HINT = 'plots need matplotlib: pip install "ecom-tasks[plots]"'


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def row_label(row: Row) -> str:
    return " · ".join([row.model, row.source, *(part for part in (row.setting, row.part) if part)])


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def _scale(table: Table) -> float:
    return 100.0 if table.display == "percent" else 1.0


def _heatmap(
    ax,
    values: Sequence[Sequence[float | None]],
    rows: Sequence[str],
    columns: Sequence[str],
    vmax: float | None,
    fmt: str,
) -> Any:
    import numpy as np

    data = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
    upper = vmax or (np.nanmax(data) if np.isfinite(data).any() else 1.0)
    image = ax.imshow(data, cmap="viridis", vmin=0.0, vmax=upper, aspect="auto")
    ax.set_xticks(range(len(columns)), labels=columns, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), labels=rows, fontsize=8)
    top = image.get_clim()[1] or 1.0
    for i, row in enumerate(data):
        for j, value in enumerate(row):
            if np.isfinite(value):
                colour = "black" if value > 0.6 * top else "white"
                ax.text(j, i, format(value, fmt), ha="center", va="center", fontsize=7, color=colour)
    return image


def heatmap(table: Table) -> bytes:
    """Run rows x columns, colour = value (MonBench's position and format heatmaps, Figs. 3-4)."""
    from matplotlib.figure import Figure

    rows = table.run_rows()
    scale = _scale(table)
    values = [
        [None if row.cells.get(c.key) is None else row.cells[c.key] * scale for c in table.columns] for row in rows
    ]
    figure = Figure(figsize=(2.0 + 1.1 * len(table.columns), 1.0 + 0.32 * len(rows)), layout="constrained")
    ax = figure.add_subplot()
    labels, headers = [row_label(r) for r in rows], [c.header for c in table.columns]
    image = _heatmap(ax, values, labels, headers, 100.0 if scale == 100 else 1.0, ".1f" if scale == 100 else ".2f")
    figure.colorbar(image, ax=ax, fraction=0.04, label="accuracy %" if scale == 100 else "")
    ax.set_title(table.title, fontsize=9)
    return _png(figure)


def confusion(table: Table) -> bytes:
    """One gold x predicted heatmap per run row (RAIR), side by side."""
    from matplotlib.figure import Figure

    panels: dict[str, list[Row]] = {}
    for row in table.run_rows():
        panels.setdefault(" · ".join(p for p in (row.model, row.source, row.setting) if p), []).append(row)
    count = len(panels)
    per_line = min(count, 3)
    lines = (count + per_line - 1) // per_line
    figure = Figure(figsize=(4.4 * per_line, 3.4 * lines), layout="constrained")
    for index, (title, rows) in enumerate(panels.items(), start=1):
        ax = figure.add_subplot(lines, per_line, index)
        values = [[row.cells.get(c.key) for c in table.columns] for row in rows]
        _heatmap(ax, values, [row.part for row in rows], [c.key for c in table.columns], None, ".0f")
        ax.set_xlabel("predicted", fontsize=8)
        ax.set_title(title, fontsize=8)
    figure.suptitle(table.title, fontsize=9)
    return _png(figure)


def column_colours(table: Table) -> dict[str, tuple[float, float, float, float]]:
    """A colour per column key that does not depend on which columns a report has: the key's place
    in ``table.palette`` (tab20), else a colour chosen by a hash of the key (tab20b)."""
    import hashlib

    from matplotlib import colormaps

    known, other = colormaps["tab20"], colormaps["tab20b"]

    def colour(key: str) -> tuple[float, float, float, float]:
        if key in table.palette:
            return known(table.palette.index(key) % 20)
        return other(int(hashlib.sha256(key.encode()).hexdigest(), 16) % 20)

    return {column.key: colour(column.key) for column in table.columns}


def bars(table: Table) -> bytes:
    """One stacked bar per row, split by column (RAIR Fig. 5: how each run's errors divide among
    dimensions); the paper's rows are hatched and hold only the shares its text states."""
    from matplotlib.figure import Figure

    rows = table.rows
    scale = _scale(table)
    colours = column_colours(table)
    figure = Figure(figsize=(9.0, 1.6 + 0.38 * len(rows)), layout="constrained")
    ax = figure.add_subplot()
    for i, row in enumerate(rows):
        left = 0.0
        for column in table.columns:
            value = (row.cells.get(column.key) or 0.0) * scale
            if value != value or value <= 0:  # nan or nothing
                continue
            hatch = "//" if row.reference else None
            ax.barh(i, value, left=left, color=colours[column.key], hatch=hatch, edgecolor="white", label=column.header)
            left += value
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))  # one legend entry per dimension
    ax.set_yticks(range(len(rows)), labels=[row_label(r) for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("% of errors" if scale == 100 else "value")
    ax.legend(unique.values(), unique.keys(), fontsize=7, ncols=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(table.title, fontsize=9)
    return _png(figure)


def forest(table: Table) -> bytes:
    """Every row's ``estimate`` with its 95% interval (``ci_low``..``ci_high``) against a line at 0: each
    model's difference from the baseline (``ecom-tasks report --baseline``)."""
    from matplotlib.figure import Figure

    rows = table.rows
    scale = _scale(table)
    figure = Figure(figsize=(7.0, 1.4 + 0.4 * len(rows)), layout="constrained")
    ax = figure.add_subplot()
    for i, row in enumerate(rows):
        value, low, high = (row.cells.get(key, float("nan")) * scale for key in ("estimate", "ci_low", "ci_high"))
        ax.errorbar([value], [i], xerr=[[value - low], [high - value]], fmt="o", color="tab:blue", capsize=3)
    ax.axvline(0.0, color="grey", linewidth=1)
    ax.set_yticks(range(len(rows)), labels=[row.model for row in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("difference" + (" (percentage points)" if scale == 100 else ""))
    ax.set_title(table.title, fontsize=9)
    return _png(figure)


DRAW = {"heatmap": heatmap, "confusion": confusion, "bars": bars, "forest": forest}


def draw(table: Table) -> bytes | None:
    """The table's figure, or None when it has none."""
    if table.plot is None or not table.run_rows():
        return None
    import matplotlib

    # Labels are names from logs: a "$" must print as itself, not start mathtext (which can fail to parse).
    with matplotlib.rc_context({"text.parse_math": False}):
        return DRAW[table.plot](table)
