"""A wheel built without the Makefile (``pip install git+URL`` on a bot author's machine)
carries the generated protobuf code, and the SDK imports from it."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    """A distribution's name from a requirement, normalised (PEP 503)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group()).lower()


def test_every_module_setup_py_imports_is_a_build_requirement() -> None:
    """Defect (fixed in 9ee6961, without a test): setup.py imports grpc_tools to generate
    the protobuf code, but build-system.requires named only setuptools: `pip install
    ./thousand-arena` (build isolation, as docs/writing-a-bot.md says to run it) failed
    with "No module named 'grpc_tools'". The wheel build below runs without isolation, in
    this venv, where grpcio-tools is installed anyway: it could not see that."""
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    required = {_name(r) for r in build["requires"]}
    imported = set()
    for node in ast.walk(ast.parse((ROOT / "setup.py").read_text())):
        if isinstance(node, ast.Import):
            imported |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.partition(".")[0])
    third_party = sorted(imported - set(sys.stdlib_module_names) - {"__future__"})
    assert "grpc_tools" in third_party  # (the check sees the import it is about)
    dists = importlib.metadata.packages_distributions()
    missing = {m: dists[m] for m in third_party if not {_name(d) for d in dists[m]} & required}
    assert not missing, f"imported by setup.py, not in build-system.requires: {missing}"
    # (mypy-protobuf is run, not imported: setup.py names what it runs in BUILD_TOOLS)
    (tools,) = [
        ast.literal_eval(node.value)
        for node in ast.walk(ast.parse((ROOT / "setup.py").read_text()))
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "BUILD_TOOLS"
    ]
    assert {"grpcio-tools", "mypy-protobuf"} <= set(tools)
    assert {_name(t) for t in tools} <= required, (tools, required)


def _copy_sources(src: Path) -> None:
    """What a clone holds that the build reads, without the generated code."""
    generated = shutil.ignore_patterns("__pycache__", "*_pb2*.py", "*_pb2*.pyi", "*.egg-info")
    for name in ("engine", "arena", "sdk", "bots", "proto"):
        shutil.copytree(ROOT / name, src / name, ignore=generated)
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md"):
        shutil.copy(ROOT / name, src / name)
    assert not list(src.glob("arena/v1/*_pb2*"))  # (the copy has no generated code)


def _build_wheel(src: Path, out: Path) -> Path:
    """Build the wheel of ``src`` into ``out`` as pip does (in the source tree)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(out), str(src)],
        check=True, capture_output=True, timeout=240,
    )  # fmt: skip
    (wheel,) = out.glob("thousand_arena-*.whl")
    return wheel


def _names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def _requires(wheel: Path) -> list[str]:
    """The wheel's requirements (Requires-Dist), as written."""
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return [
            line.removeprefix("Requires-Dist:").strip()
            for line in z.read(meta).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]


def test_a_wheel_built_by_pip_carries_the_generated_protobuf_code(tmp_path: Path) -> None:
    """Defect: `pip install` of the project (not `make venv`) installed an `arena.v1` without
    `arena_pb2`: `import sdk.client` failed with "run `make proto` in the checkout", on a
    machine that has no checkout. setup.py's build step generates the code into the wheel."""
    src = tmp_path / "src"
    _copy_sources(src)
    wheel = _build_wheel(src, tmp_path / "wheels")
    names = _names(wheel)
    assert {"arena/v1/arena_pb2.py", "arena/v1/arena_pb2_grpc.py"} <= names
    # Defect: the wheel had no stubs of the generated modules (`make proto` writes them
    # in a checkout, the wheel's build did not): see the fresh venv's mypy below.
    assert {"arena/v1/arena_pb2.pyi", "arena/v1/arena_pb2_grpc.pyi"} <= names
    # every file of the packages is there (arena web's pages, scripts and styles, py.typed),
    # and nothing else is (tests, the Makefile, build leftovers)
    tracked = subprocess.run(
        ["git", "ls-files", "engine", "arena", "sdk", "bots"],
        cwd=ROOT, check=True, capture_output=True, text=True, timeout=60,
    ).stdout.split()  # fmt: skip
    assert "arena/web/static/replay.js" in tracked
    assert set(tracked) - names == set()
    (meta,) = {n.split("/")[0] for n in names} - {"engine", "arena", "sdk", "bots"}
    assert meta.startswith("thousand_arena-") and meta.endswith(".dist-info"), meta
    # Defect: the generated code refuses a protobuf runtime older than the protoc that wrote
    # it, and the wheel let pip install one ("protobuf>=5.26": with protobuf<6 pinned beside
    # it `import sdk` failed, "gencode 7.35.1 runtime 5.29.6"). The wheel requires what its
    # generated code needs.
    with zipfile.ZipFile(wheel) as z:
        gencode = z.read("arena/v1/arena_pb2.py").decode()
        grpc_stubs = z.read("arena/v1/arena_pb2_grpc.py").decode()
    requires = _requires(wheel)
    for dist, version in (
        ("protobuf", re.search(r"Protobuf Python Version: ([\d.]+)", gencode)),
        ("grpcio", re.search(r"GRPC_GENERATED_VERSION = '([\d.]+)'", grpc_stubs)),
    ):
        assert version, dist
        floors = [
            tuple(int(x) for x in m.group(1).split("."))
            for r in requires
            if _name(r) == dist
            for m in re.finditer(r">=\s*([\d.]+)", r)
        ]
        needed = tuple(int(x) for x in version.group(1).split("."))
        assert floors and max(floors) >= needed, (dist, version.group(1), requires)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path / "site")
    # the installed package alone (not the checkout) imports the SDK's client and the stubs
    site = str(tmp_path / "site")
    probe = (
        f"import sys; sys.path.insert(0, {site!r}); import sdk.client, arena.v1.arena_pb2 as pb;"
        f"assert pb.__file__.startswith({site!r}), pb.__file__; print(pb.DESCRIPTOR.package)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "arena.v1"


def _requirements_installed(requires: list[str], into: Path) -> None:
    """Link into ``into`` the distributions of this venv that pip would install for
    ``requires`` (and theirs, without extras), and nothing else: a fresh venv reads them
    through a .pth file, as if pip had installed them from the index (the tests reach no
    index)."""
    from packaging.requirements import Requirement

    wanted, seen = [Requirement(r) for r in requires], set()
    while wanted:
        req = wanted.pop()
        if (req.marker and not req.marker.evaluate({"extra": ""})) or _name(req.name) in seen:
            continue
        seen.add(_name(req.name))
        dist = importlib.metadata.distribution(req.name)
        assert dist.version in req.specifier, (req, dist.version)
        wanted += [Requirement(r) for r in dist.requires or ()]
        # its top-level packages and modules, and its .dist-info (not its scripts: ../bin)
        for top in {f.parts[0] for f in dist.files or () if f.parts[0] != ".."}:
            if not (into / top).exists():
                (into / top).symlink_to(Path(str(dist.locate_file(top))))


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with the wheel built from a copy installed, and only what it requires."""
    tmp = tmp_path_factory.mktemp("fresh")
    _copy_sources(tmp / "src")
    wheel = _build_wheel(tmp / "src", tmp / "wheels")
    venv = tmp / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "-q"]
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=240,
    )  # fmt: skip
    (deps := tmp / "deps").mkdir()
    _requirements_installed(_requires(wheel), deps)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "deps.pth").write_text(f"{deps}\n")
    done = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr  # (every requirement met)
    return venv


def _in_venv(venv: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """``command`` run with the venv's bin/ first on PATH, away from the checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(command, cwd=venv, env=env, capture_output=True, text=True, timeout=120)


def test_a_fresh_venv_with_the_wheel_runs_the_sdk_without_grpcio_tools(fresh_venv: Path) -> None:
    """Defect: grpcio-tools (the protobuf compiler, 8 MB installed) was a run-time
    dependency, installed with every bot, while only the build imports it. The wheel
    alone, with what it requires, imports the SDK and the arena and runs arena-bot."""
    (site,) = fresh_venv.glob("lib/python*/site-packages")
    probe = (
        "import importlib.util, sdk, sdk.client, arena, arena.cli, arena.v1.arena_pb2 as pb;"
        "print(pb.__file__); print(importlib.util.find_spec('grpc_tools'))"
    )
    done = _in_venv(fresh_venv, "python", "-I", "-c", probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(site / "arena" / "v1" / "arena_pb2.py"), "None"]
    done = _in_venv(fresh_venv, "arena-bot", "--help")
    assert done.returncode == 0, done.stderr
    assert "Run, try and play Thousand Arena bots." in done.stdout


def test_a_bot_authors_mypy_sees_the_types_of_the_generated_code(fresh_venv: Path) -> None:
    """Defect: the wheel had no .pyi of the generated modules, and the package is py.typed:
    a bot author's `mypy --strict` read `arena_pb2` as a module without messages ("Module
    has no attribute 'Hello'") and the gRPC stub as untyped, and checked nothing of them."""
    lines = [
        "from typing import Any",
        "from arena.v1 import arena_pb2 as pb, arena_pb2_grpc",
        "from sdk import Action, Bot, PlayerView",
        "def connect(channel: Any) -> arena_pb2_grpc.ArenaStub:",
        "    return arena_pb2_grpc.ArenaStub(channel)",
        "class First(Bot):",
        "    def play(self, view: PlayerView) -> Action:",
        "        return view.legal_actions[0]",
        "version: str = pb.Hello().protocol_version",
        "pb.Hello(bot_name=1)",
    ]
    (fresh_venv / "bot.py").write_text("\n".join(lines) + "\n")
    done = _in_venv(
        fresh_venv, sys.executable, "-m", "mypy", "--strict", "--no-incremental",
        "--no-error-summary", "--python-executable", str(fresh_venv / "bin" / "python"),
        "bot.py",
    )  # fmt: skip
    # (what it says of the two faulty lines, and nothing else)
    assert done.stdout.splitlines() == [
        f"bot.py:{len(lines) - 1}: error: Incompatible types in assignment (expression has "
        'type "int", variable has type "str")  [assignment]',
        f'bot.py:{len(lines)}: error: Argument "bot_name" to "Hello" has incompatible type '
        '"int"; expected "str"  [arg-type]',
    ], done.stdout + done.stderr


def test_a_wheel_built_again_from_an_updated_copy_has_only_its_modules(tmp_path: Path) -> None:
    """Defect: pip builds in the source tree, and setuptools kept build/lib from the copy's
    last build: a module deleted from the copy (a `git pull` that removed it) was still in
    the wheel of the next `pip install ./thousand-arena`, and still imported."""
    src = tmp_path / "src"
    _copy_sources(src)
    (src / "bots" / "gone.py").write_text("REMOVED_SINCE = 'the last build'\n")
    assert "bots/gone.py" in _names(_build_wheel(src, tmp_path / "first"))
    (src / "bots" / "gone.py").unlink()
    names = _names(_build_wheel(src, tmp_path / "second"))
    assert "bots/gone.py" not in names
    assert {"bots/heuristic.py", "arena/v1/arena_pb2.py"} <= names


def test_the_docs_tell_a_pip_user_where_the_repositorys_files_are_and_how_to_update() -> None:
    """Defect: docs/writing-a-bot.md said how to install by pip and nothing more: README's
    `arena rules rulesets/house-penalty.toml`, `--config tournaments/1001.toml` and `make
    bench` failed where the package is installed (no such files, no Makefile), and `pip
    install git+URL` run again after the repository changed kept the old code (the same
    version number: pip installs nothing). The docs name the copy's paths (each must
    exist) and the reinstall (uninstall first: `--force-reinstall --no-deps` would keep a
    protobuf older than the new build's code needs)."""
    docs = {p.name: p.read_text() for p in [ROOT / "README.md", *ROOT.glob("docs/*.md")]}
    named = {
        (name, m.group(1))
        for name, text in docs.items()
        for m in re.finditer(r"\./thousand-arena/([\w./-]+\w)", text)
    }
    assert {"rulesets/house-penalty.toml", "tournaments/default.toml"} <= {p for _, p in named}
    assert [(n, p) for n, p in named if not (ROOT / p).is_file()] == []
    install = " ".join(docs["writing-a-bot.md"].split("## 1.")[0].split())
    assert "pip install git+URL` again does not" in install
    assert "run `venv/bin/pip uninstall -y thousand-arena` first" in install
    assert "run `arena bench` or `python -m arena.soak`" in install
    # (a venv pinning an older protobuf: the wheel now refuses it, the docs say what works)
    assert "pip install --no-build-isolation ./thousand-arena" in install
    # Defect: that recipe installed grpcio-tools and setuptools, not mypy-protobuf, which
    # the build runs since the wheel carries stubs: the build stopped, "needs
    # mypy-protobuf". It installs every build requirement.
    (recipe,) = re.findall(r"venv/bin/pip install ('protobuf<6'.*?) venv/bin/pip", install)
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    assert {_name(r) for r in build["requires"]} <= {_name(a) for a in shlex.split(recipe)}


def test_the_source_distribution_holds_no_tests(tmp_path: Path) -> None:
    """Defect: the sdist (`python -m build`, the way to PyPI) held tests/test*.py, which
    setuptools takes by default, without tests/support or the subfolders: nine files, five
    of which could not even import. It holds the sources, the .proto and the build files."""
    src = tmp_path / "src"
    _copy_sources(src)
    shutil.copytree(ROOT / "tests", src / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    hook = "import setuptools.build_meta as b, sys; print(b.build_sdist(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", hook, str(tmp_path / "dist")],
        cwd=src, check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    sdist = tmp_path / "dist" / done.stdout.split()[-1]
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"setup.py", "pyproject.toml", "proto/arena/v1/arena.proto", "sdk/bot.py"} <= names
    assert sorted(n for n in names if n.startswith("tests")) == []


def test_a_checkout_shadowing_the_installed_package_says_so(tmp_path: Path) -> None:
    """Defect: `python -m arena.soak` run in the copy that `pip install ./thousand-arena`
    installed from imports the copy's sources (the current directory comes first), which
    have no generated code, and said only "run `make proto` in the checkout": the package
    installed by pip, which has it, went unmentioned. It is now named, with the way out."""
    checkout, site = tmp_path / "checkout", tmp_path / "site"
    (checkout / "arena" / "v1").mkdir(parents=True)
    for name in ("arena/__init__.py", "arena/v1/__init__.py"):
        shutil.copy(ROOT / name, checkout / name)
    (site / "arena" / "v1").mkdir(parents=True)
    (site / "arena" / "v1" / "arena_pb2.py").write_text("")
    (site / "thousand_arena-0.1.0.dist-info").mkdir()
    (site / "thousand_arena-0.1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: thousand-arena\nVersion: 0.1.0\n"
    )

    def error(*path: Path) -> str:
        probe = f"import sys; sys.path[:0] = {[str(p) for p in path]!r}; import arena.v1;"
        done = subprocess.run(
            [sys.executable, "-I", "-c", probe + "arena.v1.arena_pb2"], cwd=checkout,
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return done.stderr.splitlines()[-1]

    plain = (
        "ImportError: the protobuf code (arena.v1.arena_pb2) has not been generated: run "
        "`make proto` (or `make venv`) in the checkout of thousand-arena (without make: "
        "`pip install -e .` there, which generates it too)"
    )
    assert error(checkout, site) == (
        f"{plain}; or, to use the package installed by pip ({site.resolve()}), run outside "
        f"the checkout {checkout.resolve()}: Python imported it first"
    )
    assert error(checkout) == plain  # (no package installed beside it)

    # Defect: a checkout put first by PYTHONPATH was met with "run outside the checkout",
    # from wherever Python ran: the way out is taking it off PYTHONPATH.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = f"import sys; sys.path.append({str(site)!r}); import arena.v1; arena.v1.arena_pb2"
    # Defect: run in the checkout with it on PYTHONPATH too, the message said only "take it
    # off PYTHONPATH", and Python then found it in the current directory all the same.
    for cwd, way in (
        (elsewhere, "off PYTHONPATH"),
        (checkout, "off PYTHONPATH and run outside it"),
    ):
        done = subprocess.run(
            [sys.executable, "-S", "-c", probe], cwd=cwd, capture_output=True, text=True,
            timeout=60, env={"PYTHONPATH": str(checkout)},
        )  # fmt: skip
        assert done.stderr.splitlines()[-1] == (
            f"{plain}; or, to use the package installed by pip ({site.resolve()}), take the "
            f"checkout {checkout.resolve()} {way}: Python imported it first"
        )


def test_a_build_whose_protobuf_code_cannot_be_generated_fails(tmp_path: Path) -> None:
    """A .proto that protoc refuses fails the build, saying so: not a wheel without
    `arena_pb2`, which would fail only on the bot author's machine at `import sdk`."""
    src = tmp_path / "src"
    _copy_sources(src)
    (proto,) = src.glob("proto/arena/v1/arena.proto")
    proto.write_text(proto.read_text(encoding="utf-8") + "\nmessage {\n", encoding="utf-8")
    out = tmp_path / "wheels"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode != 0
    assert "protoc failed" in done.stdout + done.stderr, done.stdout + done.stderr
    assert not list(out.glob("*.whl"))


def _setup_py(src: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "setup.py", "-q", *args],
        cwd=src, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def test_a_build_empties_no_directory_but_its_own_build(tmp_path: Path) -> None:
    """Defect: setup.py's build_py emptied its build directory, whatever it was: `python
    setup.py build_py --build-lib .` (or a setup.cfg's build_lib) deleted the whole copy,
    and `--build-lib ..` the folder holding it. Only setuptools' own build/ is emptied."""
    src = tmp_path / "src"
    _copy_sources(src)
    (tmp_path / "notes.txt").write_text("the user's\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("the user's\n")
    for build_lib in (".", "..", str(mine), "arena"):
        done = _setup_py(src, "build_py", "--build-lib", build_lib)
        assert "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "notes.txt").is_file() and (mine / "notes.txt").is_file()
    assert not subprocess.run(
        ["diff", "-r", "-x", "__pycache__", "-x", "*_pb2*", "-x", "*.egg-info",
         str(ROOT / "engine"), str(src / "engine")],
        capture_output=True, timeout=60,
    ).returncode  # fmt: skip
    assert (src / "setup.py").is_file() and (src / "arena" / "cli").is_dir()
    assert (src / "sdk" / "bot.py").is_file() and (src / "proto").is_dir()
    # a directory of its own is built into (with the generated code), not emptied
    out = tmp_path / "out"
    assert _setup_py(src, "build_py", "--build-lib", str(out)).returncode == 0
    assert (out / "arena" / "v1" / "arena_pb2.py").is_file()
    # Defect: build/ a link to a folder of the user's (builds kept on another disk) and
    # `--build-lib build` deleted that folder, with whatever else it held, and the build
    # then failed on the dangling link. What is emptied is below build/, never build/.
    (src / "build").symlink_to(mine, target_is_directory=True)
    done = _setup_py(src, "build_py", "--build-lib", "build")
    assert done.returncode == 0, done.stderr
    assert (mine / "notes.txt").is_file() and (mine / "arena" / "v1" / "arena_pb2.py").is_file()


def _backend_hook(src: Path, pythonpath: Path, hook: str) -> subprocess.CompletedProcess[str]:
    """Run a build backend hook of ``src`` with only ``pythonpath`` (and the standard
    library) to import from, as an isolated build would."""
    (src / "meta").mkdir(exist_ok=True)
    code = f"import setuptools.build_meta as b; print(b.{hook}({str(src / 'meta')!r}))"
    return subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=src, capture_output=True, text=True, timeout=240,
        env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def _setuptools_alone(where: Path) -> Path:
    """A directory to import setuptools from, and nothing else (no grpcio-tools)."""
    where.mkdir()
    for module in ("setuptools", "_distutils_hack"):
        found = importlib.util.find_spec(module)
        assert found is not None and found.origin is not None, module
        (where / module).symlink_to(Path(found.origin).parent)
    # (its metadata too: its commands, dist_info among them, are entry points)
    dist = importlib.metadata.distribution("setuptools")
    (meta,) = [f for f in dist.files or () if f.match("setuptools-*.dist-info/METADATA")]
    info = Path(str(dist.locate_file(meta))).parent
    (where / info.name).symlink_to(info)
    return where


def test_a_build_without_grpcio_tools_says_what_to_install(tmp_path: Path) -> None:
    """Defect: a build in an environment without grpcio-tools (`pip install
    --no-build-isolation` in a venv that has none) failed with a traceback ending in
    "No package metadata was found for grpcio-tools", naming no way out."""
    src = tmp_path / "src"
    _copy_sources(src)
    path = _setuptools_alone(tmp_path / "path")
    done = _backend_hook(src, path, "build_wheel")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    way_out = (
        ": install them and setuptools first, `pip install grpcio-tools mypy-protobuf "
        "setuptools`, or build without --no-build-isolation"
    )
    assert done.stderr.strip().splitlines()[-1] == (
        "error: building thousand-arena needs grpcio-tools and mypy-protobuf (they generate "
        "the protobuf code and its type stubs), and here is no grpcio-tools nor "
        f"mypy-protobuf{way_out}"
    )
    # (with grpcio-tools alone, what is missing is named: the build needs both)
    (path / "grpcio_tools-9.1.0.dist-info").mkdir()
    (path / "grpcio_tools-9.1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: grpcio-tools\nVersion: 9.1.0\n"
    )
    done = _backend_hook(src, path, "build_wheel")
    assert done.returncode != 0
    assert (
        done.stderr.strip().splitlines()[-1].endswith(f"and here is no mypy-protobuf{way_out}")
    ), done.stderr


def test_the_generated_codes_requirements_keep_their_markers(tmp_path: Path) -> None:
    """Defect: a requirement of grpcio-tools with an environment marker (`protobuf>=7;
    python_version >= "3.10"`) was dropped, so the wheel set no floor under protobuf at
    all; it is kept with its marker (pip evaluates it). An extra's requirement is not the
    generated code's."""
    src = tmp_path / "src"
    _copy_sources(src)
    path = _setuptools_alone(tmp_path / "path")
    (path / "mypy_protobuf-9.1.0.dist-info").mkdir()  # (the build asks it is there)
    (path / "mypy_protobuf-9.1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mypy-protobuf\nVersion: 9.1.0\n"
    )
    info = path / "grpcio_tools-9.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: grpcio-tools\nVersion: 9.1.0\n"
        'Requires-Dist: protobuf<10,>=9.1; python_version >= "3.10"\n'
        "Requires-Dist: grpcio>=9.1.0\n"
        "Requires-Dist: setuptools\n"
        'Requires-Dist: grpcio>=99; extra == "docs"\n'
    )
    done = _backend_hook(src, path, "prepare_metadata_for_build_wheel")
    assert done.returncode == 0, done.stderr
    meta = (src / "meta" / done.stdout.split()[-1] / "METADATA").read_text()
    requires = [n.removeprefix("Requires-Dist: ") for n in meta.splitlines() if "Dist:" in n]
    assert 'protobuf<10,>=9.1; python_version >= "3.10"' in requires
    assert "grpcio>=9.1.0" in requires
    assert not [r for r in requires if "99" in r or r.startswith("setuptools")]
