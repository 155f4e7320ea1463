"""What a bundled bot's code is: the files of ``bots/`` it runs, and the digests older
arenas stored for it.

A bundled bot's code (part of a tournament's identity: see ``BotSpec.code``) is its module
and every module of ``bots/`` it imports, directly or through another, found by reading
their ``import`` lines (not by importing them: pimc is heavy): ``random`` is
``random_bot.py``; ``counting`` is ``counting.py``, ``heuristic.py`` and ``_dds.py``.
``bots/__init__.py`` (the names' registry) is none of them, nor are the engine and the
SDK, which every bot, and the referee, share: a change to them is an upgrade of the arena,
as it always was. An arena before round 51 digested every module of ``bots/`` for every
bundled bot, so adding a bot, or changing pimc, made a tournament of ``random`` bots
another one; :data:`LEGACY_CODE` says what each such digest stood for, so that the
tournaments those arenas stored resume, and read as the same bots, where the bot's own code
did not change.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

__all__ = ["LEGACY_CODE", "bots_folder", "bundled_files", "code_now"]


def bots_folder() -> Path | None:
    """The folder of the ``bots`` package (located, not imported), or None."""
    found = importlib.util.find_spec("bots")
    where = found.submodule_search_locations if found is not None else None
    return Path(next(iter(where))) if where else None


def _imports(source: bytes) -> set[str]:
    """The modules of ``bots`` that ``source`` (a module of it) imports, by their name in
    the package (``heuristic``), wherever the import is (a function's, too: it runs when
    called). A name imported from the package itself (``from bots import load``) is taken
    for a module: one with no file is left out by the caller."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):  # (the bot fails to start: nothing of it is read)
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("bots."))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 and module:  # from .heuristic import X
                out.add(module.split(".")[0])
            elif (node.level == 1 and not module) or (node.level == 0 and module == "bots"):
                out.update(a.name for a in node.names)  # from . import heuristic
            elif node.level == 0 and module.startswith("bots."):
                out.add(module.split(".")[1])
    return out


def _module_of(name: str, folder: Path) -> str | None:
    """The module of ``folder`` (``random_bot``) that ``bots/__init__.py``'s ``_WHERE``
    names for the bundled bot ``name`` (read, not imported: the arena imports no bot);
    None when it cannot be read. ``KeyError`` for a name it does not have."""
    try:
        tree = ast.parse((folder / "__init__.py").read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    target: ast.expr
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "_WHERE":
            try:
                where = ast.literal_eval(value)
            except ValueError:
                return None
            return str(where[name][0]).rpartition(".")[2]
    return None


def bundled_files(name: str, folder: Path | None = None) -> list[Path]:
    """The files of ``folder`` (the ``bots`` package's) that the bundled bot ``name`` runs:
    its module and those it imports from ``bots``, transitively, sorted by name; [] when
    the folder is not found. ``KeyError`` for a name that is no bundled bot."""
    folder = folder if folder is not None else bots_folder()
    if folder is None:
        return []
    start = _module_of(name, folder)
    if start is None:  # (a registry this arena cannot read: every module, as before)
        return sorted(folder.glob("*.py"))
    found: dict[str, Path] = {}
    todo = [start]
    while todo:
        module = todo.pop()
        path = folder / f"{module}.py"
        if module in found or module == "__init__" or not path.is_file():
            continue
        found[module] = path
        todo.extend(_imports(path.read_bytes()))
    return sorted(found.values(), key=lambda p: p.name)


#: The code digest an arena before round 51 stored for every bundled bot (of all the
#: ``*.py`` of its ``bots/``) -> the digest this arena makes of each bundled bot of that
#: ``bots/`` (:func:`bundled_files`). One row per version of ``bots/`` in the history of
#: main up to round 51 (``python -m arena.tournament.bundled REPO`` prints them): a digest
#: not here (a tournament played by a checkout with uncommitted edits to ``bots/``) is
#: compared as it is, and reads as another code, as it did.
# fmt: off
_LEGACY: dict[str, tuple[str, ...]] = {  # (random, heuristic, counting, pimc)
    "1ae5da032cd017af": (
        "ea4d858f42015c58", "c9f87c88a254e0cf", "90ed2770ea8756d1", "1ed5fbb4f3e7a225",
    ),
    "d360b6fa1ae7c7b9": (
        "ea4d858f42015c58", "c9f87c88a254e0cf", "9aba0d6041dbbcb5", "53ddfb25715a69ae",
    ),
    "e71bd32c1dafc40c": (
        "ea4d858f42015c58", "41a6bb5efa2f7a1b", "2d0eff0b051944d6", "0476e73cf9b42e1d",
    ),
    "90d62188c9fa7556": (
        "ea4d858f42015c58", "ae405b60cebfdfd7", "604108f4eabe8314", "eb95294f08d18820",
    ),
    "163139cf36aac659": (
        "ea4d858f42015c58", "6bd0d56fc8217041", "ad1f7c7c1204c962", "2053f8057bf3f412",
    ),
    "b71c5c648d6b583d": (
        "ea4d858f42015c58", "8fe23c9149080fe8", "e8302700a6938047", "1d3759139261a3c7",
    ),
    "f81ecadbb553a69f": (
        "ea4d858f42015c58", "c2073ed97976eeec", "242505269e1a1bd3", "9b58a268397ae71c",
    ),
    "1111b987e0eca53a": (
        "ea4d858f42015c58", "728a0653e7e30d8f", "3385c687b186f796", "9b95250a5da4a579",
    ),
    "81050d49a0aa5c7a": (
        "ea4d858f42015c58", "728a0653e7e30d8f", "436db0c3bb83491b", "90820a7752b5c1b9",
    ),
    "fd820b40814ca8c2": (
        "ea4d858f42015c58", "728a0653e7e30d8f", "436db0c3bb83491b", "724230d09ddc668c",
    ),
    "bb97ac3d48c30a59": (
        "ea4d858f42015c58", "728a0653e7e30d8f", "436db0c3bb83491b", "aa592ebbe7c73c6c",
    ),
    "678dfecc51e18814": (
        "ea4d858f42015c58", "728a0653e7e30d8f", "436db0c3bb83491b", "0168e63b3ce142b5",
    ),
    "057fb1d7e36ed021": (
        "ea4d858f42015c58", "48d64af61b09e22b", "f4504d792e75b951", "bdf38c9b8a66a02c",
    ),
    "b67e0c6fbac0b8bb": (
        "ea4d858f42015c58", "d9955eb5e473f01e", "6ca0110269c51f18", "b9f790d4a5f0b04a",
    ),
    "5e76bd10ce3ca2af": (
        "ea4d858f42015c58", "313e45e104e7bee5", "e519c5e0f691da1d", "d734090a9d5d1da2",
    ),
    "bd23ac098a3d585e": (
        "ea4d858f42015c58", "f86fbfc626b18303", "df27c444d95c260d", "288cff88759aac3a",
    ),
    "a0bc39531652d684": (
        "ea4d858f42015c58", "1342d0d5ca6c49f0", "1bbefdb8dbcb26a4", "6159acd34ff8cc15",
    ),
    "d765041c728945ea": (
        "ea4d858f42015c58", "eda4206c37595e49", "4575d9e7f7881c5d", "ad31b4b0f95cf489",
    ),
    "5fdfa9cf79484f10": (
        "ea4d858f42015c58", "7e2b81ad06e5a5fb", "c421fcb608731a7f", "7447ae6d49949c64",
    ),
    "dc5e44ccafdc14cf": (
        "ea4d858f42015c58", "04dd965e400e3390", "62e525890a5641a1", "674953920e6a2376",
    ),
    "604f550b154417bf": (
        "ea4d858f42015c58", "228132615be15b53", "9c68e58f38663f27", "2a80d746527c5417",
    ),
    "40ec4e0c5d365039": (
        "ea4d858f42015c58", "1dd0e6da95e540a7", "c00d55de261038b6", "5473075d73fd2e2e",
    ),
    "a8bf498052595f1b": (
        "ea4d858f42015c58", "4979b55944f5c20b", "0479119837b05082", "b03e04bfa5f5d8e6",
    ),
    "b7e515a6cb4ecf73": (
        "ea4d858f42015c58", "d4d71985e2f5169e", "02328584a059f8c8", "c726c8bb8171c581",
    ),
    "8eb4decfaee0bfc0": (
        "ea4d858f42015c58", "d4d71985e2f5169e", "1ca2fbe2278c7b17", "12e79982ea7a941b",
    ),
    "b5946e0ef1866876": (
        "ea4d858f42015c58", "d4d71985e2f5169e", "6c3e74e2d70e7d18", "7502ed49d7426eba",
    ),
    "0dcc4495bbc5b197": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "1b6a0d5efb10bf15", "adb07ff4abaa5a86",
    ),
    "3785ae37e7f3be06": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "e362ff63094a67c7", "8fbaaf2ac3fe3e39",
    ),
    "0106388e0d46ecb5": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "e362ff63094a67c7", "9ceb6fe59df81d5e",
    ),
    "8d7c48b5f1fdc060": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "3740f0aaa5fc5390", "e6c9731be10157e9",
    ),
    "2f0c91a098248d30": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "3740f0aaa5fc5390", "811b2549f30273cd",
    ),
    "8d68025cc732661b": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "ba0668f357af6127", "39e638812c99813b",
    ),
    "549e39b1603daeb6": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "803c7a92b3eb1ac5", "9a5a2c3469ca3402",
    ),
    "720dc10399d0da31": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "803c7a92b3eb1ac5", "fa0808eff1b0351c",
    ),
    "e96dfa83de09ed7d": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "1e4da0de09bfb9d6", "00f6851ef6099450",
    ),
    "4330fbe6616a90a9": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "1e4da0de09bfb9d6", "201ce9ed472b358d",
    ),
    "d3d4d6f9ed4ad6ff": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "1e4da0de09bfb9d6", "fc9c86f9a3225e89",
    ),
    "04d1bb92d820973d": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "1e4da0de09bfb9d6", "8dbbcbbd20175ff8",
    ),
    "8cae04917255d3a4": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "1e4da0de09bfb9d6", "852e5047ba278c41",
    ),
    "b01c64132673181e": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "585938b5fd19fab0", "e5c70f6d9a7716ab",
    ),
    "f9409a861a255b14": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "88c486eb5c936336", "3538380a20b60eea",
    ),
    "d2f7180628d0080e": (
        "ea4d858f42015c58", "2f2b21fc3bc39d15", "88c486eb5c936336", "94df2dd9b11daa07",
    ),
    "83c034ff1d98983b": (
        "ea4d858f42015c58", "7ddcafb971db5efd", "6dd1d58c54eff231", "babdc21f1202d12d",
    ),
    "305f7610af567175": (
        "ea4d858f42015c58", "7ddcafb971db5efd", "f5c4171758b8bc43", "86859fa9fd028d18",
    ),
    "5c016d9be63c4833": (
        "ea4d858f42015c58", "67aa310f7f330ceb", "181cd4ec2c2648bb", "0fd8b8061aafca92",
    ),
    "c1c488eef7501b53": (
        "ea4d858f42015c58", "67aa310f7f330ceb", "2e1f8bdf103ecdfe", "6b58aa196b9cd689",
    ),
    "3a11912251bb0926": (
        "ea4d858f42015c58", "67aa310f7f330ceb", "60bb93d91c3038eb", "cbf2695cdde605ba",
    ),
    "f75d135153787768": (
        "ea4d858f42015c58", "67aa310f7f330ceb", "045429af5d940c73", "02947783a475f057",
    ),
    "c400917777400ad6": (
        "cced7a391db2fe08", "53bf0ec1ee8f7915", "23c3192c9baf01cc", "a0dedafc548c229d",
    ),
    "e6764e0291be75c8": (
        "cced7a391db2fe08", "53bf0ec1ee8f7915", "23c3192c9baf01cc", "94d819cbd5de3c3d",
    ),
    "de9767f11baf5edd": (
        "cced7a391db2fe08", "53bf0ec1ee8f7915", "23c3192c9baf01cc", "9106952db2fc8d14",
    ),
    "0d584c2284bbec8d": (
        "cced7a391db2fe08", "53bf0ec1ee8f7915", "3f698831e78c1bf3", "ef8c865d4610cc75",
    ),
    "161692be75ee8cc2": (
        "cced7a391db2fe08", "53bf0ec1ee8f7915", "ea172e3a2bb875fe", "efebfe1448d372fb",
    ),
    "bfe666bcb84721d0": (
        "cced7a391db2fe08", "53bf0ec1ee8f7915", "ea172e3a2bb875fe", "a852abe20974a80b",
    ),
    "171bcd4683652278": (
        "cced7a391db2fe08", "53bf0ec1ee8f7915", "cfb71e308f6b2086", "9b8e79ded678113d",
    ),
    "17c3c23485a6c4c7": (
        "cced7a391db2fe08", "53bf0ec1ee8f7915", "636b0e49df13ee97", "9b8e79ded678113d",
    ),
}
# fmt: on
LEGACY_CODE: dict[str, dict[str, str]] = {
    legacy: dict(zip(("random", "heuristic", "counting", "pimc"), now, strict=True))
    for legacy, now in _LEGACY.items()
}


def code_now(bot: Any, code: Any) -> Any:
    """The digest this arena makes of the bundled bot ``bot`` whose stored digest is
    ``code``: :data:`LEGACY_CODE`'s when ``code`` is an older arena's; this arena's own when
    ``code`` is the older arena's digest of this very ``bots/`` (:func:`_whole_folder_of`:
    a file of the user's own kept there, which no row of that table has), or of this bot's
    own modules, read with CRLF line ends or without (an arena before round 52 digested
    the bytes as the checkout had them); else ``code``."""
    if not isinstance(code, str) or not isinstance(bot, str):
        return code
    known = LEGACY_CODE.get(code)
    if known is not None:
        return known.get(bot, code)
    folder = bots_folder()
    key = _folder_key(folder) if folder is not None else None
    if folder is None or key is None:
        return code
    try:
        now, older = _bot_code_of(folder, key, bot)
    except KeyError:  # (no bundled bot of that name)
        return code
    # (an arena before round 52 digested the bytes: a CRLF checkout's, or this one's)
    if code in _whole_folder_of(folder, key) or code in older:
        return now or code
    return code


def _folder_key(folder: Path) -> tuple[tuple[str, int, int], ...] | None:
    """The names, sizes and times of the ``*.py`` of ``folder`` (None if one cannot be
    read): what the digests below are cached by. A season reads :func:`code_now` for each
    bot of each week, and reading a bot's imports and digesting its files each time cost
    a 20-week season of the four bundled bots 2 s at each build."""
    try:
        return tuple(
            (p.name, (st := p.stat()).st_size, st.st_mtime_ns) for p in sorted(folder.glob("*.py"))
        )
    except OSError:
        return None


@functools.lru_cache(maxsize=16)
def _bot_code_of(
    folder: Path, key: tuple[tuple[str, int, int], ...], bot: str
) -> tuple[str | None, tuple[str, ...]]:
    """The digest this arena makes of the bundled bot ``bot`` of ``folder`` (whose files
    are ``key``), and those an arena before round 52 made of the same files
    (:func:`arena.tournament.config.older_digests`). ``KeyError``: no bundled bot ``bot``."""
    from arena.tournament.config import code_digest, older_digests  # (it imports this module)

    files = bundled_files(bot, folder)
    return code_digest(files), older_digests(files)


@functools.lru_cache(maxsize=4)
def _whole_folder_of(folder: Path, key: tuple[tuple[str, int, int], ...]) -> tuple[str, ...]:
    """The digest an arena before round 51 made of every bundled bot in ``folder`` (of all
    its ``*.py``, ``key``). A bot of the user's own kept in the checkout's ``bots/`` (the
    docs name ``bots/mybot.py``) was part of it, so no row of :data:`LEGACY_CODE` holds it:
    but where ``bots/`` is, file for file, the one that played, every bundled bot is the
    same. Its bytes, as that arena digested them, as a checkout writing CRLF line ends has
    them, and as one writing LF has them (a CRLF checkout resuming an LF one's tournament)."""
    from arena.tournament.config import code_digest

    files = [folder / name for name, _, _ in key]
    digests = {code_digest(files, lines=lines) for lines in ("raw", "crlf", "lf")}
    return tuple(sorted(d for d in digests if d is not None))


def _legacy_rows(repo: Path) -> dict[str, dict[str, str]]:
    """:data:`LEGACY_CODE` made again from the history of ``repo``'s main (every version
    of ``bots/`` since a bot's code became part of the tournament id)."""
    from arena.tournament.config import BUNDLED_BOTS, code_digest

    def git(*args: str) -> bytes:
        return subprocess.run(["git", "-C", str(repo), *args], check=True,
                              capture_output=True).stdout  # fmt: skip

    rows: dict[str, dict[str, str]] = {}
    trees: set[str] = set()
    for commit in git("rev-list", "main", "--", "bots").decode().split():
        tree = git("rev-parse", f"{commit}:bots").decode().strip()
        if tree in trees:
            continue
        trees.add(tree)
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(fileobj=BytesIO(git("archive", commit, "bots"))) as tar:
                tar.extractall(tmp, filter="data")
            folder = Path(tmp) / "bots"
            legacy = code_digest(sorted(folder.glob("*.py")), lines="raw")
            now = {b: code_digest(bundled_files(b, folder)) for b in BUNDLED_BOTS}
            whole = (folder / "__init__.py").is_file() and all(now.values())
            if legacy is not None and whole:  # (a bots/ an arena ran: not pimc's own start)
                rows[legacy] = {b: d for b, d in now.items() if d is not None}
    return rows


if __name__ == "__main__":  # pragma: no cover (run once, to write LEGACY_CODE)
    for legacy, now in _legacy_rows(Path(sys.argv[1])).items():
        digests = ", ".join(f'"{now[b]}"' for b in ("random", "heuristic", "counting", "pimc"))
        print(f'    "{legacy}": (\n        {digests},\n    ),')
