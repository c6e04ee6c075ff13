"""Inline SVG charts drawn by hand: no JavaScript library, no download, every label escaped."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Sequence

PALETTE = ["#3b6fb6", "#e07b28", "#3f9b57", "#a45ca8", "#d04a4a", "#3aa6a0", "#8c6d31", "#6b6ecf"]


def series_colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclass(frozen=True)
class Bar:
    """One bar: a proportion with an optional interval, and the hover text."""

    value: float | None
    low: float | None = None
    high: float | None = None
    tooltip: str = ""


@dataclass(frozen=True)
class BarGroup:
    label: str
    bars: list[Bar]


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def grouped_bar_chart(groups: list[BarGroup], series: list[str], *, width: int = 960, label_width: int = 300) -> str:
    """Horizontal grouped bars of proportions (0–100%), one colour per series, interval whiskers."""
    bar_height, bar_gap, group_gap, top, bottom = 14, 3, 14, 34, 28
    group_height = len(series) * (bar_height + bar_gap) - bar_gap
    plot_left, plot_right = label_width, width - 52  # room on the right for the value label
    plot_width = plot_right - plot_left
    height = top + len(groups) * (group_height + group_gap) + bottom

    def x(value: float) -> float:
        return plot_left + value * plot_width

    parts = [
        f'<svg class="chart" role="img" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="100%" preserveAspectRatio="xMinYMin meet">'
    ]
    legend_x = plot_left
    for index, name in enumerate(series):
        parts.append(f'<rect x="{legend_x}" y="8" width="12" height="12" rx="2" fill="{series_colour(index)}"/>')
        parts.append(f'<text x="{legend_x + 17}" y="18" class="legend">{escape(_truncate(name, 40))}</text>')
        legend_x += 34 + 7 * min(len(name), 40)
    for tick in range(0, 101, 20):
        tx = x(tick / 100)
        parts.append(f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{height - bottom + 4}" class="grid"/>')
        parts.append(f'<text x="{tx:.1f}" y="{height - bottom + 18}" class="tick" text-anchor="middle">{tick}%</text>')
    y = top
    for group in groups:
        parts.append(
            f'<text x="{plot_left - 10}" y="{y + group_height / 2 + 4:.1f}" class="label" text-anchor="end">'
            f"<title>{escape(group.label)}</title>{escape(_truncate(group.label, label_width // 7))}</text>"
        )
        for index, bar in enumerate(group.bars):
            by = y + index * (bar_height + bar_gap)
            tooltip = f"<title>{escape(bar.tooltip)}</title>" if bar.tooltip else ""
            if bar.value is None:
                parts.append(f'<text x="{plot_left + 4}" y="{by + bar_height - 3}" class="na">{tooltip}no judged turns</text>')
                continue
            bar_width = max(bar.value * plot_width, 1.5)
            parts.append(
                f'<rect x="{plot_left}" y="{by}" width="{bar_width:.1f}" height="{bar_height}" rx="2" '
                f'fill="{series_colour(index)}">{tooltip}</rect>'
            )
            if bar.low is not None and bar.high is not None:
                mid = by + bar_height / 2
                parts.append(
                    f'<path d="M{x(bar.low):.1f} {mid:.1f}H{x(bar.high):.1f}M{x(bar.low):.1f} {mid - 4:.1f}V{mid + 4:.1f}'
                    f'M{x(bar.high):.1f} {mid - 4:.1f}V{mid + 4:.1f}" class="whisker"/>'
                )
            end = bar.high if bar.high is not None else bar.value
            parts.append(f'<text x="{x(end) + 6:.1f}" y="{by + bar_height - 3}" class="value">{100 * bar.value:.0f}%</text>')
        y += group_height + group_gap
    parts.append("</svg>")
    return "".join(parts)


def coverage_bar(fraction: float | None, *, width: int = 240) -> str:
    """A small horizontal meter for a coverage fraction."""
    filled = (fraction or 0.0) * width
    return (
        f'<svg class="meter" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 12" width="{width}" height="12">'
        f'<rect x="0" y="0" width="{width}" height="12" rx="3" class="meter-bg"/>'
        f'<rect x="0" y="0" width="{filled:.1f}" height="12" rx="3" class="meter-fill"/></svg>'
    )


@dataclass(frozen=True)
class Bubble:
    """One point of a bubble chart: its place on the two scales, its radius, its series, the hover text and the
    anchor of the page it links to."""

    x: float
    y: float
    radius: float
    series: int
    tooltip: str
    link: str


def bubble_chart(
    bubbles: Sequence[Bubble], series: Sequence[str], *, x_label: str, y_label: str, low: int = 1, high: int = 10,
    width: int = 640, height: int = 420,
) -> str:
    """Bubbles on two scales from `low` to `high`, coloured by series (a legend names them), each a link."""
    margin = 48

    def x(value: float) -> float:
        return margin + (value - low) / (high - low) * (width - 2 * margin)

    def y(value: float) -> float:
        return height - margin - (value - low) / (high - low) * (height - 2 * margin)

    parts = [
        f'<svg class="chart bubbles" role="img" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'aria-label="{escape(x_label)} against {escape(y_label)}">',
        f'<rect x="{margin}" y="{margin}" width="{width - 2 * margin}" height="{height - 2 * margin}" fill="none" class="grid"/>',
    ]
    for value in range(low, high + 1):
        parts.append(f'<text x="{x(value):.1f}" y="{height - margin + 16}" class="tick" text-anchor="middle">{value}</text>')
        parts.append(f'<text x="{margin - 8}" y="{y(value) + 4:.1f}" class="tick" text-anchor="end">{value}</text>')
    parts.append(f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle">{escape(x_label)}</text>')
    parts.append(f'<text x="14" y="{height / 2}" text-anchor="middle" transform="rotate(-90 14 {height / 2})">{escape(y_label)}</text>')
    for bubble in bubbles:
        colour = series_colour(bubble.series)
        parts.append(
            f'<a href="#{escape(bubble.link)}"><circle cx="{x(bubble.x):.1f}" cy="{y(bubble.y):.1f}" r="{bubble.radius:g}" fill="{colour}" '
            f'fill-opacity="0.45" stroke="{colour}"><title>{escape(bubble.tooltip)}</title></circle></a>'
        )
    for index, name in enumerate(series):
        top = margin + 14 + 16 * index
        parts.append(f'<circle cx="{width - margin - 150}" cy="{top - 4}" r="5" fill="{series_colour(index)}"/>')
        parts.append(f'<text x="{width - margin - 140}" y="{top}" class="legend">{escape(_truncate(name, 24))}</text>')
    parts.append("</svg>")
    return "".join(parts)
