"""Round 58's mutation review of round 57's product changes: the tests the mutants that
survived the existing ones asked for (each test says which). They hold behaviour, not
private names, where the product gives a way in:

- a decision request's wire bytes (``arena.protocol.decision_request_bytes``, which the
  referee queues as they are) are protobuf's for the same message at every length edge of
  its ids and view, and whatever requests were made before (the pieces it keeps);
- a request asked again after a reconnection states the deal it is in, as the first one;
- the SDK's runner says an event number equal to the last one told a repeat, and one below
  it a repeat "or out of order"; names an event of a match never started at most as often
  as its other faults (capped), but says nothing of one of a match it refused or saw end;
  counts a refusal for a match it refused or saw end (it held them), not for one never
  started;
- the SDK reads each message's kind under protobuf's pure-Python backend too;
- ``arena-bot try --seed`` of thousands of digits is refused naming the range, the number
  not echoed whole (past 4,300 digits Python's ``int`` refused it, and click's message
  echoed it whole).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.protocol import action_event_to_pb, decision_request_bytes, message_bytes
from arena.referee import Referee, RefereeConfig
from arena.referee.sessions import Stream
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import Pass
from engine.rules import PRESETS
from sdk.cli import main as bot_cli
from sdk.client import BotRunner, _Outbox
from tests.sdk.test_hostile_arena import _game, deal_ended, ended, started

# ----------------------------------------------------------------- request bytes (perf57r)


def _by_fields(
    request_id: str, match_id: str, deal: int, view: bytes, limit: int, bank: int
) -> bytes:
    """The message built field by field and written by protobuf (the referee's path
    before round 57)."""
    msg = pb.ServerMessage()
    req = msg.decision_request
    req.view.MergeFromString(view)
    req.request_id, req.match_id, req.deal_number = request_id, match_id, deal
    req.time_limit_ms, req.time_bank_ms = limit, bank
    return msg.SerializeToString()


#: Lengths at a varint's edges (1 byte to 127, 2 to 16383) and past the 4,096 of the
#: writer's table of small varints.
_LENGTHS = (0, 1, 127, 128, 4095, 4096, 16_383, 16_384)


def test_request_bytes_at_every_length_edge_of_their_ids_and_view() -> None:
    """Mutant R4 survived: a request id of 4,096 bytes or more written with a wrong
    length (the tests' longest was 300)."""
    checked = 0
    for n in _LENGTHS:
        view = pb.PlayerView(players=["x" * n]).SerializeToString() if n else b""
        for rid, mid in (("7" * n, "m"), ("1", "ü" * (n // 2) + "x" * (n % 2)), ("9" * n, "")):
            data = decision_request_bytes(rid, mid, n, view, n, n)
            assert data == _by_fields(rid, mid, n, view, n, n), (n, len(rid), len(mid))
            assert pb.ServerMessage.FromString(data).decision_request.request_id == rid
            checked += 1
    assert checked == 3 * len(_LENGTHS)


def test_request_bytes_do_not_depend_on_the_requests_made_before() -> None:
    """Mutants R11b and R12b survived: the pieces kept between requests (the times by their
    pair, the match id's field) found under a key that confuses two of them (the bank of
    one request stated in another's with the same limit; one match's id in another's):
    every earlier test used one bank per limit, and match ids that differ early."""
    rng = random.Random(58)
    view = pb.PlayerView(seat=1, players=["a", "b", "c"], deal_number=2).SerializeToString()
    limits = (0, 1, 999, 1000, 5000, 4_294_967_295)
    mids = ("t0-1", "t0-2", "t1-1", "t", "", "t0-1x", "ü")
    for i in range(600):
        limit, bank = rng.choice(limits), rng.choice(limits)
        mid, rid, deal = rng.choice(mids), str(i), rng.choice((0, 1, 300))
        data = decision_request_bytes(rid, mid, deal, view, limit, bank)
        assert data == _by_fields(rid, mid, deal, view, limit, bank), (mid, limit, bank)


class _Dropping(Stream):
    """A bot's stream without a network that checks each message's bytes as the writer
    gives them to gRPC (protobuf's own for the message they stand for), and answers each
    request with its first legal action on the next turn of the loop. The first request of
    a deal after the first is not answered: the stream drops, a new one comes at once."""

    def __init__(self, ref: Referee, name: str, log: list[pb.DecisionRequest]) -> None:
        super().__init__(f"fake-{name}")
        self.ref, self.name, self.log = ref, name, log

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        data = message_bytes(msg)
        parsed = pb.ServerMessage.FromString(data)
        assert parsed.SerializeToString() == data  # (a bot gets protobuf's bytes)
        super().put(msg)
        if parsed.WhichOneof("kind") != "decision_request":
            return
        r = parsed.decision_request
        self.log.append(r)
        session = self.ref.session(self.name)
        dropped = sum(1 for q in self.log if q.request_id == r.request_id)
        if r.deal_number >= 1 and dropped == 1 and len({q.deal_number for q in self.log}) <= 3:
            session.detach(self, 60.0, "dropped")  # (gone as the request comes ...)
            session.attach(_Dropping(self.ref, self.name, self.log))  # (... and back at once)
            return
        answer = pb.Decision(
            request_id=r.request_id, match_id=r.match_id, action=r.view.legal_actions[0]
        )
        asyncio.get_running_loop().call_soon(self.ref.on_decision, session, answer)


def test_a_request_asked_again_after_a_reconnection_states_its_deal() -> None:
    """Mutant R17 survived: the request asked again on the new stream (built as a message,
    the first one goes as bytes) with its deal_number left at 0."""

    async def run() -> dict[str, list[pb.DecisionRequest]]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
        logs: dict[str, list[pb.DecisionRequest]] = {}
        for name in ("a", "b", "c"):
            ref.add_bot(name, f"token-{name}")
            logs[name] = []
            ref.session(name).attach(_Dropping(ref, name, logs[name]))
        rules = dataclasses.replace(PRESETS["classic"], max_deals=3)
        await ref.run_match("m1", rules, 5, ["a", "b", "c"])
        return logs

    logs = asyncio.run(run())
    again = 0
    for log in logs.values():
        first: dict[str, pb.DecisionRequest] = {}
        for r in log:
            assert r.deal_number == r.view.deal_number, r.request_id
            if r.request_id in first:
                again += 1
                before = first[r.request_id]
                assert (r.match_id, r.deal_number) == (before.match_id, before.deal_number)
                assert r.view.deal_number == before.view.deal_number
            else:
                first[r.request_id] = r
    assert again >= 3 and any(r.deal_number >= 1 for log in logs.values() for r in log)


# ------------------------------------------------------------------- the runner (hostile57)


def _runner() -> BotRunner:
    runner = BotRunner(RandomBot, "in-process", "token", name="r58")
    runner._on_read(pb.ServerMessage(welcome=pb.Welcome(bot_name="r58")).SerializeToString(),
                    _Outbox())  # fmt: skip
    return runner


def _feed(runner: BotRunner, *msgs: pb.ServerMessage) -> None:
    """Hand the runner each message's bytes as read from the stream, in a loop (its hooks
    and the making of a match's bot are tasks of the loop: done or cancelled by its end)."""

    async def read() -> None:
        for msg in msgs:
            runner._on_read(msg.SerializeToString(), _Outbox())
        for _ in range(3):
            await asyncio.sleep(0)

    asyncio.run(read())


def _said(caplog: pytest.LogCaptureFixture, words: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if words in r.getMessage()]


def test_an_event_equal_to_the_last_is_a_repeat_and_one_below_it_out_of_order(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutant H5 survived (``<=`` for ``<``): the repeat of the last event told was said to
    be "out of order" too (the process test's check of it was a prefix of both forms)."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    runner = _runner()

    def ev(seq: int) -> pb.Event:
        return action_event_to_pb("m1", seq, pb.ACTION_SOURCE_BOT, (seat + 1) % 3, Pass())

    with caplog.at_level(logging.WARNING, logger="sdk"):
        _feed(runner, started("m1", g), pb.ServerMessage(events=[ev(1), ev(2), ev(2), ev(1)]))
    (same,) = _said(caplog, "event 2 repeats")
    assert same.endswith("action event 2 repeats an earlier one (the last was 2): ignored")
    (below,) = _said(caplog, "event 1 repeats")
    assert below.endswith("event 1 repeats an earlier one or is out of order (the last was 2): "
                          "ignored")  # fmt: skip


def test_events_of_matches_never_started_are_named_and_capped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutant H4 survived (each said in full, no cap): a hostile arena's flood of events
    under unknown match ids wrote a line each. Said as the runner's other faults are: the
    first five in full, then only the 10th, 100th, ... with their count."""
    runner = _runner()
    with caplog.at_level(logging.ERROR, logger="sdk"):
        _feed(runner, pb.ServerMessage(events=[deal_ended(f"x{i}") for i in range(120)]))
    said = _said(caplog, "event for unknown match")
    assert len(said) == 7, said  # (1-5, 10, 100)
    assert said[0] == "deal_ended event for unknown match x0: ignored"
    assert "(5 of these so far" in said[4] and said[5].endswith("(10 of these so far)")
    assert said[6].startswith("deal_ended event for unknown match x99: ignored (100 of")


def test_events_and_refusals_of_a_refused_or_ended_match_are_no_unknown_matchs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutants H2 and H3 (an event of a match the bot refused, or saw end, named as one of
    an unknown match), H6 and H7 (the refusal of a match the bot refused, or saw end, not
    counted) survived.
    A refused match is one the bot held (the referee plays its seat, and refuses what it
    is sent for it): its refusal counts; one never started does not."""
    g = _game()
    runner = _runner()
    bad = started("m2", g)
    bad.match_started.seat = (bad.match_started.seat + 1) % 3  # (not its view's seat: refused)

    def refusal(mid: str) -> pb.ServerMessage:
        return pb.ServerMessage(decision_rejected=pb.DecisionRejected(
            match_id=mid, request_id="1", incident=pb.INCIDENT_TIMEOUT, strikes=1,
            strikes_allowed=3, message="too slow"))  # fmt: skip

    with caplog.at_level(logging.DEBUG, logger="sdk"):
        _feed(runner, started("m1", g), ended("m1"), bad)
        assert "m2" in caplog.text and "refused" in caplog.text  # (the bad start said)
        caplog.clear()
        _feed(runner, pb.ServerMessage(events=[deal_ended("m1"), deal_ended("m2")]))
        assert _said(caplog, "unknown match") == []
        _feed(runner, refusal("m2"))
        assert runner.summary.rejected == 1
        _feed(runner, refusal("m1"))  # (a timeout in a match seen end: not a crossed answer)
        assert runner.summary.rejected == 2
        _feed(runner, refusal("m9"))
        assert runner.summary.rejected == 2
        _feed(runner, pb.ServerMessage(events=[deal_ended("m9")]))
        assert len(_said(caplog, "deal_ended event for unknown match m9: ignored")) == 1


# ------------------------------------------- the kinds under protobuf's Python backend (perf57s)

#: Run by a Python whose protobuf is its pure-Python backend: a message's kind read by the
#: SDK (a Welcome first, an event's in the words of a repeat, a queued answer's when two
#: go out as one DecisionBatch), each printed.
_KINDS_SCRIPT = """\
import asyncio, logging
from google.protobuf.internal import api_implementation
from arena.protocol import action_event_to_pb
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import Pass
from sdk.cli import main as bot_cli
from sdk.client import BotRunner, _Outbox
from tests.sdk.test_hostile_arena import _game, started

print("backend", api_implementation.Type())
logging.basicConfig(level=logging.WARNING, format="said %(message)s")
runner = BotRunner(RandomBot, "in-process", "token", name="py")
g = _game()
ev = action_event_to_pb("m1", 1, pb.ACTION_SOURCE_BOT, (g.to_act + 1) % 3, Pass())
msgs = [pb.ServerMessage(welcome=pb.Welcome(bot_name="py")), started("m1", g),
        pb.ServerMessage(events=[ev, ev])]

async def main():
    for msg in msgs:
        runner._on_read(msg.SerializeToString(), _Outbox())
    await asyncio.sleep(0)
    out = _Outbox()
    out.batch = True
    for rid in ("1", "2"):
        out.put_nowait(pb.BotMessage(decision=pb.Decision(request_id=rid, match_id="m1")))
    written = []

    class Call:
        async def write(self, msg):
            written.append(msg.WhichOneof("kind"))

    await out.flush(Call())
    print("written", written)

asyncio.run(main())
print("welcomed", runner._welcomed)

from sdk import wire_view
from tests.sdk.test_wire_view_round54 import _matches

differ = zero = 0
for views, sent in _matches()[:1]:
    for _ in range(2):  # (cold, then warm: the items known, presence read by wire_view)
        previous = None
        for v, msg in zip(views, sent, strict=True):
            previous = wire_view.request_view(msg, views[0].ruleset, previous)
            differ += previous != v
            zero += v.to_act == 0
print("views differ", differ, "to_act 0", zero > 0)
"""


def test_the_sdk_reads_each_kind_under_protobufs_python_backend() -> None:
    """Mutants S17-S19 (``_server_kind`` etc. taken from the wrong message class) are
    equivalent under upb, whose classes share one ``WhichOneof``; under protobuf's
    pure-Python backend (``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python``, which a bot's
    author may have) each class's reads its own fields: the wrong class's read no kind,
    and the runner refused the Welcome, said "None event 1 repeats ..." and sent two
    answers queued together one by one; S25 likewise (``wire_view``'s ``HasField`` of
    the wrong class: a seat 0 to act read as none). The SDK must read them there too."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "GRPC_"))}
    env.update(PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python", PYTHONPATH=str(root))
    r = subprocess.run([sys.executable, "-c", _KINDS_SCRIPT], cwd=root, env=env,
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "backend python" in out, out
    assert "welcomed True" in out and "before its Welcome" not in out, out
    assert "said match m1: action event 1 repeats an earlier one (the last was 1)" in out, out
    assert "written ['decisions']" in out, out
    assert "views differ 0 to_act 0 True" in out, out


# ------------------------------------------------------------ --seed's digits (limits57)


@pytest.mark.parametrize("digits", [3_001, 5_000])
@pytest.mark.parametrize("sign", ["", "-"])
def test_a_seed_of_thousands_of_digits_is_refused_naming_the_range(
    tmp_path: Path, digits: int, sign: str
) -> None:
    """Mutant L13 (the number echoed whole) survived: the tests' longest was 301 digits,
    under their bound on the message. And a defect: past 4,300 digits (Python's limit on
    ``int`` of a text) the seed was refused by click as "not a valid integer", echoed whole
    (5,000 digits on the terminal) and the range unsaid."""
    seed = sign + "1" + "0" * (digits - 1)
    r = CliRunner().invoke(bot_cli, ["try", "random", "--records", str(tmp_path / "rec"),
                                     f"--seed={seed}"])  # fmt: skip
    assert r.exit_code == 2, r.output[:600]
    out = " ".join(r.output.split())
    assert f"{sign}10000000000000000000... ({digits:,} digits) is out of range: a seed is " \
        "an integer from -2**63 to 2**63-1" in out, out[:600]  # fmt: skip
    assert len(out) < 600, out[:600]
    assert not (tmp_path / "rec").exists()


def test_a_seed_written_with_many_leading_zeros_is_the_number_it_is(tmp_path: Path) -> None:
    """(the refusal of a long seed counts its digits, not its zeros in front)"""
    seed = "-" + "0" * 60 + "7"
    r = CliRunner().invoke(bot_cli, ["try", "random", "-n", "1", "--max-deals", "1",
                                     f"--seed={seed}", "--records", str(tmp_path)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert [p.name for p in tmp_path.iterdir()] == ["local-minus7-0.json"]
