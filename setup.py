"""Build hook: a wheel carries the generated protobuf code.

A checkout gets it from `make proto` (the Makefile writes it next to the sources, with its
type stubs). A wheel built by pip (`pip install git+URL`, `pip install ./thousand-arena`,
`pip wheel .`) runs no Makefile: without this it installed an `arena.v1` with no
`arena_pb2`, and `import sdk` failed on the bot author's machine. The dependencies are
here too (the generated code sets a floor under protobuf and grpcio); everything else is in
pyproject.toml.
"""

from __future__ import annotations

import re
import shutil
import sys
from importlib.metadata import PackageNotFoundError, requires
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
        if self.editable_mode:
            return  # (an editable install imports the checkout: `make proto` writes there)
        from grpc_tools import protoc  # (a build requirement, pyproject.toml)

        sources = sorted(str(p) for p in (ROOT / "proto").glob("**/*.proto"))
        out = Path(self.build_lib)
        include = Path(protoc.__file__).parent / "_proto"  # (protobuf's own .proto files)
        args = ["grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"-I{include}"]
        status = protoc.main([*args, f"--python_out={out}", f"--grpc_python_out={out}", *sources])
        if status != 0:
            raise RuntimeError(f"protoc failed ({status}) on {', '.join(sources)}")

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


DEPENDENCIES = [
    "grpcio>=1.60",
    "grpcio-tools>=1.60",
    "grpcio-health-checking>=1.60",
    "grpcio-reflection>=1.60",
    "protobuf>=5.26",
    "trueskill>=0.4.5",
    "click>=8.1",
    "rich>=13",
]


def generated_code_requirements() -> list[str]:
    """What the generated code needs at run time: what the grpcio-tools generating it
    requires of protobuf and grpcio. Its code refuses an older protobuf runtime than the
    protoc that wrote it ("gencode 7.35.1 runtime 5.29.6"), and its stubs an older grpcio;
    pip's isolated build takes the newest grpcio-tools, whatever the bot author's venv holds
    (a library pinning protobuf<6): without these the install succeeded and `import sdk`
    failed."""
    try:
        tools = requires("grpcio-tools") or []
    except PackageNotFoundError:
        # (pip installs the build requirements itself, except with --no-build-isolation)
        sys.exit(
            "error: building thousand-arena needs grpcio-tools (it generates the protobuf "
            "code): install it and setuptools first, `pip install grpcio-tools setuptools`, "
            "or build without --no-build-isolation"
        )
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
