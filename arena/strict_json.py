"""JSON as the arena prints and serves it: strict (RFC 8259), a number never ``NaN``.

Python's ``json.dumps`` writes a float infinity or NaN as ``Infinity`` / ``NaN``, which no
strict parser (``jq``, a browser's ``JSON.parse``, Go's ``encoding/json``) reads: one
interval over one seed, or a value changed by hand in a database, made a whole answer
unreadable. Here such a number is written ``null`` (the figure is undefined); whoever
prints a table for people says why there.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "finite"]


def finite(value: Any) -> Any:
    """``value`` with every float that is infinite or NaN, at any depth of its dicts, lists
    and tuples, replaced by ``None``.

    >>> finite({"ci95": [float("-inf"), 2.5], "n": [1, float("nan")]})
    {'ci95': [None, 2.5], 'n': [1, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, **kwargs)``, with a number that is infinite or NaN written
    ``null`` (:func:`finite`): always text a strict parser reads.

    >>> dumps({"lo": float("-inf"), "hi": 1.5})
    '{"lo": null, "hi": 1.5}'
    """
    try:
        # (the usual answer has no such number: it is encoded once, unwalked)
        return json.dumps(value, allow_nan=False, **kwargs)
    except ValueError:
        return json.dumps(finite(value), allow_nan=False, **kwargs)
