"""Small inline SVG charts for the HTML report and the monitor: no library, no network.

    >>> "<svg" in bars([("1", 0), ("5", 3)], title="correctness")
    True

Every chart prints its numbers as text too, so a reader (or a test) sees the
values without hovering, and each mark has a <title> tooltip.
"""

from __future__ import annotations

from html import escape
from typing import Sequence

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2")


def _fmt(value: float) -> str:
    if float(value).is_integer() or abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def bars(items: Sequence[tuple[str, float]], title: str = "", width: int = 260, height: int = 140,
         color: str = PALETTE[0]) -> str:
    """Vertical bars, one per (label, value), with the value above each bar."""
    top, bottom, side = 34, 22, 8
    plot_h = height - top - bottom
    slot = (width - 2 * side) / max(1, len(items))
    peak = max((v for _, v in items), default=0) or 1
    parts = [_open(width, height, title), _text(width / 2, 14, title, anchor="middle", weight="600")]
    for i, (label, value) in enumerate(items):
        h = plot_h * value / peak
        x = side + i * slot + slot * 0.15
        y = top + plot_h - h
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{h:.1f}" fill="{color}">'
                     f"<title>{escape(label)}: {_fmt(value)}</title></rect>")
        parts.append(_text(x + slot * 0.35, y - 3, _fmt(value), anchor="middle", cls="v"))
        parts.append(_text(x + slot * 0.35, height - 6, label, anchor="middle"))
    return "".join(parts) + "</svg>"


def hbars(items: Sequence[tuple[str, float]], title: str = "", width: int = 320, color: str = PALETTE[1]) -> str:
    """Horizontal bars (label, value), largest first: for breakdowns by tool or provider."""
    row, top, label_w = 20, 22, 130
    height = top + row * max(1, len(items)) + 6
    peak = max((v for _, v in items), default=0) or 1
    parts = [_open(width, height, title), _text(4, 14, title, weight="600")]
    if not items:
        parts.append(_text(4, top + 14, "none", cls="muted"))
    for i, (label, value) in enumerate(items):
        y = top + i * row
        w = (width - label_w - 40) * value / peak
        parts.append(_text(4, y + 14, label[:22]))
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row - 6}" fill="{color}">'
                     f"<title>{escape(label)}: {_fmt(value)}</title></rect>")
        parts.append(_text(label_w + w + 4, y + 14, _fmt(value), cls="v"))
    return "".join(parts) + "</svg>"


def lines(labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], title: str = "",
          width: int = 520, height: int = 180, unit: str = "", y_max: float | None = None) -> str:
    """Line chart over shared x labels (time buckets); ``None`` leaves a gap."""
    top, bottom, left, right = 24, 24, 64, 14
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, ys in series for v in ys if v is not None]
    peak = y_max if y_max is not None else (max(values, default=0) or 1) * 1.1
    step = plot_w / max(1, len(labels) - 1)
    def x_of(i: int) -> float:
        return float(left + (i * step if len(labels) > 1 else plot_w / 2))

    def y_of(v: float) -> float:
        return float(top + plot_h - plot_h * v / peak)
    parts = [_open(width, height, title), _text(left, 14, title, weight="600")]
    for frac in (0, 0.5, 1):
        y = top + plot_h * (1 - frac)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e7eb"/>')
        parts.append(_text(left - 4, y + 4, _fmt(peak * frac) + unit, anchor="end", cls="muted"))
    ends = {0: "start", len(labels) - 1: "end"} if len(labels) > 1 else {}
    for i in sorted({0, len(labels) // 2, len(labels) - 1}) if labels else ():
        parts.append(_text(x_of(i), height - 6, labels[i], anchor=ends.get(i, "middle"), cls="muted"))
    for n, (name, ys) in enumerate(series):
        color = PALETTE[n % len(PALETTE)]
        points = [(x_of(i), y_of(v), v, labels[i]) for i, v in enumerate(ys) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y, v, label in points:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}">'
                         f"<title>{escape(name)} {escape(label)}: {_fmt(v)}{escape(unit)}</title></circle>")
        parts.append(_text(width - right - 4, top + 12 + 13 * n, name, anchor="end", fill=color))
    return "".join(parts) + "</svg>"


def _open(width: int, height: int, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">')


def _text(x: float, y: float, text: str, anchor: str = "start", weight: str = "400", cls: str = "",
          fill: str = "") -> str:
    extra = f' class="{cls}"' if cls else ""
    extra += f' fill="{fill}"' if fill else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-weight="{weight}"{extra}>'
            f"{escape(text)}</text>")
