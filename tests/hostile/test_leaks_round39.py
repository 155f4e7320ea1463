"""Information-leak audit, round 39: what a bot can learn over the wire that it must not.

Real matches through the referee's gRPC server (port 0), under every ruleset of
``rulesets/`` (``tournament-1001`` hides the talon from the defenders; played by 3 and by
4, where the dealer sits out), by in-test clients that record every message they get and
now and then answer illegally or for a request that is not pending, and that throw in or
concede whenever they may (under a hidden talon a thrown-in or conceded deal's talon and
hands must stay hidden, at the deal's end too). Each card in each message, in its fields
and named in its texts, must be one the seat may know at that moment (RULES.md §1, §3,
§4, §7, worked out from the match's record, independently of ``engine.observe``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import re
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from engine import Ruleset
from engine.actions import Give, Play, parse_action
from engine.cards import parse_card
from engine.rules import load_ruleset

ROOT = Path(__file__).resolve().parents[2]
RULESETS = ROOT / "rulesets"
CARD_TEXT = re.compile(r"(?:10|[9JQKA])[♠♣♦♥]")
NAMES = ("ann", "bob", "cid", "dan")


def _card_no(c: pb.Card) -> int:
    return (c.suit - 1) * 6 + c.rank - 1


def _cards_in(msg: Any) -> set[int]:
    """Every Card message anywhere inside ``msg``."""
    if isinstance(msg, pb.Card):
        return {_card_no(msg)} if msg.suit and msg.rank else set()
    out: set[int] = set()
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        for v in value if fd.is_repeated else [value]:
            out |= _cards_in(v)
    return out


def _texts_in(msg: Any) -> list[str]:
    """Every string field anywhere inside ``msg``."""
    out: list[str] = []
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            if isinstance(value, str):
                out.append(value)
            elif fd.is_repeated and value and isinstance(value[0], str):
                out.extend(value)
            continue
        for v in value if fd.is_repeated else [value]:
            out.extend(_texts_in(v))
    return out


def _visible(deal: dict[str, Any], seat: int, talon_visible: bool) -> dict[int, int]:
    """card -> the number of the deal's actions after which ``seat`` may know it: its own
    hand from the deal, the talon at the auction's end (to all under ``talon_visible``,
    else to the declarer alone), a passed card to its giver and receiver, a played card to
    everyone."""
    when: dict[int, int] = {int(parse_card(c)): 0 for c in deal["hands"][seat]}
    actions = [(a["seat"], parse_action(a["action"])) for a in deal["actions"]]
    end = next(
        (i for i, (_, a) in enumerate(actions) if type(a).__name__ not in ("Bid", "Pass")),
        len(actions),
    )
    declarer = actions[end][0] if end < len(actions) else None
    if talon_visible or seat == declarer:
        for c in deal["talon"]:
            when.setdefault(int(parse_card(c)), end)
    for i, (s, a) in enumerate(actions):
        if isinstance(a, Give) and seat in (s, a.to):
            when.setdefault(int(a.card), i + 1)
        if isinstance(a, Play):
            when.setdefault(int(a.card), i + 1)
    return when


class Client:
    """A bot over the network: records every message; answers with a legal action (a
    throw-in or a concession whenever legal, passing often), and at its 3rd and 9th
    decision of a match first answers for a request that is not pending, at its 4th and
    7th answers twice (the second when another seat may be to act), and at its 5th an
    illegal action (a card it does not hold, or a bid off the step): one strike, no
    forfeit."""

    def __init__(self, name: str, port: int, seed: int) -> None:
        self.name = name
        self.port = port
        self.rng = random.Random(seed)
        self.messages: list[pb.ServerMessage] = []
        #: (match id, request id) -> the cards the bot named in its answers to it
        self.named: dict[tuple[str, str], set[int]] = {}
        self.asked: dict[str, int] = {}

    def answer(self, req: pb.DecisionRequest) -> list[pb.Decision]:
        view = req.view
        n = self.asked[req.match_id] = self.asked.get(req.match_id, 0) + 1
        out: list[pb.Decision] = []
        if n in (3, 9):
            out.append(pb.Decision(request_id="999", match_id=req.match_id,
                                   action=view.legal_actions[0]))  # fmt: skip
        if n == 5:
            held = {_card_no(c) for c in view.hand}
            if view.phase == pb.PHASE_PLAYING:
                c = self.rng.choice([c for c in range(24) if c not in held])
                bad = pb.Action(play=pb.PlayCard(card=pb.Card(suit=c // 6 + 1, rank=c % 6 + 1)))  # type: ignore[arg-type]
            else:
                bad = pb.Action(bid=pb.Bid(amount=3))
            out.append(pb.Decision(request_id=req.request_id, match_id=req.match_id, action=bad))
            return out
        legal = list(view.legal_actions)
        kinds = {a.WhichOneof("kind"): a for a in legal}
        if "throw_in" in kinds:
            action = kinds["throw_in"]
        elif "concede" in kinds:
            action = kinds["concede"]
        elif "pass" in kinds and self.rng.random() < 0.75:
            action = kinds["pass"]
        else:
            action = self.rng.choice(legal)
        out.append(pb.Decision(request_id=req.request_id, match_id=req.match_id, action=action))
        if n in (4, 7):  # the same answer again: by then another seat may be to act
            out.append(out[-1])
        return out

    def sent(self, d: pb.Decision) -> None:
        """Note the cards ``d`` names: a refusal may name them back, whenever it comes."""
        self.named.setdefault((d.match_id, d.request_id), set()).update(_cards_in(d))

    async def play(self, token: str, matches: int, ready: asyncio.Event) -> None:
        from arena.v1 import arena_pb2_grpc as pb_grpc

        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as ch:
            call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", f"Bearer {token}"),))
            await call.write(pb.BotMessage(hello=pb.Hello(bot_name=self.name, protocol_version=1)))
            ended = 0
            while ended < matches:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    break
                self.messages.append(msg)
                kind = msg.WhichOneof("kind")
                if kind == "welcome":
                    ready.set()
                elif kind == "match_ended":
                    ended += 1
                elif kind == "decision_request":
                    for d in self.answer(msg.decision_request):
                        self.sent(d)
                        await call.write(pb.BotMessage(decision=d))
            call.cancel()


def _actions_before(deal: dict[str, Any], view: pb.PlayerView) -> int:
    """How many of a recorded deal's actions ``view`` shows (a resumed start's, made in the
    deal): the most after which the record has as many bids and passes, gives, and cards
    played as the view holds (a contract named after them shows no card)."""
    want = (
        len(view.bids),
        len(view.gives),
        sum(len(t.cards) for t in view.tricks) + len(view.trick),
    )
    got, most = [0, 0, 0], 0
    for i, entry in enumerate(deal["actions"]):
        kind = type(parse_action(entry["action"])).__name__
        slot = {"Bid": 0, "Pass": 0, "Give": 1, "Play": 2}.get(kind)
        if slot is not None:
            got[slot] += 1
        if tuple(got) == want:
            most = i + 1
    assert most or want == (0, 0, 0), (want, deal["actions"])
    return most


def _audit(c: Client, recs: dict[str, dict[str, Any]]) -> tuple[int, int]:
    """Walk ``c``'s messages in order: every card in each (fields and texts) must be one
    its seat may know at that moment. Returns (messages checked, texts checked)."""
    pos: dict[str, tuple[int, int]] = {}  # match -> (deal, actions of the deal seen)
    seats: dict[str, int] = {}
    checked = texts = 0

    def check(mid: str, cards: set[int], where: Any, extra: frozenset[int] = frozenset()) -> None:
        rec = recs[mid]
        deal, n = pos[mid]
        when = _visible(rec["deals"][deal], seats[mid], rec["ruleset"]["talon_visible"])
        for card in cards - extra:
            assert card in when and when[card] <= n, (
                f"{c.name} (seat {seats[mid]} of {mid}) was shown card {card} in deal {deal} "
                f"after {n} actions, visible only after {when.get(card)}: {where}"
            )

    for msg in c.messages:
        kind = msg.WhichOneof("kind")
        for ev in list(msg.events) + ([msg.event] if kind == "event" else []):
            mid = ev.match_id
            deal, n = pos[mid]
            ek = ev.WhichOneof("kind")
            if ek == "deal_started":
                pos[mid] = (ev.deal_started, 0)
                continue
            if ek == "action":
                pos[mid] = (deal, n + 1)
            if ek == "deal_ended":
                assert not _cards_in(ev), ev  # a deal's end shows no card
                continue
            check(mid, _cards_in(ev), ev)
            checked += 1
        if kind in (None, "welcome", "event"):
            continue
        body = getattr(msg, kind)
        mid = body.match_id
        if kind == "match_started":
            seats[mid] = body.seat
            deal = body.view.deal_number
            # A resumed start's view is of the deal under way (round 50: a bot that
            # reconnects at every request): the actions it was made after, not none.
            seen = _actions_before(recs[mid]["deals"][deal], body.view) if body.resumed else 0
            pos[mid] = (deal, seen)
        if mid not in seats:  # (a rejection for a match the bot sits in only)
            continue
        if kind == "match_ended":
            assert not _cards_in(body), body  # the final view: no hand, talon or trick
            checked += 1
            continue
        if kind == "decision_request":
            assert body.view.deal_number == pos[mid][0]
        rid = body.request_id if kind == "decision_rejected" else ""
        named = frozenset(c.named.get((mid, rid), ()))
        check(mid, _cards_in(body), body)
        for text in _texts_in(body):
            texts += 1
            said = {int(parse_card(t)) for t in CARD_TEXT.findall(text)}
            check(mid, said, text, named)
        # The match's seed (every hand follows from it) is in no text.
        seed = str(recs[mid]["seed"])
        assert all(seed not in t for t in _texts_in(body)), body
        checked += 1
    return checked, texts


def _ruleset(file: str, players: int, max_deals: int) -> Ruleset:
    return dataclasses.replace(load_ruleset(RULESETS / file, players), max_deals=max_deals)


async def _play(tmp: Path, games: list[tuple[str, Ruleset, int, tuple[str, ...]]]) -> Any:
    ref = Referee(RefereeConfig(decision_ms=5000, reconnect_grace_s=10, record_dir=tmp))
    server, port = await start_server(ref)
    playing = [n for n in NAMES if any(n in seats for *_, seats in games)]
    clients = {n: Client(n, port, NAMES.index(n)) for n in playing}
    tasks = []
    try:
        for n, c in clients.items():
            ref.add_bot(n, f"token-of-{n}")
            count = sum(n in seats for *_, seats in games)
            ready = asyncio.Event()
            tasks.append(asyncio.create_task(c.play(f"token-of-{n}", count, ready)))
            await asyncio.wait_for(ready.wait(), 30)
        runs = [ref.run_match(mid, rs, seed, list(seats)) for mid, rs, seed, seats in games]
        recs = await asyncio.wait_for(asyncio.gather(*runs), 240)
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
    finally:
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t
        await server.stop(0.5)
    return clients, {r["match_id"]: r for r in recs}


def test_every_message_under_every_ruleset_file(tmp_path: Path) -> None:
    """Every ruleset of ``rulesets/``, 3 players, and ``tournament-1001`` by 4 (the dealer
    sits out and never sees the hidden talon): no message tells a seat a card before the
    rules show it to it, no error names another seat's card, no deal end shows a card."""
    games = [
        ("cc", _ruleset("classic-capped.toml", 3, 6), 391, ("ann", "bob", "cid")),
        ("hp", _ruleset("house-penalty.toml", 3, 6), 392, ("bob", "cid", "dan")),
        ("t3", _ruleset("tournament-1001.toml", 3, 8), 393, ("cid", "dan", "ann")),
        ("t4", _ruleset("tournament-1001.toml", 4, 8), 394, ("dan", "ann", "bob", "cid")),
    ]
    clients, recs = asyncio.run(_play(tmp_path, games))
    assert not recs["t3"]["ruleset"]["talon_visible"]
    total = texts = 0
    for c in clients.values():
        n, t = _audit(c, recs)
        total += n
        texts += t
    assert total > 500 and texts > 20, (total, texts)
    # The clients' answers reached what the audit is about: strikes and wrong requests
    # answered with texts, and deals thrown in or conceded under the hidden talon.
    kinds = {i["kind"] for r in recs.values() for i in r["incidents"]}
    assert {"illegal", "wrong_request"} <= kinds, kinds
    hidden = [d for m in ("t3", "t4") for d in recs[m]["deals"]]
    outcomes = {d.get("outcome") for m in ("t3", "t4") for d in recs[m]["deals"]}
    assert hidden and outcomes & {"thrown_in", "conceded"}, outcomes
    assert not any(r["forfeits"] for r in recs.values())


def test_hidden_talon_never_reaches_defenders_or_sitter(tmp_path: Path) -> None:
    """Under ``tournament-1001`` by 4: the ``talon_taken`` event carries the cards to the
    declarer alone; the other seats, the dealer sitting out among them, get it empty, and
    never a view with the talon, in any deal, at its end neither."""
    rs = _ruleset("tournament-1001.toml", 4, 10)
    clients, recs = asyncio.run(_play(tmp_path, [("h4", rs, 395, ("ann", "bob", "cid", "dan"))]))
    rec = recs["h4"]
    taken = 0
    for c in clients.values():
        seat = NAMES.index(c.name)
        deal = 0
        for msg in c.messages:
            for ev in msg.events:
                if ev.WhichOneof("kind") == "deal_started":
                    deal = ev.deal_started
                if ev.WhichOneof("kind") == "talon_taken":
                    taken += 1
                    cards = {_card_no(x) for x in ev.talon_taken.cards}
                    if ev.talon_taken.seat == seat:
                        want = {int(parse_card(x)) for x in rec["deals"][deal]["talon"]}
                        assert cards == want
                    else:
                        assert not cards, (c.name, deal, ev)
            kind = msg.WhichOneof("kind")
            if kind in ("decision_request", "match_started", "match_ended"):
                view = getattr(msg, kind).view
                if view.talon_known or view.talon:
                    assert view.HasField("declarer") and view.declarer == seat, (c.name, view)
                if seat == view.dealer and kind != "match_ended":
                    assert not view.hand and not view.talon, view
    auctions = sum(
        any(not a["action"].startswith(("bid", "pass")) for a in d["actions"]) for d in rec["deals"]
    )
    assert auctions >= 3 and taken == 4 * auctions, (taken, auctions)


def test_record_files_written_during_a_match_are_the_owners_alone(tmp_path: Path) -> None:
    """A match's record (its first line holds the seed, from which every hand follows) is
    readable by its owner only, as docs/referee.md says."""
    rs = _ruleset("classic-capped.toml", 3, 2)
    _, recs = asyncio.run(_play(tmp_path, [("r3", rs, 396, ("ann", "bob", "cid"))]))
    files = list(tmp_path.glob("*.jsonl"))
    assert files and str(recs["r3"]["seed"]) in files[0].read_text().splitlines()[0]
    for f in files:
        assert f.stat().st_mode & 0o077 == 0, (f, oct(f.stat().st_mode))


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600])
def test_serve_notes_a_tokens_file_other_users_can_read(tmp_path: Path, mode: int) -> None:
    """Defect: `arena serve --tokens bots.toml` said nothing of a tokens file that other
    users of the machine could read (the usual umask makes one so): whoever reads a token
    plays as its bot, and is sent that bot's hands. Now a note says so at the start (not
    the tokens), as it does of a short token; none for a file of its owner alone."""
    import os
    import signal
    import sys

    tokens = tmp_path / "bots.toml"
    tokens.write_text("[bots]\n" + "".join(f'{n} = "secret-token-{n}"\n' for n in NAMES))
    tokens.chmod(mode)

    async def main() -> str:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from arena.cli import main; main()", "serve",
            "--port", "0", "--tokens", str(tokens), "--ruleset", "1001",
            "--record-dir", str(tmp_path / "rec"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=str(ROOT),
            env=env,
        )  # fmt: skip
        assert proc.stdout is not None
        try:
            while True:
                line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
                assert line, "arena serve ended before listening"
                if line.startswith("match ids "):
                    break
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        return err.decode()

    err = asyncio.run(main())
    assert "secret-token" not in err
    if mode & 0o044:
        who = "every user of this machine" if mode & 0o004 else "the users of its group"
        assert f"note: {tokens} is readable by {who}: whoever" in err, err
        assert f"chmod 600 {tokens}" in err
    else:
        assert "is readable by" not in err, err
