"""Rulesets: every house-rule option of ``docs/RULES.md`` as one frozen value.

A ruleset is data: a named preset (``classic``, ``1001``, ``1001-4p``) or a TOML file that
names a preset and overrides some options::

    preset = "classic"
    concede = "penalty"
    barrel_mode = "one"

>>> PRESETS["1001"].target, PRESETS["classic"].opening_bid
(1001, 100)
>>> Ruleset.from_dict({"preset": "classic", "must_beat": True}).must_beat
True
>>> describe_ruleset(Ruleset.from_dict({"preset": "classic", "must_beat": True}))
'classic (must_beat on)'
>>> Ruleset.from_dict({"preset": "classic", "concede": "maybe"})
Traceback (most recent call last):
...
engine.rules.RulesetError: concede: must be one of 'free', 'penalty', 'off', got 'maybe'
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import json
import os
import re
import stat
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

__all__ = [
    "PRESETS",
    "Ruleset",
    "RulesetError",
    "TomlFileError",
    "describe_ruleset",
    "describe_run",
    "did_you_mean",
    "load_ruleset",
    "preset",
    "read_toml_file",
    "split_toml_key",
    "toml_key",
    "toml_shown",
    "toml_value_problem",
    "written_out",
]


class RulesetError(ValueError):
    """A bad ruleset: unknown preset or key, wrong type or value. ``key`` names the option,
    ``message`` what is wrong with it; ``source`` the ruleset file, when it came from one.

    The text is ``key: message``, or ``source: key: message`` for a file (``source:
    message`` when the file itself is at fault, ``key`` ``"file"``), as a tournament
    config's errors are: each command prints it as it is, so all say the same words.
    """

    def __init__(self, key: str, message: str, source: str | None = None) -> None:
        text = f"{key}: {message}"
        if source is not None:
            text = f"{source}: {message}" if key == "file" else f"{source}: {text}"
        super().__init__(text)
        self.key = key
        self.message = message
        self.source = source


class TomlFileError(ValueError):
    """A TOML file that cannot be read: why, without the path (the caller names it).
    ``key_set_twice``: a key given a second time (the message quotes its line)."""

    def __init__(self, message: str, key_set_twice: bool = False) -> None:
        super().__init__(message)
        self.key_set_twice = key_set_twice


def did_you_mean(word: object, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)``, ``x`` being the name in ``known`` nearest to the misspelt
    ``word``; ``""`` when none is near (or ``word`` is no string). For "unknown key"
    messages: every file the product reads says it the same way."""
    if not isinstance(word, str):
        return ""
    # A name cut short ("matches" for matches_per_table) is nearer by meaning than by
    # spelling, where difflib would offer "match_timeout_s": the one name it begins wins.
    names = sorted(known)  # (read once: ``known`` may be an iterator)
    found = [k for k in names if word and k.startswith(word)]
    if len(found) != 1:
        found = difflib.get_close_matches(word, names, n=1)
    return f" (did you mean {found[0]!r}?)" if found else ""


#: The longest value, key or line a message quotes: a whole file's worth in one string
#: is no clear line.
_SHOWN_MAX = 100


def toml_shown(value: object, limit: int = _SHOWN_MAX) -> str:
    """A value read from TOML as TOML writes it, for a message (a ruleset file's, a
    tournament config's): the organiser wrote ``true``, ``{ a = 1 }`` or ``2020-01-01``,
    and read back Python's ``True``, ``{'a': 1}`` and ``datetime.date(2020, 1, 1)``. A
    string keeps its quotes, its control characters escaped (``repr``); the whole is cut
    at ``limit`` characters."""

    def shown(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, datetime.date | datetime.time):
            return v.isoformat()
        if isinstance(v, list):
            return "[" + ", ".join(shown(x) for x in v) + "]"
        if isinstance(v, dict):  # (an empty table is "{}", not "{  }")
            inner = ", ".join(f"{toml_key(str(k))} = {shown(x)}" for k, x in v.items())
            return "{ " + inner + " }" if inner else "{}"
        return repr(v)

    text = shown(value)
    return text if len(text) <= limit else text[:limit] + "..."


_BARE_KEY_RE = re.compile(r"[A-Za-z0-9_-]+")


def toml_key(part: str, *, ensure_ascii: bool = True) -> str:
    """One part of a key as TOML writes it: bare when it may be (``max_deals``), else in
    double quotes, a quote or a backslash in it escaped (``"v1.2"``, ``"it's"``, ``""``).
    Unquoted, the bot "v1.2" made ``bots.v1.2.workers``: the bot "v1" and its key "2"?

    ``ensure_ascii`` (a key to paste, a value shown as TOML): a character past ASCII or a
    control character escaped as a JSON string, which is a TOML basic string too, escapes
    it (``"\\u00fc"``). ``ensure_ascii=False`` (a key a message names, to be read): a
    letter of any script left as it is (``"über"``), a character a terminal would obey
    rather than show written out (``"\\x1b"``: :func:`written_out`), so that a key is one
    line of the message that changes nothing on the screen.

    >>> print(toml_key("workers"), toml_key("v1.2"), toml_key("it's"), toml_key("über"))
    workers "v1.2" "it's" "\\u00fcber"
    >>> print(toml_key("über", ensure_ascii=False), toml_key("a\\n\\x1b", ensure_ascii=False))
    "über" "a\\x0a\\x1b"
    """
    if _BARE_KEY_RE.fullmatch(part):
        return part
    if ensure_ascii:
        return json.dumps(part)
    escaped = part.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else written_out(c) for c in escaped) + '"'


def written_out(c: str) -> str:
    """The character ``c`` written out: ``\\x1b``, ``\\u200f``, ``\\U000e0001``: how a
    message shows a character a terminal would obey (an escape sequence, a change of the
    text's direction) rather than show (``arena.render.printable`` writes them so too)."""
    n = ord(c)
    if n < 256:
        return f"\\x{n:02x}"
    if n < 0x10000:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"  # (as \\u and 5 digits, U+E0001 read as U+E000 and "1")


def _plain(text: str) -> str:
    """``text`` as it is when it is printable and short, else escaped (a newline in a key
    split the one-line message; an escape sequence recoloured the terminal) and cut."""
    if not text:  # (an empty key, `"" = 1`: "file: : unknown option" named nothing)
        return '""'
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= _SHOWN_MAX else text[:_SHOWN_MAX] + "..."


#: The largest TOML file read (a config, a ruleset, a tokens file): real ones take a few KiB;
#: a larger file is a mistake (a log or a disk image named by accident), and tomllib reads
#: the whole file into memory first (a sparse 64 GB file would be a MemoryError traceback).
MAX_TOML_BYTES = 16 << 20


def read_toml_file(path: str | Path) -> dict[str, Any]:
    """The TOML data of the file at ``path``. Raises :class:`TomlFileError` saying why not:
    "no such file", "cannot read: <the system's reason>", "not a regular file" (a FIFO
    would block the reader for ever, a device never end), "too large" (past
    :data:`MAX_TOML_BYTES`), "not valid TOML: ..." (a byte order mark too). Names too
    long for the system and NUL bytes are reasons too, not exceptions of another kind."""
    try:
        try:
            st = os.stat(path)
        except ValueError:  # os.stat's: a NUL byte in the path
            raise TomlFileError("cannot read: the path holds a NUL byte") from None
        if not stat.S_ISREG(st.st_mode):
            what = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO, device or socket"
            raise TomlFileError(f"not a regular file ({what})")
        if st.st_size > MAX_TOML_BYTES:  # tomllib reads it whole: a MemoryError, or GBs
            raise TomlFileError(
                f"too large for a TOML file here: {st.st_size:,} bytes (at most {MAX_TOML_BYTES:,})"
            )
        with open(path, "rb") as fh:
            data = fh.read(MAX_TOML_BYTES + 1)
        if data.startswith(b"\xef\xbb\xbf"):  # tomllib: "Invalid statement (line 1, column 1)"
            raise TomlFileError(
                "not valid TOML: the file starts with a byte order mark (BOM, as some Windows "
                "editors write): save it as UTF-8 without a BOM"
            )
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # Windows' "Unicode"
            raise TomlFileError(
                "not valid TOML: not UTF-8 text but UTF-16 (it starts with a UTF-16 byte "
                "order mark): save it as UTF-8"
            )
        if len(data) > MAX_TOML_BYTES:  # (grew since the stat)
            raise TomlFileError(f"too large for a TOML file here: over {MAX_TOML_BYTES:,} bytes")
        text = data.decode("utf-8")
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            twice = _set_twice(text, str(e))
            said = twice or _bare_word(text, str(e)) or _control_there(text, str(e))
            raise TomlFileError(
                f"not valid TOML: {e}{said}", key_set_twice=bool(twice) and "declare" not in str(e)
            ) from e
    except FileNotFoundError:
        raise TomlFileError("no such file") from None
    except RecursionError:  # arrays nested thousands deep: tomllib recurses
        raise TomlFileError("not valid TOML here: nested too deeply") from None
    except OSError as e:
        raise TomlFileError(f"cannot read: {e.strerror or e}") from e
    except ValueError as e:
        if isinstance(e, TomlFileError):
            raise
        if isinstance(e, tomllib.TOMLDecodeError):
            raise TomlFileError(f"not valid TOML: {e}") from e
        if isinstance(e, UnicodeDecodeError):
            raise TomlFileError(f"not valid TOML: not UTF-8 text: {_where_not_utf8(e)}") from e
        # tomllib's int() of a number past Python's 4300 digits (a ValueError that would
        # otherwise read as "a NUL byte in the path")
        raise TomlFileError(f"not valid TOML here: {toml_value_problem(e)}") from e


def _where_not_utf8(e: UnicodeDecodeError) -> str:
    """Where a file's first byte that is no UTF-8 is, and what it likely was: "(invalid
    continuation byte)" alone named neither line nor byte, in a file of hundreds of lines
    saved by an editor in Latin-1 or Windows-1252 (``café`` as the byte 0xE9)."""
    data = bytes(e.object)
    line = data.count(b"\n", 0, e.start) + 1
    # (in characters: the line's UTF-8 before it, an earlier 'ё' one column, not two)
    column = len(data[data.rfind(b"\n", 0, e.start) + 1 : e.start].decode("utf-8", "replace")) + 1
    byte = data[e.start]
    try:  # (0x81, 0x8D, 0x8F, 0x90, 0x9D: none, named by value alone)
        guess = bytes([byte]).decode("cp1252")
    except UnicodeDecodeError:
        guess = ""
    was = ""
    if guess.isprintable() and guess:
        # (0x80-0x9F are Latin-1's control codes, but Windows-1252's quotes and dashes: a
        # file written with Word's “smart quotes” holds 0x93 and 0x94)
        was = f", {guess!r} in {'Latin-1 or ' if byte >= 0xA0 else ''}Windows-1252"
    return (
        f"line {line}, column {column} holds the byte 0x{byte:02X}{was} ({e.reason}): "
        "save the file as UTF-8"
    )


#: tomllib's words for a key (or table) given a second time: they name no key.
_SET_TWICE_RE = re.compile(r"Cannot (overwrite a value|declare .* twice|mutate immutable)")
_AT_LINE_RE = re.compile(r"\(at line (\d+), column (\d+)\)")


def _set_twice(text: str, message: str) -> str:
    """What tomllib's "Cannot overwrite a value (at line 9, column 14)" means, quoting the
    line it points at ("at end of document": the last one written), or ``""`` for another
    error: it names no key, and the first value is kept nowhere."""
    if not _SET_TWICE_RE.search(message):
        return ""
    # Lines as TOML counts them, at "\n" only: splitlines() also breaks at U+2028, U+0085
    # and others a comment or string may hold, and quoted another line.
    lines = text.split("\n")
    at = _AT_LINE_RE.search(message)
    number = int(at.group(1)) if at else len(lines)
    while not at and number > 1 and not lines[number - 1].strip():
        number -= 1  # (the end of the document: the last line written)
    if not 1 <= number <= len(lines):
        return ""
    # tomllib points past the value: at a value of several lines (a multi-line string or
    # array) its last line, which is no key and may be the secret itself ('abc"""'). The
    # line the statement starts on is the first that parses with those after it.
    for start in range(number, max(0, number - 200), -1):
        try:
            tomllib.loads("\n".join(x.removesuffix("\r") for x in lines[start - 1 : number]))
        except tomllib.TOMLDecodeError:
            continue
        number = start
        break
    else:
        return f": line {number} sets a key or table that the file already set"
    line = lines[number - 1].strip()
    if not line.startswith("["):
        # The key, not its value: the value may be a secret (a token in `arena serve
        # --tokens`, a remote bot's `token`, an `env` value) and says nothing of the key.
        line = f"{split_toml_key(line)[0]} = ..."
    line = _plain(line)
    if "declare" in message:
        return f": line {number} ({line}) declares a table that the file already declared"
    return f": line {number} ({line}) sets a key that the file already set"


_BARE_WORD_RE = re.compile(r"[A-Za-z_][\w-]*")
#: Words a person writes for a yes or no (``describe_ruleset`` and ``arena rules`` say
#: ``talon_visible off``), which TOML writes ``true`` / ``false``.
_BOOL_WORDS = frozenset({"on", "off", "yes", "no", "true", "false", "y", "n"})


def _bare_word(text: str, message: str) -> str:
    """What tomllib's "Invalid value (at line 3, column 11)" means when the value there is
    a bare word (``concede = penalty``, ``talon_visible = off``, ``must_beat = True``):
    how to write it; ``""`` for another error. The value is not quoted (in a tokens file
    it is a token): its key is."""
    at = _AT_LINE_RE.search(message)
    if not message.startswith("Invalid value") or not at:
        return ""
    lines = text.split("\n")
    number = int(at.group(1))
    if not 1 <= number <= len(lines):
        return ""
    key, value = split_toml_key(lines[number - 1].strip())
    word = (value or "").split("#", 1)[0].strip()
    if not _BARE_WORD_RE.fullmatch(word):
        return ""
    shown = f"line {number} ({_plain(key)} = ...)"
    if word.lower() in _BOOL_WORDS:
        return f": {shown}: a yes or no is written true or false (lower case, no quotes)"
    return f': {shown}: a text value is written in quotes ({_plain(key)} = "...")'


def _control_there(text: str, message: str) -> str:
    """What tomllib's "Expected newline ... (at line 1, column 12)" met, when it is a
    control character the line does not show: a carriage return alone ending the lines (a
    file saved by an old Mac editor: every statement is on "line 1"), a NUL byte; or ``""``."""
    at = _AT_LINE_RE.search(message)
    if at is None:
        return ""
    lines = text.split("\n")
    row, col = int(at.group(1)), int(at.group(2))
    line = lines[row - 1] if 1 <= row <= len(lines) else ""
    ch = line[col - 1] if 1 <= col <= len(line) else ""
    if ch == "\r":  # (one before a \n, of a CRLF, ends its line as any)
        offset = sum(len(x) + 1 for x in lines[: row - 1]) + col
        if text[offset : offset + 1] == "\n":
            return ""
        return (
            " (there: a carriage return, \\r, alone: the file's lines end in one, without "
            "\\n: convert them to LF)"
        )
    if ch and ch != "\t" and not ch.isprintable():
        return f" (there: the control character {ch!r}, which the line does not show)"
    return ""


def split_toml_key(line: str) -> tuple[str, str | None]:
    """A TOML ``key = value`` line split at its first ``=`` outside quotes: the key as
    written (stripped) and the rest (``None`` without an ``=``).

    >>> split_toml_key('bots."a=b".x = 1')
    ('bots."a=b".x', ' 1')
    """
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1  # (an escaped character, a quote too)
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "=":
            return line[:i].strip(), line[i + 1 :]
        i += 1
    return line.strip(), None


def toml_value_problem(e: ValueError) -> str:
    """What a ``ValueError`` of tomllib other than ``TOMLDecodeError`` means, in words: an
    integer longer than Python converts (``int()``'s 4300 digits)."""
    if "digits" in str(e):
        return f"an integer of more than {sys.get_int_max_str_digits() or 4300} digits"
    return str(e)


#: The longest ruleset name.
_NAME_MAX = 100

# Allowed values of the string options (the first is not necessarily the default).
_CHOICES: dict[str, tuple[str, ...]] = {
    "concede": ("free", "penalty", "off"),
    "concede_pays": ("half", "none"),
    "barrel_mode": ("many", "one"),
    "all_pass": ("first_hand", "last_hand"),
}


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Every option of a match. Field names are the option names of RULES.md."""

    name: str = "classic"
    players: int = 3
    target: int = 1000
    opening_bid: int = 100
    bid_step: int = 5
    first_hand_commits: bool = True
    ace_marriage_counts_for_bid: bool = True
    talon_visible: bool = True
    concede: str = "free"
    concede_pays: str = "half"
    must_beat: bool = False
    marriage_needs_trick: bool = True
    ace_marriage: bool = True
    rounding: int = 1
    barrel: bool = True
    barrel_at: int = 880
    barrel_deals: int = 3
    barrel_penalty: int = 120
    barrel_mode: str = "many"
    all_pass: str = "first_hand"
    throw_in_bonus: int = 50
    nines_talon_value: int = 100
    max_deals: int = 0
    ask_forced: bool = False

    def __post_init__(self) -> None:
        _validate(self)

    def to_dict(self) -> dict[str, Any]:
        """Every option as a JSON-safe dict (``from_dict`` reads it back)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def in_force(self) -> dict[str, Any]:
        """``to_dict`` without the options this ruleset never uses (``barrel_mode`` without
        the barrel: see :func:`_unused_because`): two rulesets alike in these play alike.
        A file written before such options were refused may hold one, which must not make
        its tournament another (``arena.tournament.runner.as_stored``); so may one of a
        ruleset without the throw-in that sets ``throw_in_bonus``."""
        throw_in = _has_throw_in(self)
        return {
            k: v
            for k, v in self.to_dict().items()
            if _unused_because(k, self) is None and (throw_in or k != "throw_in_bonus")
        }

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], players: int | None = None, *, unused: bool = True
    ) -> Ruleset:
        """Build a ruleset from a dict: an optional ``preset`` key, then overrides.

        Without ``preset`` the ``classic`` options are the base. ``players``: the size of
        the table it is for; a ``preset`` that has a ruleset of that size and a dict that
        does not set ``players`` itself start from it (``"1001"`` with 4 players is
        ``"1001-4p"``, see :func:`preset`). Unknown keys and values of the wrong type raise
        :class:`RulesetError` naming the key. ``unused=False`` (a file or table a person
        wrote) also refuses an option set, to another value than its preset's, that the
        ruleset never uses (``barrel_mode`` without the barrel): a stored ruleset (a
        record's) is read whatever it holds.
        """
        if not isinstance(data, Mapping):
            raise RulesetError("ruleset", f"expected a table/dict, got {type(data).__name__}")
        data = dict(data)
        preset = data.pop("preset", None)
        if preset is None:
            base = PRESETS["classic"]
        elif not isinstance(preset, str):  # `preset = 1001`: not "unknown preset 1001"
            raise RulesetError(
                "preset", f'expected a string, got {toml_shown(preset)} (quote it: preset = "1001")'
            )
        elif preset not in PRESETS:
            raise RulesetError("preset", _unknown_preset(preset))
        else:
            sized = _SIZED.get((preset, players or 0), preset)
            base = PRESETS[preset if "players" in data else sized]
        types = _FIELD_TYPES
        changes: dict[str, Any] = {}
        for key, value in data.items():
            if key not in types:
                hint = did_you_mean(key, types)
                if isinstance(key, str) and key.lower() in _BASE_WORDS:
                    # (no file includes another: its base is a preset)
                    hint = ' (a ruleset builds on a preset only: preset = "classic")'
                raise RulesetError(  # (str: a dict built in Python may have any key)
                    _plain(str(key)), f"unknown option{hint}; known options: {', '.join(types)}"
                )
            changes[key] = value
        _check_types(changes)
        if preset is not None and "name" not in changes and changes:
            # An edited preset is no longer the preset: say so in its name.
            changes["name"] = f"{base.name}+custom"
        made = dataclasses.replace(base, **changes)
        if not unused:
            _refuse_unused(made, [k for k, v in changes.items() if getattr(base, k) != v], changes)
        return made


#: Keys that would make a ruleset build on another, as other tools' files do: a ruleset
#: builds on a preset only (``preset``), and includes no other file.
_BASE_WORDS = frozenset({"extends", "extend", "include", "includes", "inherit", "inherits",
                         "base", "based_on", "parent", "import", "from"})  # fmt: skip


_FIELD_TYPES: dict[str, type] = {
    "name": str, "players": int, "target": int, "opening_bid": int, "bid_step": int,
    "first_hand_commits": bool, "ace_marriage_counts_for_bid": bool, "talon_visible": bool,
    "concede": str, "concede_pays": str, "must_beat": bool, "marriage_needs_trick": bool,
    "ace_marriage": bool, "rounding": int, "barrel": bool, "barrel_at": int,
    "barrel_deals": int, "barrel_penalty": int, "barrel_mode": str, "all_pass": str,
    "throw_in_bonus": int, "nines_talon_value": int, "max_deals": int, "ask_forced": bool,
}  # fmt: skip


# The bidding cap without marriages (RULES.md §2).
_BASE_CAP = 120
# The largest value of an integer option.
_MAX_INT = 1_000_000


def _check_types(options: Mapping[str, Any]) -> None:
    """Refuse an option of the wrong type (values quoted short: a long string or array
    was quoted whole)."""
    for key, value in options.items():
        want = _FIELD_TYPES[key]
        # bool is an int in Python: keep the two apart so `players = true` is refused.
        if want is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise RulesetError(
                key, f"expected an integer, got {toml_shown(value)}{_int_hint(value)}"
            )
        if want is bool and not isinstance(value, bool):
            raise RulesetError(
                key, f"expected true or false, got {toml_shown(value)}{_bool_hint(value)}"
            )
        if want is str and not isinstance(value, str):
            raise RulesetError(key, f"expected a string, got {toml_shown(value)}")


def _int_hint(value: object) -> str:
    """What to write instead of ``value`` for an integer option, when it is one in another
    form (``"1000"``, ``1e3``), or ``""``."""
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?[0-9][0-9_]*\s*", value):
        return " (a number is written without quotes)"
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_INT:
        return f" (an integer is written without a decimal point or exponent: {int(value)})"
    return ""


def _bool_hint(value: object) -> str:
    """What to write instead of ``value`` for a true/false option, when it says one in
    another form (``"true"``, ``"yes"``, ``1``), or ``""``."""
    words = ("true", "false", "yes", "no", "on", "off", "1", "0")
    if isinstance(value, str) and value.strip().lower() in words:
        return " (write true or false, without quotes)"
    if isinstance(value, int) and value in (0, 1):
        return " (write true or false, not a number)"
    return ""


def _unused_because(key: str, r: Ruleset) -> str | None:
    """Why ``r`` never uses its option ``key``, or ``None`` when it may: the options of a
    part of the game the ruleset has not (the barrel, a 4-player table's dealer). (An option
    of a rule the file itself switches off, ``concede_pays`` beside ``concede = "off"``, is
    the author's knowing choice, and accepted.)"""
    if key in ("barrel_at", "barrel_deals", "barrel_penalty", "barrel_mode") and not r.barrel:
        return "this ruleset has no barrel (barrel = false): set barrel = true to play with it"
    if key == "nines_talon_value" and r.players != 4:
        # (a file on preset "1001" that sets no players is sized by its table: four players
        # use it, so `arena-bot try` with three opponents takes the file and with two says this)
        return (
            f"only the dealer of a 4-player table scores the talon, and this ruleset seats "
            f"{r.players}: set players = 4"
        )
    return None


def _refuse_unused(r: Ruleset, keys: Iterable[str], written: Mapping[str, Any]) -> None:
    """Refuse the first of ``keys`` (options a person set, of those ``written``) that ``r``
    never uses: a house rule written there would be silently not in force (``barrel_mode =
    "one"`` on preset 1001, which has no barrel, was described as "1001 (barrel_mode one)"
    and played without any barrel; ``throw_in_bonus`` on classic, which has no throw-in)."""
    for key in keys:
        why = _unused_because(key, r)
        if why is None and key == "throw_in_bonus" and not _switches_off_throw_in(written):
            # (A file that writes the rule switching the throw-in off itself, as `arena rules`
            # prints every option, chose it knowing: as concede_pays beside concede = "off".
            # One that writes only the other half, all_pass = "last_hand" on classic, meant
            # to play it, and would score nothing.)
            why = _no_throw_in(r)
        if why is not None:
            raise RulesetError(key, f"has no effect: {why}, or remove {key}")


def _has_throw_in(r: Ruleset) -> bool:
    """Whether a last hand may ever throw in: after an all-pass under ``all_pass =
    "last_hand"`` (RULES.md, preset 1001), which a committed first hand never allows."""
    return r.all_pass == "last_hand" and not r.first_hand_commits


def _switches_off_throw_in(written: Mapping[str, Any]) -> bool:
    """Whether the options ``written`` in a file set one of the two rules that leave no
    throw-in: ``all_pass = "first_hand"`` or ``first_hand_commits = true``."""
    return written.get("all_pass") == "first_hand" or written.get("first_hand_commits") is True


def _no_throw_in(r: Ruleset) -> str | None:
    """Why ``r`` has no throw-in, or ``None`` when it has one."""
    if _has_throw_in(r):
        return None
    if r.first_hand_commits:
        also = "" if r.all_pass == "last_hand" else ' and all_pass = "last_hand"'
        return (
            "this ruleset has no throw-in (first_hand_commits = true: first hand holds the "
            f"opening bid, so nobody all-passes): set first_hand_commits = false{also} to play "
            "with it"
        )
    return (
        'this ruleset has no throw-in (all_pass = "first_hand"): set all_pass = "last_hand" '
        "to play with it"
    )


def _validate(r: Ruleset) -> None:
    _check_types({key: getattr(r, key) for key in _FIELD_TYPES})
    for key, choices in _CHOICES.items():
        value = getattr(r, key)
        if value not in choices:
            raise RulesetError(
                key,
                f"must be one of {', '.join(repr(c) for c in choices)}, got {toml_shown(value)}"
                + did_you_mean(value, choices),
            )
    for key, want in _FIELD_TYPES.items():
        # The protocol carries every number as a uint32; no sensible option comes near this.
        if want is int and getattr(r, key) > _MAX_INT:
            raise RulesetError(key, f"must be at most {_MAX_INT}, got {getattr(r, key)}")
    if r.players not in (3, 4):
        raise RulesetError("players", f"must be 3 or 4, got {r.players}")
    positive = ("target", "opening_bid", "bid_step", "rounding", "barrel_deals")
    for key in positive:
        if getattr(r, key) <= 0:
            raise RulesetError(key, f"must be positive, got {getattr(r, key)}")
    for key in ("barrel_penalty", "throw_in_bonus", "nines_talon_value", "max_deals"):
        if getattr(r, key) < 0:
            raise RulesetError(key, f"must not be negative, got {getattr(r, key)}")
    if r.bid_step % 5 or r.bid_step > _BASE_CAP:
        # RULES.md §2: a raise is "a multiple of 5", and bids are multiples of the step; so
        # are the contract (§5) and therefore every winning bid. The opening bid (at most
        # 120, below) is a multiple of the step, so no step above 120 can be used: a step of
        # 200 is its own mistake, not "opening_bid: must be a multiple of bid_step 200".
        raise RulesetError(
            "bid_step", f"must be a multiple of 5 from 5 to {_BASE_CAP}, got {r.bid_step}"
        )
    if r.opening_bid % r.bid_step:
        raise RulesetError(
            "opening_bid", f"must be a multiple of bid_step {r.bid_step}, got {r.opening_bid}"
        )
    if r.opening_bid > _BASE_CAP:
        # RULES.md §2: nobody may bid above 120 + the marriages in his own hand, so an opening
        # bid above 120 would commit (classic) or give the talon to (1001 all-pass) a player
        # over his cap.
        raise RulesetError(
            "opening_bid",
            f"must be at most {_BASE_CAP} (nobody may bid above 120 + the marriages in his "
            f"hand), got {r.opening_bid}",
        )
    if r.barrel_at <= 0:
        raise RulesetError("barrel_at", f"must be positive, got {r.barrel_at}")
    if r.barrel and r.barrel_at >= r.target:
        # (Not "between 0 and target 1000, got 1000", which read as satisfied; and the barrel
        # is the third option of the contradiction: without it barrel_at is not used.)
        raise RulesetError(
            "barrel_at", f"must be below target {r.target} when barrel = true, got {r.barrel_at}"
        )
    if not r.name.strip():
        raise RulesetError("name", "must not be empty")
    # The name reaches terminals, logs and page titles: an escape sequence or a newline
    # would recolour or split them (a file's name is the default: set `name` in the file).
    if not r.name.isprintable() or len(r.name) > _NAME_MAX:
        raise RulesetError(
            "name",
            f"at most {_NAME_MAX} printable characters (no control characters), got "
            f"{r.name[:_NAME_MAX]!r}" + ("..." if len(r.name) > _NAME_MAX else ""),
        )


_CLASSIC = Ruleset()
PRESETS: dict[str, Ruleset] = {
    "classic": _CLASSIC,
    "1001": dataclasses.replace(
        _CLASSIC,
        name="1001",
        target=1001,
        barrel=False,
        opening_bid=40,
        first_hand_commits=False,
        concede="penalty",
        concede_pays="none",
        rounding=5,
        all_pass="last_hand",
    ),
}
PRESETS["1001-4p"] = dataclasses.replace(PRESETS["1001"], name="1001-4p", players=4)

#: (preset name, players) -> the preset for that table size. RULES.md's game 1001 is "for
#: 3 or 4 players": its name stands for both, "1001-4p" being the 4-player ruleset.
_SIZED: dict[tuple[str, int], str] = {("1001", 4): "1001-4p"}


def preset(name: str, players: int | None = None) -> Ruleset:
    """The preset ``name``, for ``players`` players where it has a ruleset of that size.

    >>> preset("1001", 4).name, preset("1001").players, preset("classic", 4).players
    ('1001-4p', 3, 3)
    """
    if name not in PRESETS:
        raise RulesetError("preset", _unknown_preset(name))
    return PRESETS[_SIZED.get((name, players or 0), name)]


def _unknown_preset(name: str, more: str = "") -> str:
    """The words for an unknown preset ``name``; ``more``: what else would have done."""
    hint = did_you_mean(name, PRESETS)
    return f"unknown preset {toml_shown(name)}{hint}; known: {', '.join(PRESETS)}{more}"


def load_ruleset(name_or_path: str | Path, players: int | None = None) -> Ruleset:
    """A preset by name (for ``players`` players, see :func:`preset`), or a TOML file
    (``preset = "..."`` plus overrides; its preset sized the same way unless the file sets
    ``players``).

    Raises :class:`RulesetError` naming the key at fault (``"file"`` when the file cannot be
    read or parsed, ``"preset"`` for an unknown name) and, for a file, the file.
    """
    text = str(name_or_path)
    if isinstance(name_or_path, str) and text in PRESETS:
        return preset(text, players)
    if not text.strip():  # (Path("") is the current directory: "cannot read: Is a directory")
        raise RulesetError("preset", f"empty: name a preset ({', '.join(PRESETS)}) or a .toml file")
    path = Path(name_or_path)
    source = _plain(text)  # (every error of a file names it: the commands print it as it is)
    try:
        data = read_toml_file(path)
    except TomlFileError as e:
        if not path.suffix and str(e) == "no such file":
            raise RulesetError("preset", _unknown_preset(text, "; or a .toml file")) from None
        raise RulesetError("file", str(e), source) from None
    try:
        _check_not_another_file(data)
        if "name" in data:
            return Ruleset.from_dict(data, players, unused=False)
        try:
            return Ruleset.from_dict({**data, "name": path.stem}, players, unused=False)
        except RulesetError as e:  # (the name came from the file's: say so, not "name: ...")
            if e.key != "name":
                raise
            raise RulesetError(
                "name",
                f"the file sets no name, and its file name cannot be the ruleset's name "
                f'({e.message}): write name = "..." in the file',
            ) from None
    except RulesetError as e:
        raise RulesetError(e.key, e.message, source) from None


def _check_not_another_file(data: Mapping[str, Any]) -> None:
    """Refuse, saying so, a file that is some other file of the product: a tournament
    config or an `arena serve --tokens` file (a ``[bots]`` table), or a ruleset written as
    a tournament config's ``[ruleset]`` table. Each was "db: unknown option" or "ruleset:
    unknown option", and a list of every option, which hid the mistake."""
    # (any `bots`: a config's `bots = ["random", ...]` was "seed: unknown option" or the like)
    if "bots" in data:
        what = "a [bots] table" if isinstance(data["bots"], dict) else "bots"
        raise RulesetError(
            "bots",
            f"this is a tournament config or a tokens file (it has {what}), not a "
            'ruleset file: a ruleset file sets options such as preset = "classic" at its top '
            "level",
        )
    if isinstance(data.get("ruleset"), dict):
        raise RulesetError(
            "ruleset",
            "a ruleset file sets its options at its top level, not in a [ruleset] table (as "
            "a tournament config does): take them out of the table",
        )


#: The most options a description lists (an inline table may set every one): the rest are
#: counted ("+3 more").
_DESCRIBED_MAX = 6


def describe_ruleset(
    ruleset: Ruleset | Mapping[str, Any] | str | None,
    *,
    players: bool = True,
    deal_cap: bool = False,
) -> str:
    """A ruleset in one short line, for people: its name, then the options where it
    differs from its preset, values as a TOML file writes them (``on``/``off`` for
    true/false).

    The preset is the one the name says (``classic``, or ``1001+custom`` as
    :meth:`Ruleset.from_dict` names an edited preset: then the options say what is
    custom, and ``+custom`` goes); for another name, the preset nearest by players and
    options, named in the brackets. A preset itself is just its name.

    ``ruleset`` may be a stored ruleset dict (a tournament's config, a record's
    ``ruleset``): only the options it holds are compared (an older row may lack some),
    and nothing is validated. A string is a name alone (``None``, or a stored value of
    another type, is ``"?"``).
    ``players=False`` leaves the table size out (a line that says it already);
    ``deal_cap=False`` leaves ``max_deals`` out: a tournament sets it on every ruleset
    (20 unless told) and says it apart, and a time-limited match's record holds the deal
    it stopped at, so it would tell nothing of the house rules.

    >>> describe_ruleset(PRESETS["1001-4p"])
    '1001-4p'
    >>> describe_ruleset(dataclasses.replace(_CLASSIC, must_beat=True, barrel_mode="one"))
    'classic (must_beat on, barrel_mode one)'
    >>> describe_ruleset(dataclasses.replace(PRESETS["1001"], players=4))
    '1001, 4 players'
    >>> describe_ruleset(Ruleset.from_dict({"preset": "1001", "talon_visible": False}))
    '1001 (talon_visible off)'
    >>> describe_ruleset({"name": "house", "players": 3, "must_beat": True, "max_deals": 40})
    'house (classic + must_beat on)'
    >>> describe_ruleset({**PRESETS["1001"].to_dict(), "name": "h", "barrel_mode": "one"})
    'h (1001)'
    """
    if isinstance(ruleset, str):
        return _plain(ruleset)
    if not isinstance(ruleset, Ruleset | Mapping):  # (None; a damaged stored value)
        return "?"
    options = ruleset.to_dict() if isinstance(ruleset, Ruleset) else dict(ruleset)
    barrel, seats = options.get("barrel"), options.get("players")
    if isinstance(barrel, bool) and seats in (3, 4):
        # An option the ruleset never uses is no house rule (a tournament stored before such
        # options were refused holds one: "1001 + barrel_mode one" was said of no barrel).
        probe = dataclasses.replace(_CLASSIC, barrel=barrel, players=seats)
        options = {k: v for k, v in options.items() if _unused_because(k, probe) is None}
    # (an option an older row lacks is its named preset's, classic's for another name)
    stated = options.get("name")
    known = PRESETS.get(stated.removesuffix("+custom") if isinstance(stated, str) else "", _CLASSIC)
    commits = options.get("first_hand_commits", known.first_hand_commits)
    if commits is not False or options.get("all_pass", known.all_pass) != "last_hand":
        # No throw-in: its bonus is no house rule either (Ruleset.in_force).
        options.pop("throw_in_bonus", None)
    name = options.get("name")
    name = _plain(name) if isinstance(name, str) else "?"
    size = options.get("players")
    left_out = {"name"} | (set() if deal_cap else {"max_deals"})

    def differences(base: Ruleset) -> list[str]:
        return [
            key
            for key, value in options.items()
            if key in _FIELD_TYPES and key not in left_out
            and (value != getattr(base, key) or type(value) is not type(getattr(base, key)))
        ]  # fmt: skip

    if not options.keys() & (_FIELD_TYPES.keys() - {"name"}):
        return name  # (a name alone: nothing to compare)
    named = name.removesuffix("+custom")
    if named in PRESETS:
        family = PRESETS[named]
        sized = PRESETS[_SIZED.get((named, size), named)] if isinstance(size, int) else family
        changed = [key for key in differences(sized) if key != "players"]
        head = named
        if players and size is not None and size != family.players:
            head += f", {_option_value(size)} players"
        return head + (f" ({_option_list(options, changed)})" if changed else "")
    # Nearest: the fewest options apart, the same table size first, then PRESETS' order.
    order = list(PRESETS)
    base = min(
        PRESETS.values(),
        key=lambda p: (len(differences(p)), size != p.players, order.index(p.name)),
    )
    changed = differences(base)
    shown = _option_list(options, [k for k in changed if k != "players"])
    if players and "players" in changed:
        shown = ", ".join(x for x in (f"{_option_value(size)} players", shown) if x)
    return f"{name} ({base.name}{' + ' + shown if shown else ''})"


def describe_run(ruleset: Ruleset | Mapping[str, Any] | str | None, *, players: bool = True) -> str:
    """A tournament's rules in one line: :func:`describe_ruleset`, then its deal cap (which
    a tournament sets on every ruleset, 20 unless told), so that two runs apart only in
    it are told apart where tournaments are listed (the leaderboard, the web's picker).
    A stored ruleset that holds no cap (an older row, a name alone) is described without.

    >>> describe_run({**PRESETS["classic"].to_dict(), "must_beat": True, "max_deals": 20})
    'classic (must_beat on), 20 deals max'
    >>> describe_run(dataclasses.replace(PRESETS["1001"], max_deals=1))
    '1001, 1 deal max'
    >>> describe_run(PRESETS["1001-4p"]), describe_run("classic")
    ('1001-4p, no deal cap', 'classic')
    """
    line = describe_ruleset(ruleset, players=players)
    cap = ruleset.max_deals if isinstance(ruleset, Ruleset) else None
    if isinstance(ruleset, Mapping):
        cap = ruleset.get("max_deals")
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
        return line  # (none stored, or a damaged value: nothing said of it)
    if not cap:
        return f"{line}, no deal cap"
    return f"{line}, {cap} {'deal' if cap == 1 else 'deals'} max"


def _option_list(options: Mapping[str, Any], keys: list[str]) -> str:
    """``key value, ...`` for ``keys`` of ``options``, at most :data:`_DESCRIBED_MAX`."""
    said = [f"{key} {_option_value(options[key])}" for key in keys[:_DESCRIBED_MAX]]
    if len(keys) > _DESCRIBED_MAX:
        said.append(f"+{len(keys) - _DESCRIBED_MAX} more")
    return ", ".join(said)


def _option_value(value: object) -> str:
    """An option's value as a TOML file writes it, true/false said ``on``/``off``; a
    stored value of another kind shown short and printable."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | str):
        return _plain(str(value))
    return toml_shown(value)
