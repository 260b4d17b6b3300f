"""The forest plot of verdicts: one row per comparison, its error ratio as a point
and its interval as a bar on a logarithmic axis, over the shaded equivalence band
``[1/m, m]``, coloured by verdict.

One drawing for every figure that shows verdicts: the reproduction report's
headline (:func:`deepxde_lnn.study.reproduction.verdicts_figure`) and a compare's
``summary.png`` (:mod:`.summary_figure`). The rows come from the verdicts the tables
state (a :class:`~.stats.RatioCI` with the verdict of its family after Holm's
adjustment), never recomputed here.

* colour: the verdict of the interval alone (:data:`COLOURS`, one per verdict);
* marker: filled where Holm's adjustment over the family keeps that verdict,
  open where it changes it (the adjusted verdict is the one that counts);
* an interval running off the axis (beyond :data:`CLIP` either way) ends in an
  arrow at the edge; a comparison without an interval (one seed) is a point;
* a pooled verdict (:mod:`.pooled`, ``ForestRow.pooled``) is a diamond under its
  section's rows, spanning its interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .figures import plt_module
from .stats import MARGIN, UNDECIDED, RatioCI

__all__ = [
    "COLOURS",
    "CLIP",
    "ROW_INCHES",
    "ForestRow",
    "kind",
    "forest",
    "forest_legend",
    "forest_figure",
]

#: one colour per verdict (colour-blind safe: blue, orange, vermilion, grey)
COLOURS = {
    "better": "#0072B2",
    "equivalent": "#009E73",
    "worse": "#D55E00",
    UNDECIDED: "#8C8C8C",
}
CLIP = 100.0  # the axis spans at most this factor either side of 1
ROW_INCHES = 0.24  # the height of one row in a figure


def kind(verdict: str) -> str:
    """The key of :data:`COLOURS` for a verdict (``equivalent within ×2`` ->
    ``equivalent``)."""
    word = verdict.split(" ", 1)[0]
    if word not in COLOURS:
        raise ValueError(f"not a verdict: {verdict!r}")
    return word


@dataclass(frozen=True)
class ForestRow:
    """One comparison: its ``label``, interval ``ci`` (None: no comparison in this
    row, nothing drawn), the verdict of its family after Holm's adjustment
    (``adjusted``; None: not adjusted) and the ``section`` it belongs to (rows of
    a section are drawn together under its name; "": no heading)."""

    label: str
    ci: RatioCI | None
    adjusted: str | None = None
    section: str = ""
    #: a pooled verdict over the section's problems: drawn as a diamond spanning
    #: its interval (as a meta-analysis draws its summary)
    pooled: bool = False

    @property
    def changed(self) -> bool:
        """Whether Holm's adjustment changes the interval's verdict."""
        return (
            self.ci is not None
            and self.adjusted is not None
            and self.adjusted != self.ci.verdict
        )


def _layout(rows: Sequence[ForestRow]) -> tuple[list[float], list[tuple[float, str]]]:
    """Each row's y (downwards from 0) and the sections' headings ``(y, name)``:
    a heading takes a row of its own above its section's rows."""
    ys, heads, y, last = [], [], 0.0, None
    for row in rows:
        if row.section and row.section != last:
            heads.append((y, row.section))
            y += 1
        last = row.section
        ys.append(y)
        y += 1
    return ys, heads


def _limits(rows: Sequence[ForestRow], margin: float) -> tuple[float, float]:
    """The x range: every ratio and finite bound with some room, the band, and
    at most :data:`CLIP` either side of 1."""
    values = [margin * 1.6, 1 / (margin * 1.6)]
    for row in rows:
        if row.ci is not None:
            values += [
                v
                for v in (row.ci.ratio, row.ci.low, row.ci.high)
                if math.isfinite(v) and v > 0
            ]
    low, high = min(values) / 1.3, max(values) * 1.3
    return max(low, 1 / CLIP), min(high, CLIP)


def _margin(rows: Sequence[ForestRow]) -> float:
    margins = {row.ci.margin for row in rows if row.ci is not None}
    if len(margins) > 1:
        raise ValueError(f"forest: one margin per panel, got {sorted(margins)}")
    return margins.pop() if margins else MARGIN


def forest(
    ax,
    rows: Sequence[ForestRow],
    title: str = "",
    xlabel: str = "error ratio (95 % CI)",
    labels: bool = True,
) -> None:
    """Draw ``rows`` on ``ax``, top to bottom (module docstring); ``labels``:
    write the rows' labels (and sections' names) as y tick labels."""
    margin = _margin(rows)
    ys, heads = _layout(rows)
    low, high = _limits(rows, margin)
    ax.axvspan(1 / margin, margin, color="0.9", lw=0, zorder=0)
    ax.axvline(1.0, color="0.35", lw=0.8, zorder=1)
    for y, row in zip(ys, rows):
        if row.ci is None:
            continue
        ci = row.ci
        colour = COLOURS[kind(ci.verdict)]
        if row.pooled:
            _diamond(ax, ci, y, colour, (low, high))
            continue
        if math.isfinite(ci.low) and math.isfinite(ci.high):
            a, b = min(max(ci.low, low), high), min(max(ci.high, low), high)
            ax.plot([a, b], [y, y], color=colour, lw=2.2, zorder=2, gid="interval")
            for end, at, arrow in ((ci.low, low, "<"), (ci.high, high, ">")):
                if not low <= end <= high:  # off the axis: an arrow at its edge
                    ax.plot(
                        [at], [y], ls="", marker=arrow, ms=5, color=colour,
                        clip_on=False, gid="clipped",
                    )  # fmt: skip
        ax.plot(
            [min(max(ci.ratio, low), high)], [y], ls="", marker="o", ms=6, mec=colour,
            mfc="white" if row.changed else colour, mew=1.5, zorder=3, gid="ratio",
        )  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    _ticks(ax, low, high, margin)
    ax.set_ylim(max([*ys, *(h for h, _ in heads)], default=0) + 0.7, -0.7)
    ticks = [*ys, *(h for h, _ in heads)]
    names = [row.label for row in rows] + [name for _, name in heads]
    ax.set_yticks(ticks, names if labels else [""] * len(ticks), fontsize=7)
    if labels:
        bold = {len(rows) + i for i in range(len(heads))}
        for i, tick in enumerate(ax.get_yticklabels()):
            if i in bold:
                tick.set_fontweight("bold")
    ax.tick_params(axis="y", length=0)
    for y, _ in heads[1:]:  # a line between sections
        ax.axhline(y - 0.5, color="0.6", lw=0.6, zorder=1)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    if title:
        ax.set_title(title, fontsize=9)


def _diamond(ax, ci: RatioCI, y: float, colour: str, limits) -> None:
    """A pooled verdict: a diamond from its interval's low to high end, widest at
    its ratio (each clipped to the axis)."""

    def clip(v: float) -> float:
        return min(max(v, limits[0]), limits[1])

    xs = [clip(ci.low), clip(ci.ratio), clip(ci.high), clip(ci.ratio)]
    ax.fill(xs, [y, y - 0.4, y, y + 0.4], color=colour, zorder=3, gid="pooled")


def _ticks(ax, low: float, high: float, margin: float) -> None:
    """Ticks at the decades in view and the band's edges, written as numbers."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    at = sorted({10.0**d for d in decades} | {1 / margin, margin})
    ax.xaxis.set_major_locator(FixedLocator([t for t in at if low <= t <= high]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def forest_legend(rows: Sequence[ForestRow]) -> list:
    """The legend's entries for ``rows``: the verdicts drawn (colours), the open
    marker where Holm's adjustment changed some, and the band."""
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    m = f"{_margin(rows):g}"
    drawn = {kind(r.ci.verdict) for r in rows if r.ci is not None}
    names = {"equivalent": f"equivalent within ×{m}"}
    handles: list[Artist] = [
        Line2D([], [], color=COLOURS[k], marker="o", lw=2.2, label=names.get(k, k))
        for k in COLOURS
        if k in drawn
    ]
    changed = sorted({r.adjusted for r in rows if r.changed and r.adjusted})
    if changed:
        to = changed[0] if len(changed) == 1 else "another verdict"
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="o",
                mfc="white",
                mec="0.3",
                mew=1.5,
                label=f"open: {to} after Holm's adjustment",
            )
        )
    handles.append(Patch(color="0.9", label=f"equivalence band [1/{m}, {m}]"))
    return handles


LABEL_INCHES = 0.06  # a row label's width per character (font size 7)


def forest_figure(
    columns: Mapping[str, Sequence[ForestRow]],
    title: str = "",
    xlabel: str = "error ratio (95 % CI)",
):
    """One forest panel per column (``{title: rows}``, each the same rows'
    comparisons), side by side, the rows' labels on the first, one legend below."""
    plt = plt_module()
    panels = list(columns.items())
    n = max(
        len(rows) + len({r.section for r in rows if r.section}) for _, rows in panels
    )
    height = ROW_INCHES * n + 1.4
    longest = max((len(r.label) for _, rows in panels for r in rows), default=0)
    labels = max(3.2, LABEL_INCHES * longest + 0.4)  # the row labels' room
    fig, axs = plt.subplots(
        1,
        len(panels),
        figsize=(4.0 * len(panels) + labels, height),
        squeeze=False,
    )
    everything: list[ForestRow] = []
    for i, (ax, (name, rows)) in enumerate(zip(axs[0], panels)):
        forest(ax, rows, title=name, xlabel=xlabel, labels=i == 0)
        everything += rows
    handles = forest_legend(everything)
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=min(len(handles), 6),
        fontsize=7,
        frameon=False,
    )
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.35 / height, 1, 1))
    room = (LABEL_INCHES * longest + 0.2) / fig.get_figwidth()  # the labels' share
    if room > fig.subplotpars.left:
        fig.subplots_adjust(left=room)
    return fig
