"""``arena serve``: run the referee with a lobby that seats connected bots into matches."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import tomllib
from pathlib import Path

import click

from arena.referee import Lobby, Referee, RefereeConfig, TLSConfig, start_server
from engine import RulesetError, load_ruleset

__all__ = ["load_tokens", "serve"]

log = logging.getLogger("arena.referee")


def load_tokens(path: Path) -> dict[str, str]:
    """Bot name -> token from a TOML file's ``[bots]`` table (``name = "token"``)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise click.BadParameter(f"cannot read {path}: {e.strerror or e}") from e
    except tomllib.TOMLDecodeError as e:
        raise click.BadParameter(f"{path} is not valid TOML: {e}") from e
    bots = data.get("bots")
    if not isinstance(bots, dict) or not bots:
        raise click.BadParameter(f'{path}: expected a [bots] table of name = "token"')
    out: dict[str, str] = {}
    for name, token in bots.items():
        if not isinstance(token, str) or not token:
            raise click.BadParameter(f"{path}: bots.{name}: the token must be a non-empty string")
        out[name] = token
    if len(set(out.values())) != len(out):
        raise click.BadParameter(f"{path}: two bots share a token")
    return out


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=50051, show_default=True, help="Port; 0 picks a free one.")
@click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help='TOML file with a [bots] table: name = "token".',
)
@click.option("--ruleset", default="classic", show_default=True, help="Preset or TOML file.")
@click.option(
    "--record-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("records"),
    show_default=True,
    help="Each match is appended here as <match_id>.jsonl while it is played.",
)
@click.option("--decision-ms", default=1000, show_default=True, help="Time per decision.")
@click.option("--time-bank-ms", default=10000, show_default=True, help="Time bank per match.")
@click.option("--max-strikes", default=3, show_default=True, help="Strikes before a forfeit.")
@click.option("--grace-s", default=5.0, show_default=True, help="Reconnect grace period.")
@click.option("--matches", "max_matches", type=int, default=None, help="Stop after K matches.")
@click.option("--seed", default=0, show_default=True, help="Seeds the seating and the deals.")
@click.option(
    "--tls-cert", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
    help="PEM certificate chain (with --tls-key: serve TLS only).",
)  # fmt: skip
@click.option(
    "--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
    help="PEM private key.",
)  # fmt: skip
@click.option(
    "--drain-s", default=30.0, show_default=True,
    help="On SIGINT/SIGTERM: how long running matches may take to finish before they are "
    "interrupted (and recorded as interrupted).",
)  # fmt: skip
@click.option("-v", "--verbose", is_flag=True, help="Log every connection and incident.")
def serve(
    host: str,
    port: int,
    tokens_file: Path,
    ruleset: str,
    record_dir: Path,
    decision_ms: int,
    time_bank_ms: int,
    max_strikes: int,
    grace_s: float,
    max_matches: int | None,
    seed: int,
    tls_cert: Path | None,
    tls_key: Path | None,
    drain_s: float,
    verbose: bool,
) -> None:
    """Run the referee: bots connect with their tokens and are seated into matches (3 or 4
    per the ruleset) as long as enough of them are idle; every match is recorded."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        rs = load_ruleset(ruleset)
    except RulesetError as e:
        raise click.BadParameter(str(e), param_hint="--ruleset") from e
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    tls = TLSConfig(tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None
    tokens = load_tokens(tokens_file)
    try:
        config = RefereeConfig(
            decision_ms=decision_ms,
            time_bank_ms=time_bank_ms,
            max_strikes=max_strikes,
            reconnect_grace_s=grace_s,
            record_dir=record_dir,
        )
    except ValueError as e:
        raise click.UsageError(str(e)) from e
    asyncio.run(_serve(config, tokens, rs, host, port, tls, max_matches, seed, drain_s))


async def _serve(
    config: RefereeConfig,
    tokens: dict[str, str],
    ruleset: object,
    host: str,
    port: int,
    tls: TLSConfig | None,
    max_matches: int | None,
    seed: int,
    drain_s: float,
) -> None:
    from engine import Ruleset

    assert isinstance(ruleset, Ruleset)
    referee = Referee(config)
    for name, token in tokens.items():
        referee.add_bot(name, token)
    server, bound = await start_server(referee, host, port, tls)
    click.echo(f"arena referee listening on {host}:{bound}", err=False)
    click.echo(f"port {bound}")
    lobby = Lobby(referee, ruleset, seed=seed, max_matches=max_matches)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    lobby_task = asyncio.create_task(lobby.run())
    stop_task = asyncio.create_task(stop.wait())
    await asyncio.wait({lobby_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    if stop.is_set():
        log.warning("stopping: no new matches; %d running may finish", lobby.running)
        lobby.stop()
        try:
            await asyncio.wait_for(asyncio.shield(lobby_task), drain_s)
        except TimeoutError:
            await lobby.cancel_running()
            await lobby_task
    stop_task.cancel()
    await server.stop(1.0)
    done = len(lobby.records)
    click.echo(f"{done} match(es) played; records in {config.record_dir}")
