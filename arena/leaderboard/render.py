"""Leaderboard outputs: rich table, JSON, CSV, Markdown (HTML lives in ``html.py``)."""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from rich.cells import cell_len
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from arena import strict_json
from arena.leaderboard.stats import BotStats, Leaderboard
from arena.render import fitted, printable
from arena.render import fixed as _fixed  # (the name its tests know)
from engine.record import ordinal

__all__ = [
    "FORMATS",
    "render",
    "to_csv",
    "to_json",
    "to_markdown",
    "to_rich_table",
    "to_screen",
    "write_outputs",
]

FORMATS = ("json", "csv", "md", "html")
# A screen table cuts the bot names to this many cells before it leaves out a column.
_NAME_MIN = 20


def _f(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else _fixed(x, digits)


def _mean_ci(r: BotStats) -> str:
    if r.mean_per_deal is None:
        return "–"
    if r.ci95 is None:
        return _fixed(r.mean_per_deal, 1, "+")
    return f"{_fixed(r.mean_per_deal, 1, '+')} ± {_fixed(r.ci95, 1)}"


def _made(r: BotStats) -> str:
    return f"{r.contracts_made}/{r.contracts}" + (
        f" ({_fixed(r.made_pct, 0)}%)" if r.made_pct is not None else ""
    )


def _strikes(r: BotStats) -> str:
    s = r.strikes
    return f"{s.get('timeouts', 0)}/{s.get('illegal', 0)}/{s.get('disconnects', 0)}"


def column_names(lb: Leaderboard) -> list[str]:
    """The standings' column headers of the Markdown and HTML pages (the screen's table
    and the CSV file name theirs otherwise)."""
    return [
        "rank", "bot", "μ−3σ", "μ", "σ", "matches",
        *(ordinal(k) for k in range(1, lb.players + 1)),
        "score/deal (95% CI)", "bids won", "contracts made",
        "strikes T/I/D", "forfeits", "median ms",
    ]  # fmt: skip


#: What the columns of :func:`column_names` hold that their headings do not say, under the
#: Markdown and HTML tables. "contracts made 2/113" beside "bids won 143" read as a
#: miscount (concessions and throw-ins are bids won but no contract played), and the
#: Markdown file left the median's unit and the forfeits unexplained.
LEGEND = (
    "Score/deal: the mean score change per deal with its 95% interval. Bids won: the deals "
    "the bot declared. Contracts made: made / played (a concession or a throw-in is a bid "
    "won but no contract played). Strikes T/I/D: timeouts / illegal or malformed decisions "
    "/ disconnects. Forfeits: the matches the bot forfeited. Median ms: the bot's median "
    "decision time, forced moves left out."
)


def row_cells(r: BotStats) -> list[str]:
    """One bot's row of the standings, under :func:`column_names`."""
    return [
        str(r.rank), r.bot, _f(r.conservative, 2), _f(r.mu, 2), _f(r.sigma, 2),
        str(r.matches), *(str(n) for n in r.places), _mean_ci(r), str(r.bids_won), _made(r),
        _strikes(r), str(r.strikes.get("forfeits", 0)), _f(r.median_ms),
    ]  # fmt: skip


def board_title(lb: Leaderboard) -> str:
    """The leaderboard's heading: the tournament and how far it has got."""
    if lb.total_matches <= 0:
        # `arena serve --db` without --matches: no number is set until it ends (not
        # "5/0 matches played")
        status = "finished" if lb.finished_at else "not finished, no set number of matches"
    elif lb.completed == lb.total_matches:
        status = "finished"
    else:
        status = f"{lb.completed}/{lb.total_matches} matches played"
    played = f"{lb.completed} match{'' if lb.completed == 1 else 'es'}"
    rules = lb.ruleset_heading or lb.ruleset
    # a run of `deals = "independent"` says so: it read as the duplicate run of the same
    # config, and the two are told apart by how much luck is in their standings
    deals = f"{lb.deals_note}, " if lb.deals_note else ""
    if lb.season:  # (several tournaments: how many, and whether all of them are finished)
        open_ = sum(1 for t in lb.season if t["finished_at"] is None)
        # (the tournaments: "1 of them" after "16 matches" read as one match)
        status = (f"{open_} tournament{'' if open_ == 1 else 's'} not finished" if open_
                  else "finished")  # fmt: skip
        n = len(lb.season)
        return (f"season {lb.name} — {rules}, {lb.players} players, {deals}{n} tournament"
                f"{'' if n == 1 else 's'}, {played} ({status})")  # fmt: skip
    return f"{lb.name} — {rules}, {lb.players} players, {deals}{played} ({status})"


def source_line(lb: Leaderboard, *, start: bool = False) -> str:
    """Where the figures come from: ``tournament ID``, or a season's tournaments (``start``:
    as a sentence starts, ``Tournament ID``)."""
    if lb.season:
        line = "season of tournaments " + ", ".join(t["id"] for t in lb.season)
    else:
        line = f"tournament {lb.tournament_id}"
    return line[:1].upper() + line[1:] if start else line


def to_rich_table(lb: Leaderboard, width: int | None = None) -> Table:
    """The leaderboard for the screen (the files have every column).

    With a ``width``, the table fits in it without cutting a number: the bot names are cut
    in the middle (with …) to what is left, and when that leaves a name too short, columns go, least
    important first (median ms, contracts made, then the shorter headers of the narrow
    table, then bids, points per deal, strikes, matches and places); μ−3σ, μ and σ stay.
    """
    # Names are the user's: not rich markup, and shown with the escape sequences a terminal
    # would obey written out (``\x1b``), as `arena replay` shows them: a stored name holding
    # one (a database written elsewhere) was obeyed (``\x1b[31m`` turned the screen red).
    t = Table(title=Text(printable(board_title(lb))))
    places = "/".join(ordinal(k) for k in range(1, lb.players + 1))
    rows: list[dict[str, str]] = []
    for r in lb.rows:
        s = r.strikes
        rows.append({
            "#": str(r.rank), "bot": printable(r.bot), "μ−3σ": _f(r.conservative, 2),
            "μ": _f(r.mu, 2), "σ": _f(r.sigma, 2), "matches": str(r.matches),
            places: "/".join(str(n) for n in r.places),
            "places": "/".join(str(n) for n in r.places),
            "pts/deal ±95%": _mean_ci(r), "pts/deal": _mean_ci(r).replace(" ", ""),
            "bids won": str(r.bids_won), "bids": str(r.bids_won), "made": _made(r),
            "strikes": f"{s.get('timeouts', 0)}/{s.get('illegal', 0)}/"
            f"{s.get('disconnects', 0)}/{s.get('forfeits', 0)}",
            "ms": _f(r.median_ms, 0),
        })  # fmt: skip
    full = ["#", "bot", "μ−3σ", "μ", "σ", "matches", places, "pts/deal ±95%", "bids won",
            "made", "strikes", "ms"]  # fmt: skip
    narrow = ["#", "bot", "μ−3σ", "μ", "σ", "matches", "places", "pts/deal", "bids", "strikes"]
    layouts = [full, full[:-1], full[:-3] + full[-2:-1], narrow, narrow[:-2] + narrow[-1:],
               narrow[:-3] + narrow[-1:], narrow[:-3], narrow[:5]]  # fmt: skip

    def cell_width(c: str) -> int:
        return max([cell_len(c), *(cell_len(row[c]) for row in rows)])

    longest = cell_width("bot")
    cols, name_width = full, longest
    if width is not None:
        shortest = min(longest, _NAME_MIN)
        for cols in layouts:
            # each column has one space of padding either side and one border line
            others = sum(cell_width(c) + 3 for c in cols if c != "bot")
            name_width = min(longest, width - others - 4)
            if name_width >= shortest:
                break
        name_width = max(name_width, 1)
        for row in rows:
            row["bot"] = _cut_middle(row["bot"], name_width)
    # Each legend only where its column is (a narrow terminal drops them); "made 2/113"
    # beside "bids won 143" read as a miscount without its own (LEGEND, in the files)
    legends = {"made": "made: contracts made/played (not conceded or thrown in)",
               "ms": "ms: median decision",
               "strikes": "strikes: timeouts/illegal/disconnects/forfeits"}  # fmt: skip
    legend = "".join(f" · {text}" for c, text in legends.items() if c in cols)
    failed = failed_note(lb, lambda b: _cut_middle(printable(b), _NAME_MIN))
    failed = f" · {failed}" if failed else ""
    notes = "".join(f" · {printable(n)}" for n in lb.notes)
    t.caption = f"{printable(source_line(lb))} · sorted by μ−3σ{legend}{failed}{notes}"
    for c in cols:
        t.add_column(
            c,
            justify="left" if c == "bot" else "right",
            no_wrap=True,
            overflow="ellipsis",
            min_width=cell_width(c) if c != "bot" else None,
            max_width=name_width if c == "bot" else None,
        )
    for r, row in zip(lb.rows, rows, strict=True):
        t.add_row(
            *(Text(row[c], overflow="ellipsis") if c == "bot" else row[c] for c in cols),
            style="bold" if r.rank == 1 else None,
        )
    return t


#: How many bots the line of failed decisions names, those that failed most first: with
#: every one named, a tournament where many bots failed had a paragraph under its table.
_FAILED_NAMED = 5


def failed_note(lb: Leaderboard, name: Callable[[str], str] = str) -> str:
    """The bots that failed decisions (``bot_error``: their code raised, their client sent a
    fallback, a legal answer) and how many, most first, ``name`` showing a bot's name: no
    strike, but the organiser is to see that a bot crashes. "" when none did. Past
    :data:`_FAILED_NAMED` bots, the rest are counted: "decisions failed (bot_error, no
    strike): mine 45, b 3, ... and 4 more bots (each row's bot_errors in the JSON and CSV
    files)"."""
    failing = sorted((r for r in lb.rows if r.bot_errors), key=lambda r: -r.bot_errors)
    if not failing:
        return ""
    named = ", ".join(f"{name(r.bot)} {r.bot_errors}" for r in failing[:_FAILED_NAMED])
    more = len(failing) - _FAILED_NAMED
    if more > 0:
        named += (f" and {more} more bot{'s' if more > 1 else ''} (each row's bot_errors "
                  "in the JSON and CSV files)")  # fmt: skip
    return f"decisions failed (bot_error, no strike): {named}"


def to_screen(lb: Leaderboard, width: int) -> RenderableType:
    """The leaderboard for a terminal ``width`` columns wide: :func:`to_rich_table`, or
    where even its narrowest layout leaves the bot names too short (``COLUMNS=30``: cut to
    "…", and σ cut off), every column of it as ``header: value`` lines, a block per bot."""
    table = to_rich_table(lb, width)
    bot = next(c for c in table.columns if c.header == "bot")
    longest = max([cell_len("bot"), *(cell_len(printable(r.bot)) for r in lb.rows)])
    if bot.max_width is not None and bot.max_width < min(longest, _NAME_MIN):
        return fitted(to_rich_table(lb))
    return table


def _cut_middle(name: str, width: int) -> str:
    """``name`` in ``width`` cells: whole when it fits, else its start and its end about an
    ``…``. Cut at the end, bots named alike but for their ends (``...-v1``, ``...-v2``: an
    author's versions) all read as the same name, and the table no longer said which was
    which.

    >>> _cut_middle("experimental-bot-v1", 9), _cut_middle("abc", 3), _cut_middle("abcd", 1)
    ('expe…t-v1', 'abc', '…')
    """
    if cell_len(name) <= width:
        return name
    room = width - 1  # the ellipsis takes one cell
    head_room, tail_room = room // 2, room - room // 2
    head, used = "", 0
    for ch in name:
        if used + cell_len(ch) > head_room:
            break
        head, used = head + ch, used + cell_len(ch)
    tail, used = "", 0
    for ch in reversed(name):
        if used + cell_len(ch) > tail_room:
            break
        tail, used = ch + tail, used + cell_len(ch)
    return f"{head}…{tail}"


def to_json(lb: Leaderboard) -> str:
    return strict_json.dumps(lb.to_dict(), ensure_ascii=False, indent=2) + "\n"


def to_csv(lb: Leaderboard) -> str:
    """One row per bot, plain numbers (machine-friendly columns), and last the ruleset as
    :func:`engine.rules.describe_ruleset` says it."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        ["rank", "bot", "conservative", "mu", "sigma", "matches"]
        + [f"place_{k}" for k in range(1, lb.players + 1)]
        + [
            "deals",
            "mean_per_deal",
            "ci95",
            "bids_won",
            "contracts",
            "contracts_made",
            "concessions",
            "timeouts",
            "illegal",
            "disconnects",
            "forfeits",
            "decisions",
            "median_ms",
            "mean_final_score",
            # (last: a reader by position finds the old columns where they were) which
            # rules ran: two files of one tournament name may come from other house rules
            "ruleset",
            # (after it, for the same reason) decisions the bot failed: no strike
            "bot_errors",
            # A season's: how many of its tournaments the bot played in, and 1 when its
            # launch or code changed between them (its notes say how)
            *(["tournaments", "changed"] if lb.season else []),
        ]
    )

    def num(x: float | None, d: int = 4) -> str:
        # (halfway away from zero, as the screen, the other files and the web round: a
        # mean final score of 105.625 was 105.62 here, Python's format rounding to even)
        return "" if x is None else _fixed(x, d)

    for r in lb.rows:
        s = r.strikes
        w.writerow(
            [
                r.rank,
                r.bot,
                num(r.conservative),
                num(r.mu),
                num(r.sigma),
                r.matches,
                *r.places,
                r.deals,
                num(r.mean_per_deal),
                num(r.ci95),
                r.bids_won,
                r.contracts,
                r.contracts_made,
                r.concessions,
                s.get("timeouts", 0),
                s.get("illegal", 0),
                s.get("disconnects", 0),
                s.get("forfeits", 0),
                r.decisions,
                num(r.median_ms, 2),
                num(r.mean_score, 2),
                _csv_text(lb.ruleset_description or lb.ruleset),
                r.bot_errors,
                *(_season_cells(lb, r.bot) if lb.season else []),
            ]
        )
    return buf.getvalue()


def _season_cells(lb: Leaderboard, bot: str) -> list[int]:
    """A season's last CSV columns of ``bot``: how many of its tournaments the bot played
    in, and 1 when its launch or code changed between them."""
    changed = any(bot in t["bots_changed"] for t in lb.season)
    return [sum(bot in t["bots"] for t in lb.season), int(changed)]


def _csv_text(text: str) -> str:
    """A text cell a spreadsheet shows as text: a ruleset may be named ``=HYPERLINK(...)``,
    which Excel or LibreOffice opening the file would run as a formula (bot names cannot
    start so). The OWASP advice: such a cell starts with a quote."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _md_escape(s: str) -> str:
    # A name is the user's text: no table cell break, no HTML (Markdown renders it), and no
    # emphasis, code or link (`x._y_` is a bot name, not "x." and an emphasised "y").
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]~|])", r"\\\1", s)


def h2h_cell(lb: Leaderboard, a: str, b: str) -> str:
    """'ahead–behind' of a against b, with ties when there are any."""
    if a == b:
        return "—"
    n = lb.h2h.together[a][b]
    if n == 0:
        return "·"
    ties = lb.h2h.ties(a, b)
    return f"{lb.h2h.ahead[a][b]}–{lb.h2h.behind(a, b)}" + (f" ({ties}=)" if ties else "")


def to_markdown(lb: Leaderboard) -> str:
    cols = column_names(lb)
    failed = failed_note(lb)
    source = (_md_escape(source_line(lb, start=True)) if lb.season
              else f"Tournament `{lb.tournament_id}`")  # fmt: skip
    lines = [f"# {_md_escape(board_title(lb))}", "",
             f"{source}, generated {lb.generated_at}. Sorted by the "
             "conservative rating μ−3σ (TrueSkill, each match a free-for-all by final place).",
             "", "| " + " | ".join(cols) + " |",
             "|" + "|".join("---:" if c != "bot" else ":---" for c in cols) + "|"]  # fmt: skip
    for r in lb.rows:
        lines.append("| " + " | ".join(_md_escape(c) for c in row_cells(r)) + " |")
    lines += [
        "",
        _md_escape(LEGEND),
        *(["", _md_escape(failed) + "."] if failed else []),
        *(x for n in lb.notes for x in ("", _md_escape(n) + ".")),
        "",
        "## Head to head",
        "",
        "Row bot against column bot: matches where the row finished ahead – behind (ties).",
        "",
    ]
    bots = lb.h2h.bots
    lines.append("| | " + " | ".join(_md_escape(b) for b in bots) + " |")
    lines.append("|:---|" + "|".join(":---:" for _ in bots) + "|")
    for a in bots:
        lines.append(
            f"| **{_md_escape(a)}** | " + " | ".join(h2h_cell(lb, a, b) for b in bots) + " |"
        )
    return "\n".join(lines) + "\n"


def render(lb: Leaderboard, fmt: str) -> str:
    """The leaderboard as text in one of :data:`FORMATS`."""
    if fmt == "json":
        return to_json(lb)
    if fmt == "csv":
        return to_csv(lb)
    if fmt == "md":
        return to_markdown(lb)
    if fmt == "html":
        from arena.leaderboard.html import to_html

        return to_html(lb)
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def write_outputs(
    lb: Leaderboard, out_dir: Path, formats: tuple[str, ...] = FORMATS
) -> dict[str, Path]:
    """Write ``leaderboard.<ext>`` for each format into ``out_dir``; returns the paths.

    Every file is written to a temporary name first, and only once all are written are they
    renamed: a reader never sees half a file, and a write that fails (a full disk) or is
    interrupted leaves the earlier files as they were, all of one run, and no temporary
    file behind. Two writers into one directory at once (two runs sharing an ``out``, an
    ``arena leaderboard --format all`` beside a run) take turns (:func:`_writing_into`):
    one renamed the other's temporary files, half written, and then failed on its own.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {fmt: out_dir / f"leaderboard.{fmt}" for fmt in formats}
    with _writing_into(out_dir):
        written: list[tuple[Path, Path]] = []
        try:
            for fmt, path in paths.items():
                tmp = path.with_name(path.name + ".tmp")
                written.append((tmp, path))
                tmp.write_text(render(lb, fmt), encoding="utf-8")
        except BaseException as e:
            for tmp, _ in written:
                with contextlib.suppress(OSError):
                    tmp.unlink()
            if isinstance(e, OSError) and e.filename == str(written[-1][0]):
                # (the file the user asked for, not "leaderboard.json.tmp", named)
                raise OSError(e.errno, e.strerror, str(written[-1][1])) from e
            raise
        for tmp, path in written:
            tmp.replace(path)
    return paths


@contextlib.contextmanager
def _writing_into(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the directory ``out_dir`` itself (``flock``: no file of its
    own) while the block writes the leaderboard files into it. Where the directory cannot
    be locked (a file system without ``flock``) the block runs unlocked, as before."""
    try:
        fd = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)  # (released when fd is closed)
        yield
    finally:
        os.close(fd)
