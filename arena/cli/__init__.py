"""The ``arena`` command line: one click group, each subcommand in its own module.

Subcommands are imported only when used, so ``arena rules`` starts without loading gRPC.
"""

from __future__ import annotations

import importlib
import os
import sys

# A standard stream closed at start (`>&-`) leaves its descriptor free: the next file opened
# takes it (gRPC's epoll, say: importing arena.cli.options loads
# gRPC, hence before it), and a write "to stdout" or a close of it then hits that
# file (gRPC aborted with "epoll_wait error: Bad file descriptor"). /dev/null holds the
# place; Python's sys.stdout stays None, so what would go there still goes nowhere.
for _fd in (0, 1, 2):
    try:
        os.fstat(_fd)
    except OSError:
        _null = os.open(os.devnull, os.O_RDWR)
        if _null != _fd:
            os.dup2(_null, _fd)
            os.close(_null)

try:
    import click

    from arena.cli.options import FileErrorsGroup
except KeyboardInterrupt:  # a Ctrl-C while Python still loads the command: no traceback
    sys.stderr.write("Interrupted while `arena` started: nothing was done.\n")
    sys.exit(130)

__all__ = ["main"]

# name -> (module, attribute, one-line help)
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "rules": ("arena.cli.rules", "rules", "Print a resolved ruleset (preset or TOML file)."),
    "replay": ("arena.cli.replay", "replay", "Replay a match record or a stored match."),
    "serve": ("arena.cli.serve", "serve", "Run the referee server."),
    "tournament": ("arena.cli.tournament", "tournament", "Run a round-robin tournament."),
    "leaderboard": ("arena.cli.leaderboard", "leaderboard", "Print or export the leaderboard."),
    "bench": ("arena.cli.bench", "bench", "Run the benchmarks and print their figures."),
    "web": ("arena.cli.web", "web", "Serve the leaderboard and replay viewer over HTTP."),
}


class _LazyGroup(FileErrorsGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS:
            return None
        module, attr, _ = _COMMANDS[cmd_name]
        try:
            mod = importlib.import_module(module)
        except KeyboardInterrupt:  # click would say "Aborted!" and exit 1
            click.echo(f"Interrupted while `arena {cmd_name}` started: nothing was done.",
                       err=True)  # fmt: skip
            sys.exit(130)
        cmd = getattr(mod, attr)
        assert isinstance(cmd, click.Command)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(n, _COMMANDS[n][2]) for n in self.list_commands(ctx)])


@click.group(cls=_LazyGroup)
@click.version_option(package_name="thousand-arena")
def main() -> None:
    """Thousand Arena: bots play the card game 1000 (Тысяча) and 1001 over gRPC."""
