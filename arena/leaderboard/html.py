"""A self-contained HTML leaderboard: inline CSS and SVG plots, no script, no CDN.

The page holds the leaderboard table, the rating history of every bot (μ as a line with a
±σ band, x = schedule index) and the head-to-head table.
"""

from __future__ import annotations

import math
from html import escape

from arena.leaderboard.render import (
    LEGEND,
    board_title,
    column_names,
    failed_note,
    h2h_cell,
    row_cells,
    source_line,
)
from arena.leaderboard.stats import Leaderboard

__all__ = ["rating_svg", "to_html"]

#: The first ten series colours; ``arena web`` draws its rating plot with the same scheme
#: (``colorOf`` in ``arena/web/static/common.js``), so a bot has one colour in both.
PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
    "#17becf", "#7f7f7f", "#bcbd22",
)  # fmt: skip

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1400px;padding:0 1rem;color:#222;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.25rem .45rem;text-align:right;white-space:nowrap}
th{background:#f4f4f4}td.bot,th.bot{text-align:left;font-weight:600}
tr:first-child td{background:#fffbe6}
.note{color:#666;font-size:.85rem}
.wrap{overflow-x:auto}
.h2h td{text-align:center}
svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#333}
.legend span{display:inline-block;margin-right:1rem}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;
vertical-align:-1px}
"""


def _color(i: int) -> str:
    """The colour of the ``i``-th series: ``PALETTE``, then hues a golden angle apart in
    three lightnesses (no two of the first 500 alike; the palette repeated after ten)."""
    if i < len(PALETTE):
        return PALETTE[i]
    k = i - len(PALETTE)
    return _hsl_hex((k * 137.508 + 20) % 360, 0.65, (0.42, 0.3, 0.55)[k % 3])


def _hsl_hex(h: float, s: float, lightness: float) -> str:
    """CSS ``hsl()`` as ``#rrggbb``, computed as ``common.js`` computes it (same digits)."""
    a = s * min(lightness, 1 - lightness)

    def channel(n: int) -> str:
        k = (n + h / 30) % 12
        v = lightness - a * max(-1, min(k - 3, 9 - k, 1))
        return f"{math.floor(v * 255 + 0.5):02x}"

    return "#" + "".join(channel(n) for n in (0, 8, 4))


def _nice_ticks(lo: float, hi: float, n: int = 5, *, integer: bool = False) -> list[float]:
    """Round tick values from ``lo`` to ``hi``; ``integer``: whole numbers only (an axis of
    matches: 2 matches had the ticks 0, 0.2, ..., 1, printed "0 0 0 0 0 1")."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    steps = (1, 2, 5, 10) if integer else (1, 2, 2.5, 5, 10)
    step = next(m * mag for m in steps if m * mag >= raw)
    if integer:
        step = max(1, round(step))
    start = step * int(lo // step)
    ticks = []
    t = start
    while t <= hi + 1e-9:
        if t >= lo - 1e-9:
            ticks.append(round(t, 6))
        t += step
    return ticks


def rating_svg(lb: Leaderboard, width: int = 900, height: int = 360) -> str:
    """Rating history: per bot, μ after each of its matches with a ±σ band."""
    series = [(b, lb.history.get(b, [])) for b in lb.h2h.bots]
    pts = [p for _, s in series for p in s]
    if not any(p[0] >= 0 for p in pts):  # only the prior (index -1) of every bot
        return "<p class='note'>No rated matches yet.</p>"
    left, right, top, bottom = 48, 16, 12, 36
    w, h = width - left - right, height - top - bottom
    x_lo, x_hi = -1, max(max(p[0] for p in pts), 0)
    y_lo = min(p[1] - p[2] for p in pts)
    y_hi = max(p[1] + p[2] for p in pts)
    pad = (y_hi - y_lo) * 0.05 or 1.0
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def X(x: float) -> float:
        return left + (x - x_lo) / max(1, x_hi - x_lo) * w

    def Y(y: float) -> float:
        return top + (y_hi - y) / (y_hi - y_lo) * h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="100%" role="img" aria-label="rating history">',
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>',
    ]
    for t in _nice_ticks(y_lo, y_hi):
        y = Y(t)
        out.append(
            f'<line x1="{left}" x2="{left + w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e6e6e6"/>'
        )
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{t:g}</text>')
    for t in _nice_ticks(max(0, x_lo), x_hi, integer=True):
        x = X(t)
        out.append(f'<text x="{x:.1f}" y="{top + h + 16}" text-anchor="middle">{int(t)}</text>')
    out.append(
        f'<text x="{left + w / 2:.1f}" y="{height - 4}" text-anchor="middle">'
        "match (schedule index)</text>"
    )
    out.append(
        f'<text x="12" y="{top + h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + h / 2:.1f})">μ (±σ)</text>'
    )
    for i, (bot, s) in enumerate(series):
        if not s:
            continue
        c = _color(i)
        upper = " ".join(f"{X(x):.1f},{Y(mu + sg):.1f}" for x, mu, sg in s)
        lower = " ".join(f"{X(x):.1f},{Y(mu - sg):.1f}" for x, mu, sg in reversed(s))
        # (no hover of its own: drawn over the lines before it, it hid their titles)
        out.append(
            f'<polygon points="{upper} {lower}" fill="{c}" fill-opacity="0.12" '
            'pointer-events="none"/>'
        )
        line = " ".join(f"{X(x):.1f},{Y(mu):.1f}" for x, mu, _ in s)
        out.append(
            f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2">'
            f"<title>{escape(bot)}</title></polyline>"
        )
        x, mu, sg = s[-1]
        out.append(
            f'<circle cx="{X(x):.1f}" cy="{Y(mu):.1f}" r="3" fill="{c}">'
            f"<title>{escape(bot)}: μ={mu:.2f} σ={sg:.2f}</title></circle>"
        )
    out.append("</svg>")
    legend = "".join(
        f'<span><i class="sw" style="background:{_color(i)}"></i>{escape(b)}</span>'
        for i, (b, _) in enumerate(series)
    )
    return "\n".join(out) + f'\n<div class="legend">{legend}</div>'


def _places_svg(places: list[int]) -> str:
    """A small stacked bar of a bot's finishing places (1st darkest)."""
    total = sum(places) or 1
    w, h = 90, 12
    x = 0.0
    parts = []
    shades = ("#2b8a3e", "#74b816", "#fab005", "#e8590c")
    for k, n in enumerate(places):
        bw = w * n / total
        if bw > 0:
            parts.append(
                f'<rect x="{x:.1f}" y="0" width="{bw:.1f}" height="{h}" '
                f'fill="{shades[k % len(shades)]}"><title>{k + 1}: {n}</title></rect>'
            )
        x += bw
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}">{"".join(parts)}</svg>'
    )


def _h2h_color(share: float | None) -> str:
    if share is None:
        return "#fff"
    # red (0) .. white (0.5) .. green (1)
    if share >= 0.5:
        a = (share - 0.5) * 2
        return f"rgba(43,138,62,{0.1 + 0.5 * a:.2f})"
    a = (0.5 - share) * 2
    return f"rgba(224,49,49,{0.1 + 0.5 * a:.2f})"


def to_html(lb: Leaderboard) -> str:
    """The whole page as one string (no external resources)."""
    cols = column_names(lb)
    head = "".join(
        f'<th class="bot">{escape(c)}</th>' if c == "bot" else f"<th>{escape(c)}</th>"
        for c in [*cols, "places"]
    )
    body = []
    for r in lb.rows:
        cells = row_cells(r)
        tds = "".join(
            f'<td class="bot">{escape(v)}</td>' if c == "bot" else f"<td>{escape(v)}</td>"
            for c, v in zip(cols, cells, strict=True)
        )
        body.append(f"<tr>{tds}<td>{_places_svg(r.places)}</td></tr>")
    bots = lb.h2h.bots
    h2h_head = "".join(f"<th>{escape(b)}</th>" for b in bots)
    h2h_rows = []
    for a in bots:
        tds = "".join(
            f'<td style="background:{_h2h_color(lb.h2h.score(a, b) if a != b else None)}">'
            f"{escape(h2h_cell(lb, a, b))}</td>"
            for b in bots
        )
        h2h_rows.append(f'<tr><td class="bot">{escape(a)}</td>{tds}</tr>')
    failed = failed_note(lb)
    failed = f'\n<p class="note">{escape(failed)}.</p>' if failed else ""
    failed += "".join(f'\n<p class="note">{escape(n)}.</p>' for n in lb.notes)
    # Both tables scroll in their own box (.wrap): the head to head of 55 bots was 5,000 px
    # wide and made the whole page scroll sideways, its title and plot with it.
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(lb.name)} — Thousand Arena leaderboard</title>
<style>{_CSS}</style></head>
<body>
<h1>{escape(board_title(lb))}</h1>
<p class="note">{escape(source_line(lb, start=True))} · generated
{escape(lb.generated_at)} · TrueSkill, every match a free-for-all by final place; sorted by
the conservative rating μ−3σ.</p>
<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>
{"".join(body)}
</tbody></table></div>
<p class="note">{escape(LEGEND)}</p>{failed}
<h2>Rating history</h2>
{rating_svg(lb)}
<h2>Head to head</h2>
<p class="note">Row bot against column bot, in the matches they played together: finished
ahead – behind (ties).</p>
<div class="wrap"><table class="h2h"><thead><tr><th></th>{h2h_head}</tr></thead><tbody>
{"".join(h2h_rows)}
</tbody></table></div>
</body></html>
"""
