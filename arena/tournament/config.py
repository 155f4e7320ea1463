"""Tournament configuration: one TOML file, validated into frozen dataclasses.

Every error is a :class:`ConfigError` that names the file and the key at fault::

    tournaments/mine.toml: bots.alice.bot: unknown bundled bot 'alcie' (bundled: ...)

The full reference of the keys is ``docs/tournament.md``. A minimal file::

    name = "mine"
    ruleset = "classic"
    [bots]
    random = "random"
    heuristic = "heuristic"
    counting = "counting"
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import hashlib
import json
import math
import os
import re
import shlex
import tomllib
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from arena.addresses import host_problem, non_ascii_problem
from arena.deadlines import deadline_problem
from arena.protocol import MIN_TOKEN, token_problem, weak_token
from arena.ratings import DEFAULT_DRAW_PROBABILITY
from arena.referee.config import (
    MAX_STRIKES,
    RefereeConfig,
    cert_expired_problem,
    key_pair_problem,
    pem_problem,
)
from arena.render import printable
from arena.tournament.bundled import bundled_files, code_now
from arena.tournament.schedule import SCHEDULE_VERSION, ScheduledMatch, build_schedule
from engine.rules import (
    PRESETS,
    Ruleset,
    RulesetError,
    TomlFileError,
    did_you_mean,
    load_ruleset,
    read_toml_file,
    split_toml_key,
    toml_key,
    toml_shown,
    toml_value_problem,
)

__all__ = [
    "BUNDLED_BOTS",
    "CONFIG_KEYS",
    "MAX_CONCURRENCY",
    "BotSpec",
    "ConfigError",
    "Deadlines",
    "TLSSpec",
    "TournamentConfig",
    "apply_overrides",
    "as_current_code",
    "bot_code_files",
    "bot_log_path",
    "bot_logs",
    "bundled_changed",
    "error_key",
    "holds_tokens",
    "identity_changes",
    "load_config",
    "override_key",
    "parse_config",
    "stored_where",
]

#: The bots shipped in ``bots/`` (``bots.load(name)``).
BUNDLED_BOTS: tuple[str, ...] = ("random", "heuristic", "counting", "pimc")

#: A tournament's, or a bot's, name.
# \A…\Z, not ^…$: "$" also matches before a final newline, and a name "h1\n" beside "h1"
# split log lines and made two bots that look the same.
BOT_NAME_RE = _NAME_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}\Z")
#: What ``BOT_NAME_RE`` asks, in words (for error messages).
BOT_NAME_RULE = (
    "a bot name starts with a letter or a digit, then letters, digits, '.', '_' or '-' (at "
    "most 64 characters)"
)
_MODULE_CLASS_RE = re.compile(r"\A[A-Za-z_][\w.]*:[A-Za-z_]\w*\Z")
_PLACEHOLDERS = ("python", "arena", "host", "port", "token", "name", "ca")
#: The engine's bound on a ruleset's numbers (max_deals among them).
MAX_INT = 1_000_000
#: The most matches a tournament may schedule (the schedule is built in memory).
MAX_MATCHES = 1_000_000
#: The most matches a tournament plays at once, and so the most seats one bot's stream holds:
#: a bot that reconnects is sent every seat's state again in one step of the referee's loop
#: (some 50 µs a seat, a stall for every match), up to 30 times in 10 s, and a stream that
#: has more than 1,000 messages waiting is closed as not read (``RefereeConfig.max_queued``):
#: at 600 seats every reconnect of an honest bot was cut so, and its seats forfeited. At
#: this bound a resend is at most 512 messages (beside 64 ends kept and 64 "interrupted"),
#: and the matches a bot names in its Hello (held, and 256 played without it) are within
#: ``Hello.running``'s 1,024. The referee runs on one core: 16 at once already fill it.
MAX_CONCURRENCY = 256
#: Above this, TrueSkill's draw margin overflows.
MAX_DRAW_PROBABILITY = 0.99


class ConfigError(ValueError):
    """A bad tournament config. ``key`` is the dotted key at fault, ``source`` the file."""

    def __init__(self, source: str, key: str, message: str) -> None:
        super().__init__(f"{source}: {key}: {message}")
        self.source = source
        self.key = key
        self.message = message


@dataclass(frozen=True, slots=True)
class Deadlines:
    """Per-decision deadline and the per-match time bank of each bot (milliseconds)."""

    decision_ms: int = 2000
    time_bank_ms: int = 20000


@dataclass(frozen=True, slots=True)
class TLSSpec:
    """The referee serves TLS only: its certificate chain and key (PEM files), and the host
    name local bots connect to, which the certificate must name."""

    cert: Path
    key: Path
    server_name: str = "localhost"


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One participant.

    ``kind``: ``"sdk"`` — launched as ``{python} -m sdk.cli run <bot>`` (a bundled name,
    ``module:Class`` or an absolute ``path/file.py[:Class]``); ``"command"`` — launched
    with ``command`` (placeholders filled in); ``"remote"`` — not launched: it connects
    by itself with ``token``.
    """

    name: str
    kind: Literal["sdk", "command", "remote"]
    bot: str | None = None
    command: tuple[str, ...] = ()
    token: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    cwd: Path | None = None
    #: A digest of the bot's code as the config was loaded (:func:`code_digest`): editing
    #: the bot makes another tournament, rather than mixing two versions' results.
    code: str | None = None
    #: The digests an older arena stored for the same files (:func:`older_digests`): a
    #: stored tournament holding one of them is this bot's. Not part of :meth:`identity`.
    code_before: tuple[str, ...] = ()
    #: ``"sdk"`` bots: ``arena-bot run --workers N`` (the bot's calls in N processes).
    #: Not part of :meth:`identity`: how many cores the bot computes on is no other bot.
    workers: int | None = None

    @property
    def is_local(self) -> bool:
        return self.kind != "remote"

    def identity(self) -> dict[str, Any]:
        """What makes this bot *this* bot for the tournament id (never the token): how it is
        launched, including its ``cwd`` (``mybot:Bot`` in another directory is another bot)
        and its ``env`` (as a digest: the values may be secrets, and this is stored)."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "bot": self.bot,
                               "command": list(self.command)}  # fmt: skip
        if self.cwd is not None:
            out["cwd"] = str(self.cwd)
        if self.env:
            blob = json.dumps(sorted(self.env), ensure_ascii=False).encode()
            out["env"] = hashlib.sha256(blob).hexdigest()[:16]
        if self.code is not None:
            out["code"] = self.code
        return out


#: Files up to this size are digested by their contents; a larger one (a model's weights)
#: by its size and modification time, which is enough to see it change.
_DIGEST_MAX_BYTES = 4 << 20


def code_digest(files: Iterable[Path], *, lines: Literal["lf", "raw", "crlf"] = "lf") -> str | None:
    """A digest of the contents of ``files`` (those that exist), or None when none does.

    The text is read with its line ends as LF (``lines="lf"``): a checkout that writes them
    CRLF (git's ``core.autocrlf`` on Windows) holds the same code, and an interrupted
    tournament resumed on the other read every bot as changed. ``"raw"`` is the bytes as
    they are, what an arena before round 52 digested; ``"crlf"`` them as a CRLF checkout has
    them: the two are how such a stored digest is recognised (:func:`older_digests`)."""
    h = hashlib.sha256()
    found = False
    for f in files:
        try:
            stat = f.stat()
            if stat.st_size > _DIGEST_MAX_BYTES:
                part = f"{stat.st_size}:{stat.st_mtime_ns}".encode()
            else:
                data = f.read_bytes()
                if lines != "raw":
                    data = data.replace(b"\r\n", b"\n")
                if lines == "crlf":
                    data = data.replace(b"\n", b"\r\n")
                part = hashlib.sha256(data).digest()
        except OSError:  # not a file (an argument that only looks like one), unreadable
            continue
        found = True
        # (the file's name, not its path: a clone elsewhere is the same bot)
        h.update(f.name.encode() + b"\0" + part)
    return h.hexdigest()[:16] if found else None


def older_digests(files: Sequence[Path]) -> tuple[str, ...]:
    """The digests an arena before round 52 stored for ``files`` that :func:`code_digest`
    no longer makes: of their bytes as they are, and as a checkout writing CRLF line ends
    has them (a tournament it stored is resumed on this one, or the other way round)."""
    now = code_digest(files)
    older = {code_digest(files, lines="raw"), code_digest(files, lines="crlf")}
    return tuple(sorted(d for d in older if d is not None and d != now))


def _code_files(spec: str | None, command: Sequence[str], cwd: Path | None) -> list[Path]:
    """The files whose contents make a local bot's code, as far as the config shows them:
    a bot file, a bundled bot's modules (:func:`bundled_files`), files named on a command
    line but for the program itself when given by an absolute path (an interpreter:
    upgrading it is not a new bot, and ``{python}`` is not seen either). (A module a bot
    imports from elsewhere is not seen: ``--fresh`` after changing only that.)"""
    if spec is not None:
        path = spec.partition(":")[0]
        if path.endswith(".py"):
            return [Path(path)]
        if spec in BUNDLED_BOTS:  # its module and those it imports from bots/
            return bundled_files(spec)
        return []
    base = cwd or Path.cwd()
    args = command[1:] if command and Path(command[0]).is_absolute() else command
    # A bot file named as `arena-bot run` takes it, `mybot.py:Lowest`, is a file named too
    # (else its edits would go unseen: the edited bot would resume the old version's
    # tournament).
    files = [a.rpartition(":")[0] if a.rpartition(":")[0].endswith(".py") else a for a in args]
    return [base / f for f in files if "{" not in f and _holds(base / f, Path.is_file)]


def bot_code_files(spec: BotSpec) -> list[Path]:
    """The files whose contents make ``spec``'s code (those its ``code`` digests), as they
    are now: none for a remote bot."""
    if spec.kind == "sdk":
        return _code_files(spec.bot, (), spec.cwd)
    if spec.kind == "command":
        return _code_files(None, spec.command, spec.cwd)
    return []


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A validated tournament config. Paths are resolved (absolute)."""

    name: str
    ruleset: Ruleset
    bots: tuple[BotSpec, ...]
    ruleset_source: str = "classic"
    matches_per_table: int = 1
    max_deals: int = 20
    #: The tournament seed; ``None`` until drawn (a config without ``seed``): the runner
    #: draws a secret one at the first run and keeps it in the database (``seed_drawn``).
    seed: int | None = None
    concurrency: int = 2
    db: Path = Path("runs/tournament.sqlite")
    out: Path = Path("out/tournament")
    host: str = "127.0.0.1"
    port: int = 0
    bot_wait_s: float = 30.0
    match_timeout_s: float = 0.0
    deadlines: Deadlines = field(default_factory=Deadlines)
    #: Serve TLS (``[tls]``); None: plaintext.
    tls: TLSSpec | None = None
    draw_probability: float = DEFAULT_DRAW_PROBABILITY
    #: Extra ``arena.referee.RefereeConfig`` settings (``max_strikes``, ``reconnect_grace_s``).
    referee: tuple[tuple[str, Any], ...] = ()
    explicit_id: str | None = None
    source: str = "<config>"
    #: "duplicate": every seating of every table on the same deals (per deal-seed set);
    #: "independent": every match its own (see ``arena.tournament.schedule``).
    deals: Literal["duplicate", "independent"] = "duplicate"
    #: ``seed`` was drawn at random, not given: it is no part of the identity (the same
    #: config resumes the same tournament), and it is stored as ``drawn_seed``.
    seed_drawn: bool = False

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bots)

    @property
    def total_matches(self) -> int:
        """Every table of ``players`` bots in every seating, per deal-seed set."""
        return math.perm(len(self.bots), self.ruleset.players) * self.matches_per_table

    def schedule(self) -> list[ScheduledMatch]:
        """Every match of this tournament, in play order (a pure function of the config and
        its seed, which must be known: see ``seed``)."""
        if self.seed is None:
            raise ValueError("the tournament seed is not drawn yet")
        return build_schedule(self.bot_names, self.ruleset.players, self.matches_per_table,
                              self.seed, duplicate=self.deals == "duplicate")  # fmt: skip

    def identity(self) -> dict[str, Any]:
        """Everything that decides the schedule and the results (not where they are kept)."""
        return {
            "name": self.name,
            "ruleset": self.ruleset.to_dict(),
            "bots": [b.identity() for b in self.bots],
            "matches_per_table": self.matches_per_table,
            "seed": None if self.seed_drawn else self.seed,
            "schedule": SCHEDULE_VERSION,
            "deadlines": dataclasses.asdict(self.deadlines),
            "draw_probability": self.draw_probability,
            "referee": dict(self.referee),
            # Only when not the default, as before the key existed.
            **({"deals": self.deals} if self.deals != "duplicate" else {}),
        }

    @property
    def fingerprint(self) -> str:
        blob = json.dumps(self.identity(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @property
    def tournament_id(self) -> str:
        """``id`` from the file, else ``<name>-<fingerprint>``: the same config resumes."""
        return self.explicit_id or f"{self.name}-{self.fingerprint}"

    def to_json(self) -> dict[str, Any]:
        """The config as stored in the database (tokens redacted)."""
        d = self.identity()
        d.update(
            {
                "id": self.tournament_id,
                "ruleset_source": self.ruleset_source,
                "max_deals": self.max_deals,
                "concurrency": self.concurrency,
                "db": str(self.db),
                "out": str(self.out),
                "host": self.host,
                "port": self.port,
                "bot_wait_s": self.bot_wait_s,
                "match_timeout_s": self.match_timeout_s,
                "tls": None
                if self.tls is None
                else {
                    "cert": str(self.tls.cert),
                    "key": str(self.tls.key),
                    "server_name": self.tls.server_name,
                },
                "source": self.source,
            }
        )
        if self.seed_drawn:
            d["drawn_seed"] = self.seed
        return d


def _but_name(bot: Mapping[str, Any]) -> dict[str, Any]:
    """A bot's identity without its name: how it is launched and its code."""
    return {k: v for k, v in bot.items() if k != "name"}


def as_current_code(bot: Mapping[str, Any]) -> dict[str, Any]:
    """A stored bot's identity with the code digest this arena makes of it: an older
    arena's digest of a bundled bot (of all of ``bots/``) is read as the digest of the
    bot's own modules it stood for (:func:`arena.tournament.bundled.code_now`), so that a
    bot whose modules did not change reads as the same bot."""
    if bot.get("kind") == "sdk" and bot.get("bot") in BUNDLED_BOTS and "code" in bot:
        return {**bot, "code": code_now(bot.get("bot"), bot.get("code"))}
    return dict(bot)


def _bots_of(identity: Mapping[str, Any]) -> dict[Any, dict[str, Any]]:
    """An identity's bots by name, read as this arena's (:func:`as_current_code`)."""
    bots = identity.get("bots") or ()
    return {b.get("name"): as_current_code(b) for b in bots if isinstance(b, Mapping)}


def bundled_changed(stored: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The bots of both identities that are the same bundled bot but for its code: the
    modules of the arena's own ``bots/`` it runs, which an upgrade of the arena changes (no
    config gets the old code back: only the version that played it can finish such a
    tournament).

    >>> bundled_changed({"bots": [{"name": "r", "bot": "random", "code": "1"}]},
    ...                 {"bots": [{"name": "r", "bot": "random", "code": "2"}]})
    ['r']
    """
    old = _bots_of(stored)
    return [
        str(b.get("name")) for b in _bots_of(new).values()
        if b.get("bot") in BUNDLED_BOTS
        and isinstance(was := old.get(b.get("name")), Mapping)
        and was.get("code") != b.get("code")
        and {**was, "code": None} == {**b, "code": None}
    ]  # fmt: skip


def _used_options(rules: Mapping[str, Any]) -> set[str]:
    """The options a stored ruleset uses (:meth:`Ruleset.in_force`); every key it holds
    when it cannot be read as a ruleset (a damaged row)."""
    try:
        return set(Ruleset.from_dict(rules).in_force())
    except (RulesetError, TypeError, ValueError):
        return set(rules)


def identity_changes(stored: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two tournaments' identities (stored configs, or
    :meth:`TournamentConfig.identity`), in words: ``["bots added: r3", "max_deals 3 → 4"]``.
    A drawn seed is never shown (it is a secret), nor a bot's launch command (it may hold a
    token: it is said to differ).

    >>> identity_changes({"matches_per_table": 1, "bots": [{"name": "a"}]},
    ...                  {"matches_per_table": 2, "bots": [{"name": "a"}, {"name": "b"}]})
    ['bots added: b', 'matches_per_table 1 → 2']
    >>> identity_changes({"bots": [{"name": "carol", "code": "1"}, {"name": "bob"}]},
    ...                  {"bots": [{"name": "caroline", "code": "1"}]})
    ['bot carol renamed caroline', 'bots removed: bob']
    """

    def short(value: Any) -> str:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        return text if len(text) <= 40 else text[:39] + "…"

    out: list[str] = []
    if "name" in stored and "name" in new and stored["name"] != new["name"]:
        # (a fixed `id` with another name: else the refusal says only "its settings")
        out.append(f"name {short(stored['name'])} → {short(new['name'])}")
    old_bots, new_bots = _bots_of(stored), _bots_of(new)
    added = [str(n) for n in new_bots if n not in old_bots]
    removed = [str(n) for n in old_bots if n not in new_bots]
    # A bot added as one removed was, name apart (same launch, same code): renamed. Said as
    # such, where "bots added: caroline; bots removed: carol" hid that it is the same bot,
    # whose results under its old name no page joins to its new one.
    renamed = []
    for was_added in list(added):
        bot = new_bots.get(was_added)  # (None for a name that is no string: damaged)
        if isinstance(bot, Mapping) and bot.get("kind") == "remote":
            # Nothing but its name tells a remote bot (its token is never stored): every
            # two are alike, and a member who left and one who joined were said "renamed".
            continue
        same = [r for r in removed if bot and _but_name(old_bots.get(r) or {}) == _but_name(bot)]
        if same:
            renamed.append(f"bot {same[0]} renamed {was_added}")
            added.remove(was_added)
            removed.remove(same[0])
    out.extend(renamed)
    if added:
        out.append("bots added: " + ", ".join(added))
    if removed:
        out.append("bots removed: " + ", ".join(removed))
    bundled = bundled_changed(stored, new)
    if bundled:  # (one line: every bundled bot changes with the arena's version)
        out.append(
            f"bundled bots {', '.join(bundled)}: another version of the arena's bots/ than "
            "the one that played it"
        )
    for name, bot in new_bots.items():
        was = old_bots.get(name)
        if was is not None and was != bot and name not in bundled:
            # Which part: its code, its env, its cwd, else how it is launched (a command
            # is not shown: it may hold a token). "launch" alone named an env change too.
            parts = {"code": "code", "env": "env", "cwd": "cwd"}
            differ = [k for k in sorted(set(was) | set(bot)) if was.get(k) != bot.get(k)]
            said = [parts.get(k, "launch") for k in differ]
            what = " and ".join(
                dict.fromkeys(sorted(said, key=("launch", "code", "cwd", "env").index))
            )
            if (
                bot.get("kind") == "remote"
                and {k: v for k, v in was.items() if k not in ("env", "cwd")} == bot
            ):
                # (Ignored by an arena before 9c88df0, yet in its id; refused now: "run it
                # with the config it was started with" cannot be done.)
                what = (
                    "env or cwd, which a remote bot may no longer have (they were ignored): "
                    "this arena cannot resume that tournament"
                )
            out.append(f"bot {name}'s {what}")
    if added == removed == renamed == [] and list(old_bots) != list(new_bots):
        out.append("the order of the bots")
    old_rules, new_rules = stored.get("ruleset"), new.get("ruleset")
    if isinstance(old_rules, Mapping) and isinstance(new_rules, Mapping):
        keys = [k for k in sorted(set(old_rules) | set(new_rules)) if k != "name"]
        # (an option neither ruleset uses is no change: a file may no longer set it)
        used = _used_options(old_rules) | _used_options(new_rules)
        rules = [k for k in keys if old_rules.get(k) != new_rules.get(k) and k in used]
        if old_rules.get("name") != new_rules.get("name"):
            name_was, name_now = short(old_rules.get("name")), short(new_rules.get("name"))
            out.append(f"ruleset {name_was} → {name_now}")
            if len(rules) > 3:  # another preset: every rule of its own is not news
                rules = ["max_deals"] if "max_deals" in rules else []
        for key in rules:
            name = "max_deals" if key == "max_deals" else f"ruleset.{key}"
            out.append(f"{name} {short(old_rules.get(key))} → {short(new_rules.get(key))}")
    elif old_rules != new_rules:
        out.append("ruleset")
    # (`draw_probability` is stored at the top, but the config's key is in `[ratings]`.)
    labels = {"draw_probability": "ratings.draw_probability"}
    for key in ("matches_per_table", "deals", "deadlines", "draw_probability", "referee"):
        a, b = stored.get(key), new.get(key)
        if key == "deals":
            a, b = a or "duplicate", b or "duplicate"
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    old_text, new_text = (
                        # `[referee]` stores only the keys the config set: an unset one
                        # is the referee's default, not JSON's `null`.
                        f"unset ({_REFEREE_DEFAULTS[k]})"
                        if key == "referee" and k not in side and k in _REFEREE_DEFAULTS
                        else short(side.get(k))
                        for side in (a, b)
                    )
                    out.append(f"{key}.{k} {old_text} → {new_text}")
        elif a != b:
            out.append(f"{labels.get(key, key)} {short(a)} → {short(b)}")
    if stored.get("seed") != new.get("seed") and "seed" in stored and "seed" in new:
        seed_was, seed_now = (
            "drawn" if v is None else short(v) for v in (stored["seed"], new["seed"])
        )
        out.append(f"seed {seed_was} → {seed_now}")
    if stored.get("schedule") != new.get("schedule"):
        out.append("the arena's schedule version")
    return out


# ------------------------------------------------------------------------- loading

_TOP_KEYS = {
    "id", "name", "ruleset", "bots", "matches_per_table", "max_deals", "seed",
    "concurrency", "db", "out", "host", "port", "bot_wait_s", "match_timeout_s",
    "deadlines", "ratings", "referee", "tls", "deals",
}  # fmt: skip
#: The top-level keys of a tournament config (`arena serve --tokens` names one given to it).
CONFIG_KEYS: frozenset[str] = frozenset(_TOP_KEYS)
#: The most worker processes a bot may have (``arena-bot run --workers``): more than any
#: machine here has cores, and a typo of 10**6 must not fork-bomb the organiser's machine.
MAX_WORKERS = 256
_BOT_KEYS = {"bot", "command", "remote", "token", "token_env", "env", "cwd", "workers"}
_DEADLINE_KEYS = {"decision_ms", "time_bank_ms"}
_RATING_KEYS = {"draw_probability"}
_REFEREE_KEYS = {"max_strikes", "reconnect_grace_s"}
#: What the referee plays with when `[referee]` leaves a key out (as the docs' table says).
_REFEREE_DEFAULTS = {
    f.name: f.default for f in dataclasses.fields(RefereeConfig) if f.name in _REFEREE_KEYS
}
_TLS_KEYS = {"cert", "key", "server_name"}


def load_config(
    path: str | Path, overrides: Sequence[str] = (), given_as: Mapping[str, str] | None = None
) -> TournamentConfig:
    """Read, override (``key=value`` strings) and validate a tournament TOML file.

    A bad value that an override set is said to come from it, not from the file (which may
    hold another value, or none): ``t.toml: max_deals: ..., got -3 (from --set max_deals=-3,
    not from the file)``; ``given_as`` maps an override to how the user wrote it
    (``"max_deals=-3"`` -> ``"--max-deals -3"``)."""
    in_file = _read_toml(path)
    data = apply_overrides(in_file, overrides, str(path))
    _check_utf8(Path(path).resolve(), "file", partial(ConfigError, str(path)))  # (its base)
    try:
        return parse_config(data, source=str(path), base_dir=Path(path).resolve().parent)
    except ConfigError as e:
        item = _override_of(e.key, overrides, in_file)
        if item is None:
            raise
        where = _cut((given_as or {}).get(item) or f"--set {item}")
        raise ConfigError(
            e.source, e.key, f"{e.message} (from {where}, not from the file)"
        ) from None


def _override_of(key: str, overrides: Sequence[str], in_file: Mapping[str, Any]) -> str | None:
    """The last override that set ``key``, or a table holding it (``ruleset={...}`` for
    ``ruleset.players``), or made the table ``key`` the file does not have (an unknown key
    ``dedlines`` from ``dedlines.decision_ms=5``); None when the value came from the file."""
    for item in reversed(overrides):
        set_key = _set_key(item)
        if set_key and (key == set_key or key.startswith((set_key + ".", set_key + "["))):
            return item
    node: Any = in_file
    parts = _key_parts(key)
    for i, part in enumerate(parts):
        if not isinstance(node, Mapping) or part not in node:
            # The first part the file does not have: an override made it, setting a key
            # inside (`--set tls.cert=x` made the table of a "tls.key: missing").
            missing = error_key(*parts[: i + 1])
            break
        node = node[part]
    else:
        return None  # the file has it
    for item in reversed(overrides):
        if _set_key(item).startswith(missing + "."):
            return item
    return None


def _read_toml(path: str | Path) -> dict[str, Any]:
    try:
        return read_toml_file(path)
    except TomlFileError as e:  # (a key set twice: its line is quoted, and here ...)
        guess = " (two bots of one name?)" if _in_bots(path, e) else ""  # ... the usual cause
        raise ConfigError(str(path), "file", f"{e}{guess}") from None


_SET_TWICE_LINE_RE = re.compile(r": line (\d+) \((.*) = \.\.\.\) sets a key")
_HEADER_RE = re.compile(r"\s*\[\s*([^\]]*?)\s*\]")


def _in_bots(path: str | Path, e: TomlFileError) -> bool:
    """Whether the key ``e`` says was set twice is a bot's (in ``[bots]``, or ``bots``
    itself): only there is "two bots of one name?" the likely cause (a ``name = ...`` set
    twice was asked about bots too)."""
    m = _SET_TWICE_LINE_RE.search(str(e)) if e.key_set_twice else None
    if m is None:
        return False
    if m[2] == "bots" or m[2].startswith(("bots.", "bots ")):
        return True
    try:
        lines = Path(path).read_bytes().decode("utf-8").split("\n")
    except (OSError, ValueError):
        return False
    for line in reversed(lines[: int(m[1]) - 1]):
        header = _HEADER_RE.match(line)
        if header is not None:
            return header[1] == "bots"
    return False


def stored_where(path: str | Path) -> tuple[Path, str]:
    """Where a config's tournaments are stored, read without validating the rest: its
    database and its ``id`` (else its ``name``, which names the latest of them). For readers
    (``arena leaderboard --config``): a remote bot's secret, a bot file moved since, have no
    say in where the results are."""
    source = str(path)
    data = _read_toml(path)

    def text(key: str, default: str) -> str:
        value = data.get(key, default)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(source, key, f"expected a non-empty string, got {toml_shown(value)}")
        return value

    name = text("name", "tournament")
    db = _path(text("db", f"runs/{name}.sqlite"), "db", partial(ConfigError, source))
    return db, text("id", name)


def bot_logs(path: str | Path, also: Iterable[str] = ()) -> dict[Path, str]:
    """The bots' logs a run of the config at ``path`` writes (``<out>/logs/<bot>.log``), each
    with its bot's name, read as :func:`stored_where` reads the database: without validating
    the rest (a bot file moved since still has its log). For readers that write a file
    (``arena leaderboard --config X --out FILE``), which must not write over one. ``also``:
    other bots whose logs are there (a stored tournament's: a bot that crashed and was
    taken out of the config since still has its log). A bot whose name is no bot name has
    none (the config refuses it)."""
    data = _read_toml(path)
    name = data.get("name", "tournament")
    out = data.get("out", f"out/{name}")
    if not isinstance(out, str) or not out.strip():
        raise ConfigError(str(path), "out", f"expected a non-empty string, got {toml_shown(out)}")
    folder = _path(out, "out", partial(ConfigError, str(path)))
    bots = data.get("bots")
    if isinstance(bots, list):  # (a bot of the list is named after its class, else as written)
        names = [b.rsplit(":", 1)[-1] for b in bots if isinstance(b, str)]
    else:
        names = list(bots) if isinstance(bots, Mapping) else []
    return {bot_log_path(folder, b): b for b in [*names, *also] if _NAME_RE.match(b)}


def bot_log_path(out: Path, bot: str) -> Path:
    """Where a run whose ``out`` is ``out`` writes bot ``bot``'s log: the runner's, and
    what :func:`bot_logs` and the config's check of its database read."""
    return out / "logs" / f"{bot}.log"


_INLINE_TABLE_RE = re.compile(r"""\{\s*(\}|[\w"'.-]+\s*=)""")


def apply_overrides(
    data: Mapping[str, Any], overrides: Sequence[str], source: str = "<config>"
) -> dict[str, Any]:
    """Return a copy of ``data`` with ``a.b=value`` overrides set (value read as TOML).

    >>> apply_overrides({"seed": 1}, ["seed=7", "deadlines.decision_ms=500"])
    {'seed': 7, 'deadlines': {'decision_ms': 500}}
    >>> apply_overrides({}, ["ruleset=classic", "name=my-cup"])
    {'ruleset': 'classic', 'name': 'my-cup'}
    """
    # (not a JSON round trip: TOML has dates and times, which JSON cannot hold)
    out: dict[str, Any] = copy.deepcopy(dict(data))
    for item in overrides:
        try:
            parts, raw = _split_override(item)
        except ValueError as e:
            raise ConfigError(source, "--set", str(e)) from None
        key = error_key(*parts)
        try:
            doc = tomllib.loads(f"v = {raw.strip()}")
            value: Any = doc["v"]
        except ValueError as e:
            if not isinstance(e, tomllib.TOMLDecodeError):  # (a traceback)
                raise ConfigError(
                    source, key, f"not a TOML value: {toml_value_problem(e)}"
                ) from None
            text = raw.strip()
            # Meant as TOML (a string, an array, an inline table), and it is not. A command
            # with a placeholder ("{python} bot.py") starts with a brace too: a bare word.
            if text[:1] in ('"', "'", "[") or _INLINE_TABLE_RE.match(text):
                raise ConfigError(source, key, f"not a TOML value: {_cut(text)} ({e})") from e
            value = raw.strip()  # a bare word: a string
        else:
            # (`3\nseed = 5`: its second line would be dropped silently. Refused here, not in
            # the try: a ConfigError is a ValueError too, and was said again inside "not a
            # TOML value: <file>: <key>: ...")
            if len(doc) > 1:
                raise ConfigError(source, key, f"not one TOML value: {toml_shown(raw.strip())} "
                                  "holds a line break and another key")  # fmt: skip
        node = out
        for i, part in enumerate(parts[:-1]):
            if part not in node:
                # A name holding a dot written bare (`bots.v1.2.env.X` for the bot "v1.2")
                # made a table `v1` of its own, refused as its unknown key "2".
                for j in range(len(parts) - 1, i, -1):
                    if ".".join(parts[i : j + 1]) in node:
                        meant = error_key(
                            *parts[:i], ".".join(parts[i : j + 1]), *parts[j + 1 :], paste=True
                        )
                        there = error_key(*parts[: i + 1], paste=True)
                        raise ConfigError(
                            source,
                            key,
                            f"no key {there!r} to set inside; a part holding a dot is quoted "
                            f"as in TOML: --set '{meant}={raw.strip()}'",
                        )
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                # (said with what it is, and how to set the table whole: a house rule on a
                # preset, `--set ruleset.must_beat=true` over `ruleset = "classic"`, is the
                # usual case)
                whole = error_key(*parts[: i + 1], paste=True)  # (to paste: "v1.2" quoted)
                shown = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else raw
                inner = f"{error_key(*parts[i + 1 :], paste=True)} = {_cut(shown.strip())}"
                hint = ""
                preset = whole == "ruleset" and isinstance(child, str) and child in PRESETS
                if preset and parts[1:] == ["preset"]:
                    # (the string is the preset: `ruleset.preset=1001` over "classic" was
                    # told `ruleset={preset = "classic", preset = "1001"}`, a key set twice.
                    # Over a ruleset file, the preset is the file's: said below, as for any
                    # option, not replaced by the preset alone, losing the file's rules.)
                    hint = f"; set it whole: --set '{whole}={_cut(shown.strip())}'"
                elif preset:
                    inner = f"preset = {json.dumps(child)}, {inner}"
                    hint = f"; set it whole: --set '{whole}={{{inner}}}'"
                elif whole == "ruleset" and isinstance(child, str):
                    # (a ruleset file: its options are the file's, a table cannot name it;
                    # its preset is a string there, `preset = 1001` refused)
                    if parts[1:] == ["preset"] and not isinstance(value, str):
                        inner = f"preset = {json.dumps(_cut(raw.strip()))}"
                    hint = (f"; it names a ruleset file: set {inner} in that file (or in a "
                            "copy of it, named by --set ruleset=PATH)")  # fmt: skip
                elif parts[0] == "bots" and i == 1 and isinstance(child, str):
                    if parts[2:] == ["bot"]:  # (the bundled bot is what the string names)
                        hint = f"; set it whole: --set '{whole}={_cut(shown.strip())}'"
                    else:
                        inner = f"bot = {_cut(json.dumps(child, ensure_ascii=False))}, {inner}"
                        hint = f"; set it whole: --set '{whole}={{{inner}}}'"
                what = f"{_tname(child)} ({child!r:.40})"
                raise ConfigError(
                    source,
                    key,
                    f"cannot set inside {toml_shown(part)}: it is {what}, not a table{hint}",
                )
            node = child
        node[parts[-1]] = value
    return out


def _split_override(item: str) -> tuple[list[str], str]:
    """``a."b.c".d=1`` -> (["a", "b.c", "d"], "1"): the key's parts, each bare or quoted as
    in TOML (a bot named "v1.2" is ``bots."v1.2".command``), and the raw value. A key that is
    not TOML but has no quote (``bots.my bot.x``) is split at its dots. What is no key at
    all raises ``ValueError`` saying what is wrong with it."""
    key, raw = split_toml_key(item)
    if raw is None:
        if "=" in item and ("'" in item or '"' in item) and not _is_toml_key(item):
            # (every `=` inside quotes: one was never closed)
            raise ValueError(f"a quote in the key of {toml_shown(item)} is not closed")
        raise ValueError(f"expected key=value, got {toml_shown(item)}")
    if not key:
        raise ValueError(f"expected key=value, got {toml_shown(item)}")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in key):
        # (a line break would make the key a TOML document: `[a]\nb` reads as a table)
        raise ValueError(f"the key {toml_shown(key)} holds a line break or a control character")
    try:
        node: Any = tomllib.loads(f"{key} = 0")
    except tomllib.TOMLDecodeError as e:
        if "'" in key or '"' in key:
            raise ValueError(
                f"the key {toml_shown(key)} is not a TOML key ({e}): quote a part holding a dot "
                """as in TOML, bots."v1.2".env.X=1"""
            ) from None
        parts = [p.strip() for p in key.split(".")]
    else:
        parts = []
        while isinstance(node, dict):  # (one key at each level: it is one dotted key)
            ((part, node),) = node.items()
            parts.append(part)
    if not all(parts):
        raise ValueError(f"the key {toml_shown(key)} has an empty part (two dots in a row, a dot "
                         'at an end, or "")')  # fmt: skip
    return parts, raw


def _is_toml_key(text: str) -> bool:
    try:
        tomllib.loads(f"{text} = 0")
    except tomllib.TOMLDecodeError:
        return False
    return True


def _set_key(item: str) -> str:
    """The dotted key an override sets, as an error names it (:func:`error_key`; ``""`` for
    one that is no key=value)."""
    try:
        return error_key(*_split_override(item)[0])
    except ValueError:
        return ""


def override_key(item: str) -> str:
    """The dotted key a ``--set`` override sets, each part bare or quoted as in TOML, as
    the config's errors name it (``""`` for one that is no key=value:
    :func:`apply_overrides` says why).

    >>> override_key("deadlines.decision_ms=500"), override_key("bots.'v1.2'.cwd='.'")
    ('deadlines.decision_ms', 'bots."v1.2".cwd')
    """
    return _set_key(item)


def error_key(*parts: str, paste: bool = False) -> str:
    """A dotted key as an error names it: each part bare when TOML writes it so
    (``workers``), else in double quotes as TOML writes it (``"v1.2"``, ``"my var"``,
    ``"it's"``, ``""``): :func:`engine.rules.toml_key`, a letter of any script left as it
    is and what a terminal would obey written out (``\\x1b``), each part cut at 100
    characters (:func:`_cut`). Unquoted, the bot "v1.2" made ``bots.v1.2.workers``: the
    bot "v1" and its key "2"? ``paste``: the key whole, as TOML writes it in a file (a
    character past ASCII escaped, ``"\\u00fc"``), for a hint to paste into ``--set``.

    >>> print(error_key("bots", "v1.2", "workers"), error_key("env", "it's", ""))
    bots."v1.2".workers env."it's".""
    """
    return ".".join(toml_key(p) if paste else _cut(toml_key(p, ensure_ascii=False)) for p in parts)


def _key_parts(key: str) -> list[str]:
    """The parts of a key an error named (:func:`error_key`): ``bots."v1.2".cwd`` ->
    ``["bots", "v1.2", "cwd"]``; a key that is no TOML key (``bots[2]``) split at its dots."""
    try:
        node: Any = tomllib.loads(f"{key} = 0")
    except tomllib.TOMLDecodeError:
        return key.split(".")
    parts = []
    while isinstance(node, dict) and len(node) == 1:
        ((part, node),) = node.items()
        parts.append(part)
    return parts


def parse_config(
    data: Mapping[str, Any], *, source: str = "<config>", base_dir: Path | None = None
) -> TournamentConfig:
    """Validate the TOML data of a tournament config. ``base_dir`` resolves ruleset files."""
    base = base_dir or Path.cwd()

    def err(key: str, msg: str) -> ConfigError:
        return ConfigError(source, key, msg)

    if not isinstance(data, Mapping):
        raise err("config", "expected a table")
    _check_not_another_file(data, Path(source).name, err)
    _check_keys(data, _TOP_KEYS, "", err)

    name = _get(data, "name", str, "tournament", err)
    if not _NAME_RE.match(name):
        raise err(
            "name",
            f"start with a letter or a digit, then use letters, digits, '.', '_' "
            f"or '-' (at most 64), got {toml_shown(name)}",
        )
    explicit_id = data.get("id")
    if explicit_id is not None and (
        not isinstance(explicit_id, str) or not _NAME_RE.match(explicit_id)
    ):
        raise err(
            "id",
            f"expected a name starting with a letter or a digit, then letters, "
            f"digits, '.', '_' or '-', got {toml_shown(explicit_id)}",
        )

    ruleset, ruleset_source = _ruleset(data.get("ruleset", "classic"), base, err)
    # A cap written in the ruleset file holds unless the config sets one (not the
    # default's 20).
    max_deals = _get(data, "max_deals", int, ruleset.max_deals or 20, err)
    if not 0 <= max_deals <= MAX_INT:
        raise err(
            "max_deals", f"must be 0 (no cap) or up to {MAX_INT}, got {toml_shown(max_deals)}"
        )
    ruleset = dataclasses.replace(ruleset, max_deals=max_deals)

    matches_per_table = _get(data, "matches_per_table", int, 1, err)
    if not 1 <= matches_per_table <= MAX_MATCHES:
        raise err(
            "matches_per_table",
            f"must be between 1 and {MAX_MATCHES}, got {toml_shown(matches_per_table)}",
        )
    deals = _get(data, "deals", str, "duplicate", err)
    if deals not in ("duplicate", "independent"):
        raise err("deals", f'expected "duplicate" or "independent", got {toml_shown(deals)}')
    seed = _get(data, "seed", int, None, err)
    if seed is not None and not 0 <= seed < 2**63:
        raise err("seed", f"must be between 0 and 2**63-1, got {toml_shown(seed)}")
    concurrency = _get(data, "concurrency", int, 2, err)
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise err(
            "concurrency",
            f"must be between 1 and {MAX_CONCURRENCY} (matches played at once: one bot's "
            f"stream holds at most that many seats), got {toml_shown(concurrency)}",
        )
    host = _get(data, "host", str, "127.0.0.1", err).strip()
    if host.startswith("[") and host.endswith("]"):  # an IPv6 address as in a URL: [::1]
        host = host[1:-1]
    problem = host_problem(host)
    if problem is not None:
        raise err("host", problem)
    port = _get(data, "port", int, 0, err)
    if not 0 <= port <= 65535:
        raise err("port", f"must be between 0 (any free port) and 65535, got {toml_shown(port)}")
    bot_wait_s = float(_get(data, "bot_wait_s", (int, float), 30.0, err))
    if bot_wait_s <= 0:
        raise err("bot_wait_s", f"must be positive, got {toml_shown(data['bot_wait_s'])}")
    match_timeout_s = float(_get(data, "match_timeout_s", (int, float), 0.0, err))
    if match_timeout_s < 0:
        raise err(
            "match_timeout_s",
            f"must be 0 (none) or positive, got {toml_shown(data['match_timeout_s'])}",
        )
    paths = {}
    for key, default in (("db", f"runs/{name}.sqlite"), ("out", f"out/{name}")):
        text = _get(data, key, str, default, err)
        if not text.strip():  # Path("") is the current directory
            raise err(key, "must not be empty")
        paths[key] = _path(text, key, err)
    db, out = paths["db"], paths["out"]
    for key, path in paths.items():
        is_dir, exists = _probe(path, Path.is_dir, key, err), _probe(path, Path.exists, key, err)
        if key == "db" and (is_dir or not path.name):
            raise err("db", f"{path} is a directory: name the database file")
        if key == "db" and exists and not _probe(path, Path.is_file, key, err):
            # (a FIFO, /dev/null: SQLite said only "disk I/O error", exit 1, as the run began)
            raise err("db", f"{path} is not a regular file (a FIFO, device or socket): name "
                      "the database file")  # fmt: skip
        if key == "out" and exists and not is_dir:
            raise err("out", f"{path} is not a directory")

    deadlines = _deadlines(_subtable(data, "deadlines", _DEADLINE_KEYS, err), err)
    draw_probability = _draw_probability(_subtable(data, "ratings", _RATING_KEYS, err), err)
    referee = _referee(_subtable(data, "referee", _REFEREE_KEYS, err), err)

    tls = _tls(data.get("tls"), base, err)
    # Every table of `players` bots in every seating, per deal-seed set (total_matches):
    # counted before each bot is read (and its code digested: 20,000 bots took half a minute
    # to be refused).
    count = len(data["bots"]) if isinstance(data.get("bots"), list | Mapping) else 0
    total = math.perm(count, ruleset.players) * matches_per_table
    if total > MAX_MATCHES:
        raise err(
            "matches_per_table",
            f"{count} bots and matches_per_table = {matches_per_table} make {total:,} "
            f"matches: at most {MAX_MATCHES:,} may be scheduled",
        )
    bots = _bots(data.get("bots"), base, err)
    if len(bots) < ruleset.players:
        raise err(
            "bots",
            f"ruleset {ruleset.name!r} seats {ruleset.players} players: at least "
            f"{ruleset.players} bots are needed, got {len(bots)}",
        )
    # The database must not be a file the run writes over at its end (every result lost).
    from arena.leaderboard.render import FORMATS

    written = [out / f"leaderboard.{fmt}" for fmt in FORMATS]
    written += [bot_log_path(out, b.name) for b in bots]
    if any(_same_path(db, w) for w in written):
        raise err("db", f"{db} is a file the tournament writes (its leaderboard, a bot's log "
                  "in out): give the database another path")  # fmt: skip
    if _same_path(db, out) or _same_path(db, out / "logs"):
        # (the database was made there, then `out` or its `logs` could not be: exit 1 after
        # the bots were about to start, "check the out directory", the database blamed on out)
        raise err("db", f"{db} is the directory the tournament writes (out, or its logs): "
                  "give the database another path")  # fmt: skip
    return TournamentConfig(
        name=name,
        ruleset=ruleset,
        ruleset_source=ruleset_source,
        bots=bots,
        matches_per_table=matches_per_table,
        max_deals=max_deals,
        seed=seed,
        concurrency=concurrency,
        db=db,
        out=out,
        host=host,
        port=port,
        bot_wait_s=bot_wait_s,
        match_timeout_s=match_timeout_s,
        deadlines=deadlines,
        tls=tls,
        draw_probability=draw_probability,
        referee=referee,
        explicit_id=explicit_id,
        source=source,
        deals="independent" if deals == "independent" else "duplicate",
    )


def _subtable(data: Mapping[str, Any], key: str, known: set[str], err: _Err) -> Mapping[str, Any]:
    """The config's ``[key]`` table (empty when absent), its keys checked against ``known``."""
    table = data.get(key, {})
    if not isinstance(table, Mapping):
        raise err(key, f"expected a table, got {_tname(table)}")
    _check_keys(table, known, f"{key}.", err)
    return table


def _deadlines(data: Mapping[str, Any], err: _Err) -> Deadlines:
    """``[deadlines]``: ``decision_ms`` and ``time_bank_ms``, within the referee's bounds."""
    decision_ms = _get(data, "decision_ms", int, 2000, err, "deadlines.")
    time_bank_ms = _get(data, "time_bank_ms", int, 20000, err, "deadlines.")
    for key, value, low in (("decision_ms", decision_ms, 1), ("time_bank_ms", time_bank_ms, 0)):
        problem = deadline_problem(value, low)
        if problem is not None:
            raise err(f"deadlines.{key}", problem)
    return Deadlines(decision_ms=decision_ms, time_bank_ms=time_bank_ms)


def _draw_probability(data: Mapping[str, Any], err: _Err) -> float:
    """``[ratings]``: ``draw_probability``."""
    draw_probability = float(
        _get(data, "draw_probability", (int, float), DEFAULT_DRAW_PROBABILITY, err, "ratings.")
    )
    if not 0 < draw_probability <= MAX_DRAW_PROBABILITY:
        # TrueSkill's draw margin overflows as the probability nears 1.
        raise err(
            "ratings.draw_probability",
            f"must be above 0 and at most {MAX_DRAW_PROBABILITY}, "
            f"got {toml_shown(data['draw_probability'])}",
        )
    return draw_probability


def _referee(data: Mapping[str, Any], err: _Err) -> tuple[tuple[str, Any], ...]:
    """``[referee]``: the options it sets (``max_strikes``, ``reconnect_grace_s``), as
    ``(name, value)`` pairs; the referee's defaults hold for the others."""
    referee: list[tuple[str, Any]] = []
    if "max_strikes" in data:
        strikes = _get(data, "max_strikes", int, 3, err, "referee.")
        if not 1 <= strikes <= MAX_STRIKES:
            raise err(
                "referee.max_strikes",
                f"must be between 1 and {MAX_STRIKES:,}, got {toml_shown(strikes)}",
            )
        referee.append(("max_strikes", strikes))
    if "reconnect_grace_s" in data:
        grace = float(_get(data, "reconnect_grace_s", (int, float), 5.0, err, "referee."))
        if grace < 0:
            raise err(
                "referee.reconnect_grace_s",
                f"must not be negative, got {toml_shown(data['reconnect_grace_s'])}",
            )
        referee.append(("reconnect_grace_s", grace))
    return tuple(referee)


def _same_path(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (neither need exist)."""
    return os.path.realpath(a) == os.path.realpath(b)


def _tls(data: object, base: Path, err: _Err) -> TLSSpec | None:
    """``[tls]``: ``cert`` and ``key`` (PEM files, relative to the config file) and an
    optional ``server_name``."""
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise err("tls", f"expected a table with cert and key, got {_tname(data)}")
    _check_keys(data, _TLS_KEYS, "tls.", err)
    for key in ("cert", "key"):
        if key not in data:
            raise err(f"tls.{key}", "missing: [tls] needs both cert and key (PEM files)")
    files: list[Path] = []
    for key, what in (("cert", "certificate"), ("key", "private key")):
        path = _path(_get(data, key, str, "", err, "tls."), f"tls.{key}", err, base)
        if not _probe(path, Path.is_file, f"tls.{key}", err):
            why = "not a regular file" if path.exists() else "no such file"
            raise err(f"tls.{key}", f"{why}: {_cut(path)}")
        problem = pem_problem(path, what)
        if problem is not None:
            raise err(f"tls.{key}", problem)
        files.append(path.resolve())
    problem = key_pair_problem(files[0], files[1])
    if problem is not None:
        raise err("tls.key", problem)
    problem = cert_expired_problem(files[0])
    if problem is not None:
        raise err("tls.cert", problem)
    server_name = _get(data, "server_name", str, "localhost", err, "tls.")
    if not server_name.strip():
        raise err("tls.server_name", "must not be empty")
    if not all(c.isprintable() and not c.isspace() for c in server_name.strip()):
        raise err("tls.server_name", f"a host name, without spaces, got {toml_shown(server_name)}")
    non_ascii = non_ascii_problem(server_name.strip())
    if non_ascii:  # (was "cannot resolve" once the run had started, exit 1)
        raise err("tls.server_name", non_ascii)
    return TLSSpec(files[0], files[1], server_name.strip())


# ------------------------------------------------------------------------- helpers

#: Makes the ConfigError for a key and its problem (``parse_config``'s ``err``).
_Err = Callable[[str, str], ConfigError]


def _path(text: str, key: str, err: _Err, base: Path | None = None) -> Path:
    """``text`` as an absolute path (``~`` expanded; relative to ``base``, else to the
    current directory), or a ConfigError naming ``key`` and why there is none."""
    if not text.strip():  # Path("") is the directory: the config's or the current one
        raise err(key, "must not be empty: name a path")
    if "\x00" in text:
        raise err(key, f"a path with a NUL byte: {toml_shown(text)}")
    try:
        path = Path(text).expanduser()
        path = (base / path if base is not None else path).resolve()
    except RuntimeError as e:  # "~nobody", a symlink loop
        raise err(key, f"no path in {toml_shown(text)}: {e}") from None
    except OSError as e:
        raise err(key, f"no path: {e.strerror or e}") from None
    _check_utf8(path, key, err)
    return path


def _check_utf8(path: Path, key: str, err: _Err) -> None:
    """Refuse a path whose name is not UTF-8 (bytes of another encoding, as the command
    line and the file system may give them): it is stored and digested as text, and a new
    tournament ended in a ``UnicodeEncodeError`` traceback as it was registered."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise err(key, f"{_cut(shown)}: a path that is not UTF-8 text (a byte of another "
                  "encoding in a name): rename it, or choose another path") from None  # fmt: skip


def _syntax_problem(path: Path) -> str | None:
    """Why the bot file at ``path`` is no Python this interpreter (the bots' own) can
    compile, if it is not: compiled, never run, so that a typo is named before the referee
    and the other bots start. A file past the digest's size is left to the bot's launch."""
    try:
        if path.stat().st_size > _DIGEST_MAX_BYTES:
            return None
        source = path.read_bytes()
    except OSError:  # (the launch says why it cannot be read)
        return None
    try:
        # Its warnings (an invalid escape "\d", `is` with a literal) are the bot's to show
        # when it runs: printed here they would seem to come from the arena, and with
        # warnings as errors (-W error) a bot that runs would be refused as a SyntaxError.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as e:  # IndentationError and TabError among them
        where = f", line {e.lineno}" if e.lineno else ""
        return f"{path}{where}: {type(e).__name__}: {e.msg}"
    except ValueError as e:  # a NUL byte in the source
        return f"{path}: not Python source: {e}"
    except (RecursionError, MemoryError):  # nested past the compiler's limits: as it runs,
        return None  # the bot says so itself
    return None


def _holds(path: Path, test: Callable[[Path], bool]) -> bool:
    """``test(path)``, false where the system cannot say (a name too long for it: a
    ``cwd`` that is no directory of ours, a command's word that is no file of the bot's)."""
    try:
        return test(path)
    except OSError:
        return False


def _probe(path: Path, test: Callable[[Path], bool], key: str, err: _Err) -> bool:
    """``test(path)`` (``Path.exists``, ``is_file``, ``is_dir``), or a ConfigError naming
    ``key`` when the system cannot say: Python 3.11's tests raise ``OSError`` for a name too
    long for the file system (which the command line would show as ``Error: <path>: File
    name too long``, exit 1, naming neither the config nor the key)."""
    try:
        return test(path)
    except OSError as e:
        raise err(key, f"{_cut(path)}: {e.strerror or e}") from None


def _cut(text: object, limit: int = 100) -> str:
    """``text`` (a key, a path, an override) as a message quotes it: what a terminal would
    obey written out, and cut at ``limit`` characters, saying how long it was (a value of
    5,000 characters, a path too long for the system, was quoted whole: one line of 5 KB)."""
    shown = printable(str(text))
    if len(shown) <= limit:
        return shown
    return f"{shown[:limit]}... ({len(str(text)):,} characters)"


def _tname(value: object) -> str:
    return {
        bool: "a boolean", int: "an integer", float: "a float", str: "a string",
        list: "an array", dict: "a table", datetime.date: "a date",
        datetime.datetime: "a date-time", datetime.time: "a time",
    }.get(type(value), type(value).__name__)  # fmt: skip


def _check_not_another_file(data: Mapping[str, Any], file: str, err: _Err) -> None:
    """Refuse, saying so, a file that is another of the product's: a ruleset file (it sets
    ``preset``: "preset: unknown key (did you mean 'ruleset'?)" hid the mistake) or an
    `arena serve --tokens` file, ``[bots]`` of ``name = "token"``, whose first token was
    quoted as "unknown bundled bot 'tokentoken...'": a secret on the screen, in a CI log."""
    if "preset" in data and "bots" not in data:
        raise err("preset", f"this is a ruleset file (it sets preset), not a tournament config: "
                  f'a config names it, ruleset = "{_cut(file)}", beside its [bots]')  # fmt: skip
    bots = data.get("bots")
    if set(data) == {"bots"} and holds_tokens(bots):
        assert isinstance(bots, Mapping)
        if all(len(v) >= MIN_TOKEN for v in bots.values()):
            raise err("bots", "this looks like an `arena serve --tokens` file (name = \"token\"), "
                      "not a tournament config: no bot of it names a bundled bot ("
                      f"{', '.join(BUNDLED_BOTS)}), a module:Class or a file.py (its values, "
                      "which may be tokens, are not shown)")  # fmt: skip


def holds_tokens(bots: object) -> bool:
    """Whether ``bots`` (a file's ``[bots]``) is a table of ``name = "token"``, as an `arena
    serve --tokens` file holds, not a tournament config's: not empty, and every value a
    string that names no bot (a bundled bot, a module:Class, a file.py, nor nearly one)."""
    return (
        isinstance(bots, Mapping)
        and bool(bots)
        and all(isinstance(v, str) and not _names_a_bot(v) for v in bots.values())
    )


def _names_a_bot(spec: str) -> bool:
    """Whether ``spec`` is, or nearly is (a typo), a bot as ``[bots]`` names one."""
    return bool(
        spec.lower() in BUNDLED_BOTS
        or did_you_mean(spec.lower(), BUNDLED_BOTS)
        or _MODULE_CLASS_RE.match(spec)
        or spec.partition(":")[0].endswith(".py")
        # (a dotted module without its :Class, `mypkg.mybot`: no token has that shape)
        or re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", spec)
    )


def _check_keys(data: Mapping[str, Any], known: set[str], prefix: str, err: _Err) -> None:
    for key in data:
        if key not in known:
            # (quoted as in TOML: `"" = 1`, a key holding a dot or a space; a newline or
            # an escape sequence in it written out)
            raise err(
                f"{prefix}{error_key(key)}",
                f"unknown key{did_you_mean(key, known)}; known keys: {', '.join(sorted(known))}",
            )


def _get(
    data: Mapping[str, Any],
    key: str,
    want: type | tuple[type, ...],
    default: Any,
    err: _Err,
    prefix: str = "",
) -> Any:
    if key not in data:
        return default
    value = data[key]
    wants = want if isinstance(want, tuple) else (want,)
    ok = isinstance(value, wants) and not (isinstance(value, bool) and bool not in wants)
    if not ok:
        names = " or ".join(_tname(w()) for w in wants)
        raise err(f"{prefix}{key}", f"expected {names}, got {_tname(value)} {toml_shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise err(f"{prefix}{key}", f"expected a finite number, got {value!r}")
    if float in wants and isinstance(value, int) and not isinstance(value, bool):
        try:  # (the caller's float(): an integer of 400 digits ended in an OverflowError)
            float(value)
        except OverflowError:
            raise err(f"{prefix}{key}", f"expected a finite number, got {toml_shown(value)} "
                      "(past the range of a float)") from None  # fmt: skip
    return value


def _ruleset(value: Any, base: Path, err: _Err) -> tuple[Ruleset, str]:
    if isinstance(value, int) and not isinstance(value, bool) and str(value) in PRESETS:
        value = str(value)  # `--set ruleset=1001` reads as a number
    try:
        if isinstance(value, str):
            if value in PRESETS:
                return PRESETS[value], value
            if not value.strip():
                raise err("ruleset", f"must not be empty: name a preset ({', '.join(PRESETS)}) "
                          "or a ruleset .toml file")  # fmt: skip
            path = _path(value, "ruleset", err)  # (relative: to the current directory ...)
            relative = not Path(value).expanduser().is_absolute()
            if relative and _probe(base / value, Path.exists, "ruleset", err):
                path = _path(value, "ruleset", err, base)  # ... unless the config's has it
            if path.suffix != ".toml" and not _probe(path, Path.exists, "ruleset", err):
                raise err(  # (the words of load_ruleset: `arena-bot try --ruleset clasic`)
                    "ruleset",
                    f"unknown preset {toml_shown(value)}{did_you_mean(value, PRESETS)}; known: "
                    f"{', '.join(PRESETS)}; or a .toml file",
                )
            if not _probe(path, Path.exists, "ruleset", err):
                raise err(
                    "ruleset", f"ruleset file {toml_shown(value)} not found (looked in {base})"
                )
            try:
                return load_ruleset(path), str(path)
            except RulesetError as e:  # the key is the ruleset file's (named), not the config's
                raise err("ruleset", str(e)) from e
        if isinstance(value, Mapping):
            return Ruleset.from_dict(value, unused=False), "inline"
    except RulesetError as e:
        raise err(f"ruleset.{e.key}", str(e).split(": ", 1)[-1]) from e
    raise err("ruleset", f"expected a preset name, a file path or a table, got {_tname(value)}")


def _bots(value: Any, base: Path, err: _Err) -> tuple[BotSpec, ...]:
    if value is None:
        raise err("bots", 'missing: name the bots, e.g. [bots] random = "random"')
    at: dict[str, int] = {}  # a bot of the list -> its index (the key its faults are said at)
    if isinstance(value, list):
        # bots = ["random", "heuristic"]: bundled names, module:Class or file.py:Class.
        entries: dict[str, Any] = {}
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise err(f"bots[{i}]", f"expected a bot name, got {_tname(item)}")
            short = item.rsplit(":", 1)[-1] if ":" in item else item
            if not _NAME_RE.match(short):  # (a value: "'x/y.py' makes no bot name")
                raise err(
                    f"bots[{i}]",
                    f"{toml_shown(item)} makes no bot name (a bot of the list is named after its "
                    f"class, else as written; {BOT_NAME_RULE}): write it as 'path/file.py:Class', "
                    "or name it in a [bots] table",
                )
            if short in entries:
                raise err(f"bots[{i}]", f"duplicate bot name {short!r}")
            entries[short] = item
            at[short] = i
        value = entries
    if not isinstance(value, Mapping):
        # (an array of names is the other form: `bots = ["random", "heuristic", ...]`)
        raise err("bots", f"expected a table of bots or an array of their names, got "
                          f"{_tname(value)}")  # fmt: skip
    specs: list[BotSpec] = []
    token_of: dict[str, str] = {}  # token -> the first remote bot that has it
    for name, entry in value.items():
        key = error_key("bots", name)  # (quoted where it must be: bots."v1.2".workers)
        if not _NAME_RE.match(name):
            raise err(key, BOT_NAME_RULE)  # (quoted as every key: it may hold anything)
        try:
            spec = _bot(name, entry, key, base, err)
        except ConfigError as e:
            if name not in at:
                raise
            # (a bot of the list: `bots[2]`, not a `bots.C.bot` the file has nowhere)
            raise err(f"bots[{at[name]}]", e.message) from None
        if spec.token is not None:
            if spec.token in token_of:
                field = "token_env" if "token_env" in entry else "token"  # a remote's table
                other = error_key("bots", token_of[spec.token])
                raise err(f"{key}.{field}", f"the same token as {other}: "
                          "each remote bot needs a token of its own")  # fmt: skip
            token_of[spec.token] = name
        specs.append(spec)
    return tuple(specs)


def _token_fault(token_env: str | None, problem: str) -> str:
    """``problem`` of a remote bot's token, said of the variable it came from, if any."""
    return problem if token_env is None else f"the value of {token_env}: {problem}"


def _bot(name: str, entry: Any, key: str, base: Path, err: _Err) -> BotSpec:
    if isinstance(entry, str):
        entry = {"bot": entry}
    if not isinstance(entry, Mapping):
        raise err(key, f"expected a bot name or a table, got {_tname(entry)}")
    _check_keys(entry, _BOT_KEYS, f"{key}.", err)
    kinds = [k for k in ("bot", "command", "remote") if k in entry]
    if len(kinds) != 1:
        raise err(
            key,
            'give exactly one of: bot = "<bundled name, module:Class or file.py:Class>", '
            'command = "<launch command>", remote = true'
            + (f" (got {', '.join(kinds)})" if kinds else ""),
        )
    if kinds == ["remote"]:
        for k in ("env", "cwd"):
            if k in entry:  # (refused, not ignored: the organiser meant something by it)
                raise err(f"{key}.{k}", f"a remote bot is not launched by the arena: {k} "
                          "is for a local bot (a remote one runs with its own)")  # fmt: skip
    env_data = entry.get("env", {})
    if not isinstance(env_data, Mapping):
        raise err(f"{key}.env", f"expected a table of strings, got {_tname(env_data)}")
    for var, value in env_data.items():  # what the system would refuse at the launch
        if not var or "=" in var or "\x00" in var:
            raise err(f"{key}.env", f"{toml_shown(var)} is no environment variable name (no '=', "
                      "no NUL)")  # fmt: skip
        if not isinstance(value, str):  # (`THREADS = 4`: "expected a table of strings" named
            # neither the variable nor the fix)
            quoted = f' (an environment variable\'s value is text: write "{toml_shown(value)}")'
            raise err(
                f"{key}.env.{error_key(var)}",
                f"expected a string, got {_tname(value)} {toml_shown(value)}"
                + (quoted if isinstance(value, int | float) else ""),
            )
        if "\x00" in value:
            raise err(f"{key}.env.{error_key(var)}", "a value with a NUL byte")
    env = tuple(sorted(env_data.items()))
    cwd_raw = _get(entry, "cwd", str, None, err, f"{key}.")
    cwd = _path(cwd_raw, f"{key}.cwd", err, base) if cwd_raw is not None else None
    if cwd is not None and not _holds(cwd, Path.is_dir):
        # (a file there was said to be "no such directory", as if nothing were there)
        what = "not a directory" if _holds(cwd, Path.exists) else "no such directory"
        raise err(f"{key}.cwd", f"{what}: {_cut(cwd)}")
    kind = kinds[0]
    if "workers" in entry and kind != "bot":
        raise err(f"{key}.workers", f"only a bot = \"...\" entry takes workers (arena-bot run "
                  f"--workers N): a {kind} bot runs in its own process(es)")  # fmt: skip
    workers = _get(entry, "workers", int, None, err, f"{key}.")
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise err(f"{key}.workers", f"must be from 1 to {MAX_WORKERS}, got {toml_shown(workers)}")
    if kind != "remote":
        for k in ("token", "token_env"):
            if k in entry:
                raise err(f"{key}.{k}", "only a remote bot has a fixed token "
                          "(local bots get a fresh one each run)")  # fmt: skip
    if kind == "bot":
        spec = _get(entry, "bot", str, None, err, f"{key}.")
        path, colon, cls = spec.partition(":")
        if path.endswith(".py"):
            # A bot file (``path/file.py[:Class]``, as `arena-bot` takes it): relative to the
            # config file, else to the current directory; made absolute for the bot process.
            where = next(
                (
                    p
                    for p in (base / path, Path.cwd() / path)
                    if _probe(p, Path.is_file, f"{key}.bot", err)
                ),
                None,
            )
            if where is None:
                raise err(f"{key}.bot", f"no such bot file: {_cut(path)} (relative to {base})")
            _check_utf8(where.resolve(), f"{key}.bot", err)
            problem = _syntax_problem(where)
            if problem is not None:  # said before anything starts, not as the bot's exit
                raise err(f"{key}.bot", problem)
            spec = f"{where.resolve()}{colon}{cls}"
        elif spec not in BUNDLED_BOTS and not _MODULE_CLASS_RE.match(spec):
            raise err(
                f"{key}.bot",
                f"unknown bundled bot {toml_shown(spec)}{did_you_mean(spec, BUNDLED_BOTS)} "
                f"(bundled: {', '.join(BUNDLED_BOTS)}; "
                "or a module:Class, or a file.py[:Class])",
            )
        files = _code_files(spec, (), cwd)
        return BotSpec(name=name, kind="sdk", bot=spec, env=env, cwd=cwd,
                       code=code_digest(files), code_before=older_digests(files),
                       workers=workers)  # fmt: skip
    if kind == "command":
        raw = entry["command"]
        if isinstance(raw, str):
            try:
                argv = shlex.split(raw)
            except ValueError as e:
                raise err(f"{key}.command", f"cannot split into words: {e}") from e
        elif isinstance(raw, list) and all(isinstance(a, str) for a in raw):
            argv = list(raw)
        else:
            raise err(f"{key}.command", "expected a string or an array of strings, got "
                      f"{_tname(raw)} {toml_shown(raw)}")  # fmt: skip
        if not argv:
            raise err(f"{key}.command", "must not be empty")
        if any("\x00" in a for a in argv):
            raise err(f"{key}.command", "a word with a NUL byte")
        for a in argv:
            try:
                a.format(**{p: "" for p in _PLACEHOLDERS})
            except (KeyError, IndexError, ValueError, AttributeError) as e:
                raise err(
                    f"{key}.command",
                    f"bad placeholder in {toml_shown(a)} (known: "
                    + ", ".join("{" + p + "}" for p in _PLACEHOLDERS)
                    + "; a literal brace is written {{ or }})",
                ) from e
        files = _code_files(None, argv, cwd)
        return BotSpec(name=name, kind="command", command=tuple(argv), env=env, cwd=cwd,
                       code=code_digest(files), code_before=older_digests(files))  # fmt: skip
    # remote
    if entry["remote"] is not True:
        raise err(f"{key}.remote", f"expected true, got {toml_shown(entry['remote'])}")
    token = _get(entry, "token", str, None, err, f"{key}.")
    token_env = _get(entry, "token_env", str, None, err, f"{key}.")
    if (token is None) == (token_env is None):
        raise err(key, 'a remote bot needs exactly one of token = "..." or token_env = "VAR"')
    where = f"{key}.token"
    if token_env is not None:
        if not token_env:
            raise err(f"{key}.token_env", "must name an environment variable, not be empty")
        token = os.environ.get(token_env)
        if not token:  # (set to "" by an `export VAR=` whose value was lost: say which)
            state = "is not set" if token is None else "is set, but empty"
            raise err(f"{key}.token_env", f"environment variable {token_env} {state}")
        # The fault is in the variable, not in a `token` key the file does not have; and
        # its value is kept out of the message (a CI log, a shared screen): that is why
        # it is not in the file.
        where = f"{key}.token_env"
    assert token is not None
    if weak_token(token):
        raise err(where, _token_fault(token_env, f"must be at least {MIN_TOKEN} characters"))
    problem = token_problem(token)
    if problem is not None:  # (it names no part of the token: see token_problem)
        raise err(where, _token_fault(token_env, problem))
    return BotSpec(name=name, kind="remote", token=token)
