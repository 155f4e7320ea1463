"""Build hook: a wheel carries the generated protobuf code and its type stubs.

A checkout gets them from `make proto` (the Makefile writes them next to the sources), or
from `pip install -e .` without make (this writes them there too). A wheel built by pip (`pip install git+URL`, `pip install ./thousand-arena`, `pip wheel .`)
runs no Makefile: without this it installed an `arena.v1` with no `arena_pb2`, and `import
sdk` failed on the bot author's machine. The dependencies are here too (the generated code
sets a floor under protobuf and grpcio); everything else is in pyproject.toml.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, entry_points, requires, version
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithProtobuf(build_py):
    """``build_py`` that also writes ``arena/v1/arena_pb2{,_grpc}.py`` into the build."""

    def run(self) -> None:
        if not self.editable_mode:
            # pip builds in the source tree and setuptools keeps build/lib between builds:
            # a module deleted from the copy since its last `pip install` stayed in the
            # wheel. Each build starts from the sources alone.
            self._empty_build_lib()
        super().run()
        # An editable install imports the checkout itself, so the code goes there, as
        # `make proto` writes it: without it `pip install -e .` (the way in without make)
        # installed a checkout that could not `import sdk`, told to run the very `make` it
        # had no use of.
        _generate(ROOT if self.editable_mode else Path(self.build_lib))

    def _empty_build_lib(self) -> None:
        """Remove the last build's files, and nothing else: only a directory below
        setuptools' own build/ here is emptied (`make clean` removes it too). A
        ``--build-lib`` elsewhere (or a setup.cfg's ``build_lib``) may name any directory,
        the source tree or a parent of it (``--build-lib .`` deleted the checkout), and
        build/ itself may be a link to a folder of the user's: they are left as they are."""
        out = Path(self.build_lib).resolve()
        base = (ROOT / "build").resolve()
        if out != base and out.is_relative_to(base):
            shutil.rmtree(out, ignore_errors=True)


def _generate(out: Path) -> None:
    """Writes ``arena/v1/arena_pb2{,_grpc}.py{,i}`` below ``out`` from proto/."""
    from grpc_tools import protoc  # (a build requirement, pyproject.toml)

    sources = sorted(str(p) for p in (ROOT / "proto").glob("**/*.proto"))
    include = Path(protoc.__file__).parent / "_proto"  # (protobuf's own .proto files)
    args = ["grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"-I{include}"]
    args += [f"--python_out={out}", f"--grpc_python_out={out}"]
    # The .pyi stubs (the package is py.typed: without them a bot author's mypy saw
    # `arena_pb2` as a module with no messages, and `ArenaStub` as untyped) come from
    # mypy-protobuf, as `make proto` writes them, not from protoc's own --pyi_out: the
    # wheel's stubs are then the ones the project's `mypy --strict` checks the SDK
    # against, and they cover the gRPC stubs too (--pyi_out writes none for
    # arena_pb2_grpc). Its cost is a build requirement (pyproject.toml).
    stubs = {"protoc-gen-mypy": "mypy_out", "protoc-gen-mypy_grpc": "mypy_grpc_out"}
    # (the system's temporary directory: pip's isolated build runs from there already)
    with tempfile.TemporaryDirectory(prefix="thousand-arena-plugins-") as plugins:
        for name, option in stubs.items():
            plugin = _plugin(Path(plugins), name)
            args += [f"--plugin={name}={plugin}", f"--{option}={out}"]
        status = protoc.main([*args, *sources])
    if status != 0:
        raise RuntimeError(f"protoc failed ({status}) on {', '.join(sources)}")


def _plugin(directory: Path, name: str) -> Path:
    """An executable protoc runs as the plugin ``name`` (a console script of mypy-protobuf):
    this Python running its entry point. Not the script pip installed: `venv/bin/pip
    install --no-build-isolation` builds with the venv's bin/ off PATH, and this Python
    sees the build's packages either way (protoc's child inherits pip's build environment)."""
    (entry,) = entry_points(group="console_scripts", name=name)
    module, _, function = entry.value.partition(":")
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    path = directory / name
    # (sh, not a #! line naming this Python: a #! line breaks on a path with a space)
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -c "{code}" "$@"\n')
    path.chmod(0o755)
    return path


# grpcio-tools is not here: it generates the code at build time (a build requirement,
# pyproject.toml), and nothing imports it at run time (the dev extra installs it for
# `make proto`).
DEPENDENCIES = [
    "grpcio>=1.60",
    "grpcio-health-checking>=1.60",
    "grpcio-reflection>=1.60",
    "protobuf>=5.26",
    "trueskill>=0.4.5",
    "click>=8.1",
    "rich>=13",
]


#: What the build runs besides setuptools (pyproject.toml's build-system.requires).
BUILD_TOOLS = ("grpcio-tools", "mypy-protobuf")


def _installed(distribution: str) -> bool:
    try:
        version(distribution)
    except PackageNotFoundError:
        return False
    return True


def generated_code_requirements() -> list[str]:
    """What the generated code needs at run time: what the grpcio-tools generating it
    requires of protobuf and grpcio. Its code refuses an older protobuf runtime than the
    protoc that wrote it ("gencode 7.35.1 runtime 5.29.6"), and its stubs an older grpcio;
    pip's isolated build takes the newest grpcio-tools, whatever the bot author's venv holds
    (a library pinning protobuf<6): without these the install succeeded and `import sdk`
    failed."""
    missing = [tool for tool in BUILD_TOOLS if not _installed(tool)]
    if missing:
        # (pip installs the build requirements itself, except with --no-build-isolation)
        sys.exit(
            "error: building thousand-arena needs grpcio-tools and mypy-protobuf (they "
            "generate the protobuf code and its type stubs), and here is no "
            f"{' nor '.join(missing)}: install them and setuptools first, `pip install "
            "grpcio-tools mypy-protobuf setuptools`, or build without --no-build-isolation"
        )
    tools = requires("grpcio-tools") or []
    wanted = []
    for req in tools:
        name = re.match(r"[A-Za-z0-9._-]+", req)
        _, _, marker = req.partition(";")
        # (kept with its marker, which pip evaluates; an extra's requirement is not needed)
        if name and name.group().lower() in ("protobuf", "grpcio") and "extra" not in marker:
            wanted.append(req)
    return wanted


setup(
    cmdclass={"build_py": BuildPyWithProtobuf},
    install_requires=DEPENDENCIES + generated_code_requirements(),
)
