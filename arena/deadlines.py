"""Decision deadlines as the referee keeps them and a timed local match (``sdk.local``)
rehearses them: the longest allowed, what a time bank keeps, the words of a timeout.

Imports nothing: ``sdk.local`` uses it, and ``import sdk`` must not load gRPC (which any
module of ``arena.referee`` does, through the package).
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_TIME_BANK_MS",
    "MAX_DEADLINE_MS",
    "bank_left",
    "deadline_problem",
    "timeout_words",
]

#: The longest decision time or time bank (ms): a day. The protocol carries them as uint32
#: (at most 49 days), and their sum must fit too.
MAX_DEADLINE_MS = 86_400_000


def deadline_problem(value: int, low: int) -> str | None:
    """Why ``value`` is no decision time (``low`` 1) or time bank (``low`` 0) in ms, in the
    words that follow the setting's name; ``None`` when it is one.

    >>> deadline_problem(0, 1)
    'must be between 1 and 86400000 (a day), got 0'
    """
    if low <= value <= MAX_DEADLINE_MS:
        return None
    return f"must be between {low} and {MAX_DEADLINE_MS} (a day), got {value}"


def bank_left(bank_ms: int, decision_ms: int, used_ms: int) -> int:
    """The time bank of ``bank_ms`` after a decision answered in ``used_ms`` (under the
    deadline): what it took over ``decision_ms`` comes off.

    >>> bank_left(100, 1000, 1030), bank_left(100, 1000, 900), bank_left(100, 1000, 1200)
    (70, 100, 0)
    """
    return max(0, bank_ms - max(0, used_ms - decision_ms))


#: A seat's time bank per match unless one is given: ``arena serve``'s and
#: ``RefereeConfig``'s, and a local match's timed by ``decision_ms`` alone.
DEFAULT_TIME_BANK_MS = 10_000


def timeout_words(decision_ms: int, bank_ms: int) -> str:
    """What a timeout's incident says, ``bank_ms`` being what the bank held when asked.

    >>> timeout_words(1000, 100)
    'no decision within 1100 ms (1000 ms + 100 ms of time bank)'
    """
    return (
        f"no decision within {decision_ms + bank_ms} ms ({decision_ms} ms + {bank_ms} ms "
        "of time bank)"
    )
