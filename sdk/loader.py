"""Find a bot class from a name: a bundled bot, ``human`` (a person at the terminal, when
:mod:`sdk.human` is installed), ``module:Class`` or ``path/file.py:Class``.

>>> load_bot("heuristic").name
'heuristic'
>>> load_bot("bots.random_bot:RandomBot").__name__
'RandomBot'

Without ``:Class`` a module or file must define exactly one :class:`~sdk.Bot` subclass of
its own (imported ones do not count). A module is looked up from the current directory
first, as ``python -m`` does; a file inside a package (its folder has ``__init__.py``) is
imported as a module of that package, so its relative imports work.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType

from sdk.bot import Bot

__all__ = ["BotLoadError", "load_bot"]


class BotLoadError(ValueError):
    """The name does not lead to a Bot subclass; the message says why and what to write."""


_HELP = (
    "name a bundled bot (random, heuristic, counting, pimc), 'human', 'module:Class' "
    "or 'file.py:Class'"
)


#: The longest bot spec (Linux's PATH_MAX, and a class name after it).
_SPEC_MAX = 4096 + 256

#: How many bot files or modules :func:`load_bot` is importing now (``sdk.run`` refuses to
#: start from one).
importing = 0


#: The working directory each bot name was first loaded from (:func:`loaded_from`).
_CWD: dict[str, str] = {}


def loaded_from(spec: str) -> str:
    """The working directory ``spec`` was first loaded from (else the current one): where
    ``arena-bot run --workers`` loads it again. A bot whose import (or a call) changed
    the working directory left its workers looking for ``mybot.py`` in that other one:
    none could load the bot."""
    return _CWD.get(spec.strip()) or os.getcwd()


def load_bot(spec: str) -> type[Bot]:
    """The bot class named by ``spec`` (see the module docs); :class:`BotLoadError` if none."""
    global importing
    with contextlib.suppress(OSError):  # (a working directory that was removed)
        _CWD.setdefault(spec.strip(), os.getcwd())
    importing += 1
    try:
        return _load_bot(spec)
    finally:
        importing -= 1


def _load_bot(spec: str) -> type[Bot]:
    spec = spec.strip()
    if not spec:
        raise BotLoadError(f"empty bot name: {_HELP}")
    if len(spec) > _SPEC_MAX:  # (quoted whole in every message below: thousands of characters)
        raise BotLoadError(
            f"a bot name of {len(spec):,} characters, longer than any path or module name "
            f"(at most {_SPEC_MAX:,}): {_HELP}"
        )
    import bots

    if spec == "human":
        return _pick(importlib.import_module("sdk.human"), "HumanBot", spec, "sdk.human")
    if spec in bots.BUNDLED:
        try:
            return bots.load(spec)
        except ImportError as e:
            raise BotLoadError(f"bundled bot {spec!r} cannot be imported: {e}") from e
    target, _, cls_name = spec.partition(":")
    if not target:
        raise BotLoadError(f"{spec!r} names no module or file before ':': {_HELP}")
    if target.endswith(".py") or "/" in target or "\\" in target:
        module = _import_file(Path(target))
    else:
        # The console scripts (`arena-bot`) do not put the current directory on the path,
        # as `python -m` does: `arena-bot run mypkg.mybot:MyBot` found no mypkg beside it.
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as e:
            # (The target or a package of it is missing; not a module whose name its name
            # starts with: "torchbot" importing a missing torch was "no module 'torchbot'".)
            if e.name and (target == e.name or target.startswith(e.name + ".")):
                # (Where it was looked for: a tournament's bot runs in its `cwd`, or in
                # the directory the arena was started from, not the config's.)
                raise BotLoadError(
                    f"no module {target!r} and no bundled bot of that name"
                    f"{_hidden(target) or _meant(target, cls_name)}: {_HELP} (a module is "
                    f"looked for in the current directory, {os.getcwd()}, and on PYTHONPATH)"
                ) from e
            raise BotLoadError(f"importing {target!r} failed: {_why(e)}") from e
        except (Exception, SystemExit) as e:  # the module is broken: say how, no traceback
            raise BotLoadError(f"importing {target!r} failed: {_why(e)}") from e
    return _pick(module, cls_name, spec, target)


def _hidden(target: str) -> str:
    """Why a module of a folder in the current directory was not found, when that folder
    has the name of a module imported already (``bots/`` beside the bot: ``bots.mybot`` is
    looked up in the bundled ``bots``), and what to write instead."""
    top = target.partition(".")[0]
    module, folder = sys.modules.get(top), Path.cwd() / top
    origin = getattr(module, "__file__", None)
    if origin is None or not folder.is_dir() or Path(origin).parent == folder.resolve():
        return ""
    file = Path(*target.split(".")).with_suffix(".py")
    where = Path(origin).parent
    return f" ({top} is imported already, from {where}, not ./{top}: name the file, {file}:Class)"


def _meant(target: str, cls_name: str) -> str:
    """What a name that is no module likely meant, said as " (did you mean ...?)": a file
    and its class written with a dot (``mybot.Lowest``, ``mybot.py.Lowest`` for
    ``mybot.py:Lowest``), or a bundled bot misspelt (``heurstic``); else ""."""
    import bots

    head, dot, tail = target.rpartition(".")
    if dot and head and not cls_name and tail.isidentifier():
        file = head if head.endswith(".py") else f"{head}.py"
        if Path(file).is_file():
            return f" (did you mean {f'{file}:{tail}'!r}?)"
    close = difflib.get_close_matches(target, [*bots.BUNDLED, "human"], n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _meant_file(path: Path) -> str:
    """The file beside ``path`` that it likely meant (its name in another case, or
    misspelt: ``MyBot.py``, ``mybto.py``), said as " (did you mean ...?)"; else ""."""
    try:
        names = [p.name for p in path.parent.iterdir() if p.suffix == ".py" and p.is_file()]
    except OSError:  # no such folder either
        return ""
    lower = {n.lower(): n for n in names}
    close = (
        [lower[path.name.lower()]]
        if path.name.lower() in lower
        else (difflib.get_close_matches(path.name, names, n=1, cutoff=0.8))
    )
    return f" (did you mean {str(path.with_name(close[0]))!r}?)" if close else ""


def _import_file(path: Path) -> ModuleType:
    if path.is_dir():
        raise BotLoadError(f"{str(path)!r} is a directory, not a Python file: {_HELP}")
    if path.exists() and not path.is_file():  # (/dev/null, a FIFO: it was "no file")
        raise BotLoadError(f"{str(path)!r} is no regular file (a device, FIFO or socket): {_HELP}")
    if not path.is_file():
        raise BotLoadError(f"no file {str(path)!r}{_meant_file(path)}: {_HELP}")
    dotted = _module_of_package(path.resolve())
    if dotted is not None:  # relative imports need the module's package
        root, inner = dotted
        try:
            return importlib.import_module(f"{_package(root)}.{inner}")
        except BotLoadError:
            raise
        except (Exception, SystemExit) as e:
            raise BotLoadError(f"importing {str(path)!r} failed: {_why(e)}") from e
    # Let the bot import its sibling modules.
    sys.path.insert(0, str(path.resolve().parent))
    name = _own_name(path) or f"_arena_bot_{path.stem}_{abs(hash(str(path.resolve()))):x}"
    return _exec_module(name, path, repr(str(path)))


def _own_name(path: Path) -> str | None:
    """The file's stem, when importing that name finds this very file: a process that
    ``multiprocessing`` starts by spawn or forkserver (Python 3.14's default on Linux)
    finds the bot's functions by their module's name, and a made-up name left a bot's
    ``Pool`` hanging on "No module named '_arena_bot_...'". Else None (a name of its own
    then): the stem is no module name, is one imported already (a second ``bot.py``, or a
    file named ``random.py``), or another module of that name comes first."""
    stem = path.stem
    if not stem.isidentifier() or stem in sys.modules:
        return None
    try:
        found = importlib.util.find_spec(stem)
    except (ImportError, ValueError):
        return None
    origin = found.origin if found is not None else None
    return stem if origin and Path(origin).resolve() == path.resolve() else None


def _exec_module(name: str, file: Path, what: str, package: Path | None = None) -> ModuleType:
    """Import ``file`` as module ``name`` (a package of folder ``package``), or raise
    :class:`BotLoadError` saying why (``what``: how to name it)."""
    where = {} if package is None else {"submodule_search_locations": [str(package)]}
    loc = importlib.util.spec_from_file_location(name, file, **where)  # type: ignore[arg-type]
    if loc is None or loc.loader is None:
        raise BotLoadError(f"cannot import {what} as Python")
    module = importlib.util.module_from_spec(loc)
    sys.modules[name] = module
    try:
        loc.loader.exec_module(module)
    except (Exception, SystemExit) as e:
        del sys.modules[name]
        raise BotLoadError(f"importing {what} failed: {_why(e)}") from e
    return module


def _module_of_package(path: Path) -> tuple[Path, str] | None:
    """For a file in a package (folders with ``__init__.py`` up to some root): the
    outermost package's folder, and the file's dotted name inside it; else None."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.append(folder.name)
        folder = folder.parent
    if len(parts) == 1 or not path.stem.isidentifier():
        return None
    return path.parents[len(parts) - 2], ".".join(reversed(parts[:-1]))


def _package(root: Path) -> str:
    """The outermost package folder ``root`` imported under a name of its own (from its
    path): under its folder's name it could be another package already imported (a user's
    ``bots/`` is not the bundled ``bots``), or another folder of that name."""
    name = f"_arena_bot_{root.name}_{abs(hash(str(root))):x}"
    if name not in sys.modules:
        _exec_module(name, root / "__init__.py", f"the package {str(root)!r}", package=root)
    return name


_SDK_DIR = str(Path(__file__).parent) + os.sep


def _why(e: BaseException) -> str:
    """What went wrong importing a bot, and where: the innermost line of the bot's own
    code (a traceback of importlib's frames would bury it)."""
    if isinstance(e, SystemExit):  # `arena-bot` exited with it, silently, code 0 and all
        return (f"it called sys.exit({e.code!r}) when imported (a script's own run belongs "
                "under `if __name__ == \"__main__\":`)")  # fmt: skip
    if isinstance(e, SyntaxError) and e.filename and e.lineno:
        # Said as the other errors are: the file's path (its name alone was "(helper.py,
        # line 5)", which a package's files or a helper beside the bot can share) and
        # the line's text, which Python's message left out.
        text = (e.text or "").strip()
        return (f"{type(e).__name__}: {e.msg} (at {e.filename}, line {e.lineno}"
                f"{': ' + text if text else ''})")  # fmt: skip
    # (Nor the SDK's own frames: the line of the bot's that called it is the one to name.)
    frames = [
        f
        for f in traceback.extract_tb(e.__traceback__)
        if "importlib" not in f.filename and not f.filename.startswith(_SDK_DIR)
    ]
    where = ""
    if frames and not isinstance(e, SyntaxError):  # (a SyntaxError names its line itself)
        f = frames[-1]
        where = f" (at {f.filename}, line {f.lineno}, in {f.name}: {(f.line or '').strip()})"
    return f"{type(e).__name__}: {e}{where}{_missing_hint(e, frames)}"


def _missing_hint(e: BaseException, frames: list[traceback.FrameSummary]) -> str:
    """What to do about a module not found: "No module named 'numpy'" alone did not say
    that a package installed for another Python (``pip install numpy`` outside the venv
    that runs arena-bot) is not seen, nor that a file of a package imports its neighbour
    relatively."""
    shadowed = _shadowed_hint(e, frames)
    if shadowed or type(e) is not ModuleNotFoundError or not e.name or "." in e.name:
        return shadowed
    here = Path(frames[-1].filename).parent if frames else None
    if (
        here is not None
        and (here / "__init__.py").is_file()
        and ((here / f"{e.name}.py").is_file() or (here / e.name).is_dir())
    ):
        return (f"; {e.name} beside it is a module of its package {here.name}: import it "
                f"relatively, `from . import {e.name}` or `from .{e.name} import ...`")  # fmt: skip
    exe = sys.executable
    return (f"; it is not installed for the Python that runs the bot ({exe}): "
            f"`{exe} -m pip install ...` installs a package there")  # fmt: skip


def _shadowed_hint(e: BaseException, frames: list[traceback.FrameSummary]) -> str:
    """Why a module beside the bot (``engine.py``, ``sdk/``) was not the one imported: one
    of that name was imported already (the arena's own ``engine``, ``sdk``, ``bots``,
    ``arena``, or a library of theirs), and Python imports a module once. "cannot import
    name 'search' from 'engine' (.../thousand-arena/engine/__init__.py)" did not say that
    the bot's own file was never read. "" when no such neighbour is there."""
    if not isinstance(e, ImportError) or not e.name or not frames:
        return ""
    top = e.name.partition(".")[0]
    module = sys.modules.get(top)
    here = Path(frames[-1].filename).parent
    mine = [p for p in (here / f"{top}.py", here / top) if p.exists()]
    if module is None or not mine:
        return ""
    origin = getattr(module, "__file__", None)
    found = None if origin is None else Path(origin).resolve()
    if found is not None and found.name == "__init__.py":  # (a package: its folder)
        found = found.parent
    if found is not None and found == mine[0].resolve():  # (it is the neighbour)
        return ""
    where = "" if found is None else f", from {found}"
    return (f"; {mine[0].name} beside it is not what `{top}` imports: a module {top} was "
            f"imported already{where} (the arena's own, or a library's), and Python "
            f"imports a name once: rename {mine[0].name}")  # fmt: skip


def _not_a_bot_class(spec: str, target: str, found: object, names: str, module: ModuleType) -> str:
    """Why ``found`` (what ``spec`` names) cannot be played, and what to name instead: a
    factory, which ``sdk.run`` and ``play_local`` take, or an instance, is a likely slip."""
    theirs = f" (its bots: {names})" if names else ""
    if isinstance(found, type):  # before callable(): a class is callable, and no factory
        return (f"{spec!r} is a class that does not derive from sdk.Bot: write "
                f"`class {found.__name__}(Bot):`, with `from sdk import Bot`{theirs}")  # fmt: skip
    if isinstance(found, Bot):
        cls = type(found).__name__
        if getattr(module, cls, None) is not type(found):  # made inside a function, say
            return (f"{spec!r} is an instance of {cls}, not a class, and {target} has no "
                    f"{cls!r} to name: a class defined inside a function cannot be named; "
                    f"define it at the top of the file{theirs}")  # fmt: skip
        return (f"{spec!r} is an instance of {cls}, not a class: name the class "
                f"({target}:{cls}); a new bot is made for every match")  # fmt: skip
    if callable(found):
        return (f"{spec!r} is a {type(found).__name__}, not a subclass of sdk.Bot: arena-bot "
                "makes the bot from its class, with no arguments; a factory is taken only "
                "from Python (sdk.run, play_local): give the class defaults for its "
                f"arguments (a subclass that sets them, say){theirs}")  # fmt: skip
    return f"{spec!r} is not a subclass of sdk.Bot (a value of type {type(found).__name__}){theirs}"


def _abstract(cls: type) -> str:
    """``Base is abstract (it does not define weigh)``: why the class cannot be made."""
    missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
    return f"{cls.__name__} is abstract (it does not define {missing})"


def _pick(module: ModuleType, cls_name: str, spec: str, target: str) -> type[Bot]:
    """The Bot subclass ``cls_name`` of ``module`` (``target``: the module or file as the
    user wrote it), or its only own one."""
    # Each class once: an alias (``Default = Mine``) is not a second bot.
    own = list({
        id(obj): obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Bot) and obj is not Bot and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)  # a base of the bots, which cannot be made
    }.values())  # fmt: skip
    names = ", ".join(sorted(c.__name__ for c in own))
    if cls_name:
        found = getattr(module, cls_name, None)
        if found is None:
            raise BotLoadError(
                f"{spec!r}: {target} has no {cls_name!r}"
                + (f" (its bots: {names})" if names else " (it defines no subclass of sdk.Bot)")
            )
        if not (isinstance(found, type) and issubclass(found, Bot)):
            raise BotLoadError(_not_a_bot_class(spec, target, found, names, module))
        if inspect.isabstract(found):  # else the first match fails to make it
            theirs = f" (its bots: {names})" if names else ""
            raise BotLoadError(f"{spec!r}: {_abstract(found)}{theirs}")
        return found
    if len(own) == 1:
        return own[0]
    if not own:
        abstract = sorted(
            (obj for _, obj in inspect.getmembers(module, inspect.isabstract)
             if issubclass(obj, Bot) and obj.__module__ == module.__name__),
            key=lambda c: c.__name__,
        )  # fmt: skip
        if abstract:  # (they have the methods: not the forgotten base of below)
            first = abstract[0]
            raise BotLoadError(f"{spec!r} defines no bot that can be made: {_abstract(first)}")
        # A class that has the methods but forgot its base is the likely slip: name it.
        others = sorted(
            name
            for name, obj in inspect.getmembers(module, inspect.isclass)
            if obj.__module__ == module.__name__
            and any(hasattr(obj, m) for m in ("act", "bid", "give", "contract", "play"))
        )
        hint = (
            f" (its classes: {', '.join(others)}; a bot is written `class {others[0]}(Bot):`"
            ", with `from sdk import Bot`)"
            if others
            else ""
        )
        raise BotLoadError(f"{spec!r} defines no subclass of sdk.Bot{hint}")
    raise BotLoadError(f"{spec!r} defines several bots ({names}): write {target}:ClassName")
