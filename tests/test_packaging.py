"""A wheel built without the Makefile (``pip install git+URL`` on a bot author's machine)
carries the generated protobuf code, and the SDK imports from it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _source_copy(tmp_path: Path) -> Path:
    """The project's sources and build files, without the generated protobuf code."""
    src = tmp_path / "src"
    generated = shutil.ignore_patterns("__pycache__", "*_pb2*.py", "*_pb2*.pyi", "*.egg-info")
    for name in ("engine", "arena", "sdk", "bots", "proto"):
        shutil.copytree(ROOT / name, src / name, ignore=generated)
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md"):
        shutil.copy(ROOT / name, src / name)
    assert not list(src.glob("arena/v1/*_pb2*"))  # (the copy has no generated code)
    return src


def test_a_wheel_built_by_pip_carries_the_generated_protobuf_code(tmp_path: Path) -> None:
    """Defect: `pip install` of the project (not `make venv`) installed an `arena.v1` without
    `arena_pb2`: `import sdk.client` failed with "run `make proto` in the checkout", on a
    machine that has no checkout. setup.py's build step generates the code into the wheel."""
    src = _source_copy(tmp_path)
    out = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(out), str(src)],
        check=True, capture_output=True, timeout=240,
    )  # fmt: skip
    (wheel,) = out.glob("thousand_arena-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert {"arena/v1/arena_pb2.py", "arena/v1/arena_pb2_grpc.py"} <= names
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


def test_a_build_whose_protobuf_code_cannot_be_generated_fails(tmp_path: Path) -> None:
    """A .proto that protoc refuses fails the build, saying so: not a wheel without
    `arena_pb2`, which would fail only on the bot author's machine at `import sdk`."""
    src = _source_copy(tmp_path)
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
