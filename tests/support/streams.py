"""A referee with in-process streams for its bots, no gRPC: the set-up of the tests that
watch what the referee queues for each seat (rounds 49-57), as arena/bench/referee_logic.py
plays its matches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from arena.referee import Referee, RefereeConfig
from arena.referee.sessions import BotSession, Stream

__all__ = ["NAMES", "attach_streams", "referee_with_streams"]

S = TypeVar("S", bound=Stream)

#: The three bots of a classic table, each added with the token ``token-NAME``.
NAMES = ("a", "b", "c")


def attach_streams(
    referee: Referee, make: Callable[[str, BotSession], S], names: Sequence[str] = NAMES
) -> list[S]:
    """Each of ``names`` added to ``referee`` as a bot, its session given the stream
    ``make(name, session)`` makes (attached: the bot is connected); the streams, in order."""
    streams = []
    for name in names:
        referee.add_bot(name, f"token-{name}")
        session = referee.session(name)
        stream = make(name, session)
        session.attach(stream)
        streams.append(stream)
    return streams


def referee_with_streams(
    make: Callable[[Referee, str, BotSession], S],
    config: RefereeConfig | None = None,
    names: Sequence[str] = NAMES,
) -> tuple[Referee, list[S]]:
    """A new referee (a minute a decision and a minute of bank unless ``config``: no test
    runs into a deadline) with :func:`attach_streams`' streams, ``make(referee, name,
    session)`` making each."""
    referee = Referee(config or RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
    return referee, attach_streams(referee, lambda name, s: make(referee, name, s), names)
