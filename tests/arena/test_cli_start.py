"""How the ``arena`` command starts: without gRPC until a subcommand needs it, and a
Ctrl-C while it loads is one line, not a traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_command_group_loads_without_grpc() -> None:
    """`arena rules` (and every option check of the group) ran after gRPC was imported,
    because arena.cli.options took ``host_problem`` from the referee's server module: a
    third of a second of start-up, and the window where a Ctrl-C was a traceback."""
    out = _python(
        """
        import sys
        from click.testing import CliRunner
        from arena.cli import main
        result = CliRunner().invoke(main, ["rules", "classic"])
        assert result.exit_code == 0, result.output
        print(sorted(m for m in sys.modules if m == "grpc" or m.startswith("grpc.")))
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_ctrl_c_while_the_command_loads_is_one_line() -> None:
    """A KeyboardInterrupt while ``arena`` imported its modules printed Python's traceback.
    The interrupt is made to land inside that import, every time, by an import hook."""
    out = _python(
        """
        import sys

        class Interrupt:
            def find_spec(self, name, path=None, target=None):
                if name == "arena.cli.options":
                    raise KeyboardInterrupt
                return None

        sys.meta_path.insert(0, Interrupt())
        from arena.cli import main
        """
    )
    assert out.returncode == 130, out
    assert out.stderr == "Interrupted while `arena` started: nothing was done.\n"
    assert "Traceback" not in out.stdout + out.stderr


def test_a_file_given_without_its_option_is_told_which_option_takes_it() -> None:
    """`arena tournament t.toml` said only "Got unexpected extra argument (t.toml)", with
    the usage line, which names no option: the config goes in --config, a database in --db.
    A stray word with no such suffix, or two of them, get click's message alone."""
    from click.testing import CliRunner

    from arena.cli import main

    def error(*args: str) -> str:
        result = CliRunner().invoke(main, list(args))
        assert result.exit_code == 2, result.output
        return result.output.splitlines()[-1]

    assert error("tournament", "t.toml") == (
        "Error: Got unexpected extra argument (t.toml): give it as --config t.toml"
    )
    assert error("leaderboard", "r.SQLITE").endswith(": give it as --db r.SQLITE")
    assert error("web", "x.db").endswith(": give it as --db x.db")
    assert error("tournament", "x") == "Error: Got unexpected extra argument (x)"
    assert error("tournament", "a", "b.toml") == "Error: Got unexpected extra arguments (a b.toml)"
    # `arena web` has no --config: nothing to point at
    assert error("web", "t.toml") == "Error: Got unexpected extra argument (t.toml)"
