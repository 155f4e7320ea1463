"""The examples in the docstrings of engine/, sdk/, arena/ and bots/ are run as tests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import arena
import bots
import engine
import sdk


def _modules() -> list[str]:
    names = []
    for package in (engine, sdk, arena, bots):
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not info.name.startswith("arena.v1"):  # generated protobuf code
                names.append(info.name)
    return sorted(names)


MODULES = _modules()


def test_every_package_is_searched() -> None:
    assert {"engine.rules", "engine.view", "arena.referee.match", "sdk.client"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module: ModuleType = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
