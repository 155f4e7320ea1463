"""Build hook: a wheel carries the generated protobuf code.

A checkout gets it from `make proto` (the Makefile writes it next to the sources, with its
type stubs). A wheel built by pip (`pip install git+URL`, `pip install ./thousand-arena`,
`pip wheel .`) runs no Makefile: without this it installed an `arena.v1` with no
`arena_pb2`, and `import sdk` failed on the bot author's machine. Everything else is in
pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithProtobuf(build_py):
    """``build_py`` that also writes ``arena/v1/arena_pb2{,_grpc}.py`` into the build."""

    def run(self) -> None:
        if not self.editable_mode:
            # pip builds in the source tree and setuptools keeps build/lib between builds:
            # a module deleted from the copy since its last `pip install` stayed in the
            # wheel. Each build starts from the sources alone.
            shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()
        if self.editable_mode:
            return  # (an editable install imports the checkout: `make proto` writes there)
        from grpc_tools import protoc  # (a build requirement, pyproject.toml)

        root = Path(__file__).parent
        sources = sorted(str(p) for p in (root / "proto").glob("**/*.proto"))
        out = Path(self.build_lib)
        include = Path(protoc.__file__).parent / "_proto"  # (protobuf's own .proto files)
        args = ["grpc_tools.protoc", f"-I{root / 'proto'}", f"-I{include}"]
        status = protoc.main([*args, f"--python_out={out}", f"--grpc_python_out={out}", *sources])
        if status != 0:
            raise RuntimeError(f"protoc failed ({status}) on {', '.join(sources)}")


setup(cmdclass={"build_py": BuildPyWithProtobuf})
