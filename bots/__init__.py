"""The bundled bots, by name: ``random`` < ``heuristic`` < ``counting`` < ``pimc``.

>>> load("heuristic").name
'heuristic'
"""

from __future__ import annotations

import importlib

from sdk.bot import Bot

__all__ = ["BUNDLED", "load"]

# name -> (module, class); imported only when asked for (pimc is heavy).
_WHERE: dict[str, tuple[str, str]] = {
    "random": ("bots.random_bot", "RandomBot"),
    "heuristic": ("bots.heuristic", "HeuristicBot"),
    "counting": ("bots.counting", "CountingBot"),
    "pimc": ("bots.pimc", "PimcBot"),
}

#: The bundled bots' names, weakest first.
BUNDLED: tuple[str, ...] = tuple(_WHERE)


def load(name: str) -> type[Bot]:
    """The class of the bundled bot ``name``; ``KeyError`` names the known ones."""
    try:
        module, cls = _WHERE[name]
    except KeyError:
        raise KeyError(f"no bundled bot {name!r} (bundled: {', '.join(BUNDLED)})") from None
    found = getattr(importlib.import_module(module), cls)
    if not (isinstance(found, type) and issubclass(found, Bot)):
        raise TypeError(f"{module}.{cls} is not a sdk.Bot subclass")
    return found
