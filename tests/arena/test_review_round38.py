"""Round 38's review of the last session's product diff (8a9190d..a74596c): the defects it
found, each with the test that failed before its fix, and the behaviour it checked and
pinned."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

# ------------------------------------------------------------------------ --arena targets


@pytest.mark.parametrize(
    ("value", "said"),
    [
        # gRPC: "the target uri is not valid"; the bot ended at once saying "the arena at
        # ... ended the stream: UNKNOWN: Failed to create channel"
        ("ipv4:127.0.0.1:99999", "the port must be a number from 1 to 65535"),
        ("ipv4:127.0.0.1", "ipv4: takes IPv4 addresses with their ports"),
        ("ipv4:arena:50051", "'arena' is none: a name goes after dns:"),
        ("ipv4:[::1]:50051", "an IPv6 address goes after ipv6:"),
        ("ipv4:127.0.0.1:1,bad", "ipv4: takes IPv4 addresses with their ports"),
        ("ipv4:0127.0.0.1:1", "'0127.0.0.1' is none"),
        ("ipv6:::1", "ipv6: takes IPv6 addresses in brackets with their ports"),
        ("ipv6:[::1]", "ipv6: takes IPv6 addresses in brackets with their ports"),
        ("ipv6:127.0.0.1:50051", "ipv6: takes IPv6 addresses in brackets"),
        ("ipv4:///127.0.0.1:99999", "the port must be a number from 1 to 65535"),
        # gRPC: "Failed to parse port", retried for --retry-for seconds (10 minutes)
        ("dns:arena:abc", "the port must be a number from 1 to 65535"),
        ("dns:localhost:65536", "the port must be a number from 1 to 65535"),
        ("dns:///arena:abc", "the port must be a number from 1 to 65535"),
        ("dns:[::1]:x", "the port must be a number from 1 to 65535"),
    ],
)
def test_a_grpc_target_gRPC_cannot_use_is_refused_at_once(value: str, said: str) -> None:
    """Defect: round 37 let ``--arena`` take ``ipv4:``/``ipv6:``/``dns:`` targets without
    ``//`` but checked only their characters: ``ipv4:127.0.0.1:99999``, ``ipv4:arena:1``,
    ``ipv6:::1`` (no port: gRPC wants one) went to gRPC, which cannot make a channel of
    them, and the bot ended saying "the arena at ipv4:... ended the stream" (nothing had
    answered); ``dns:arena:abc`` was retried for --retry-for seconds as "Failed to parse
    port". Each such address (in the ``:///`` form too) is a usage error naming it, exit 2,
    as a bad HOST:PORT is."""
    from sdk.cli import _address_problem
    from sdk.cli import main as arena_bot

    problem = _address_problem(value)
    assert problem is not None and said in problem and repr(value) in problem, problem
    r = CliRunner().invoke(
        arena_bot,
        ["run", "random", "--arena", value, "--token", "token-aaaa-1", "--retry-for", "1"],
    )
    assert r.exit_code == 2, r.output
    assert "--arena" in r.output and said in " ".join(r.output.split()), r.output


@pytest.mark.parametrize(
    "value",
    [
        "ipv4:127.0.0.1:50051",
        "ipv4:127.0.0.1:50051,127.0.0.2:50052",
        "ipv4:///127.0.0.1:1",
        "ipv6:[::1]:50051",
        "ipv6:[fe80::1%eth0]:50051",  # a zone id
        "ipv6:[fe80::1%25eth0]:50051",  # the same, URI-escaped
        "ipv6:///[::1]:1",
        "dns:arena:50051",
        "dns:arena",  # (gRPC's port 443)
        "dns:[::1]:50051",
        "dns:///arena.example.org:50051",
        "dns://8.8.8.8/arena.example.org:50051",
        "DNS:arena:50051",  # (gRPC reads a scheme in any case; "DNS:///..." passed already)
        "dns:50051",  # (a host named dns, as before)
        "[fe80::1%eth0]:50051",
        "localhost:50051",
    ],
)
def test_grpc_targets_gRPC_connects_to_are_taken(value: str) -> None:
    """Pinned: every form gRPC makes a channel of still passes the check (IPv6 zone ids,
    address lists, the scheme in capitals, a ``dns:`` target without a port)."""
    from sdk.cli import _address_problem

    assert _address_problem(value) is None


# ------------------------------------------------------------------------ launch errors


def test_a_dangling_symlink_chain_names_where_it_leads(tmp_path: Path) -> None:
    """Defect: a bot program that is a link to a link whose file is gone (``bot -> current``,
    ``current -> releases/5/bot`` removed) was said to be "a symbolic link to current, which
    is not there": ``current`` is there (``ls`` shows it). The end of the chain, the file
    missing, is named."""
    from arena.tournament.runner import _launch_error

    (tmp_path / "bot").symlink_to("current")
    (tmp_path / "current").symlink_to("releases/5/bot")
    with pytest.raises(FileNotFoundError) as ei:
        subprocess.Popen(["./bot"], cwd=tmp_path)
    said = _launch_error("./bot", ei.value, tmp_path)
    assert "which is not there" not in said, said
    assert f"{tmp_path / 'releases' / '5' / 'bot'}, is not there" in said, said
    assert "a symbolic link to current, itself a link" in said, said


def test_a_dangling_symlink_names_its_target_as_ls_shows_it(tmp_path: Path) -> None:
    """Pinned: a link to a file that is not there (one step) names the target as written."""
    from arena.tournament.runner import _launch_error

    (tmp_path / "bot").symlink_to("../gone/bot")
    with pytest.raises(FileNotFoundError) as ei:
        subprocess.Popen(["./bot"], cwd=tmp_path)
    said = _launch_error("./bot", ei.value, tmp_path)
    assert said.endswith("it is a symbolic link to ../gone/bot, which is not there"), said


# ------------------------------------------------------------------------ the lock


def test_the_lock_of_a_symlink_chain_and_of_a_relative_link_is_the_files_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pinned: a database reached through two links (relative ones, given as a relative
    path) is locked beside the file itself, as through its own name."""
    from arena.storage import lock_path

    real = tmp_path / "data" / "t.sqlite"
    real.parent.mkdir()
    real.touch()
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "mid.sqlite").symlink_to("../data/t.sqlite")
    (tmp_path / "runs" / "t.sqlite").symlink_to("mid.sqlite")
    monkeypatch.chdir(tmp_path)
    own = lock_path(real)
    assert own == real.with_name("t.sqlite.lock")
    assert lock_path(Path("runs/t.sqlite")) == own
    assert lock_path(Path("runs/mid.sqlite")) == own
    assert os.path.samefile(lock_path(Path("runs/../runs/t.sqlite")).parent, own.parent)


@pytest.mark.parametrize("value", ["ipv4://127.0.0.1:50051", "ipv6://h/[::1]:50051"])
def test_an_ipv4_or_ipv6_target_with_an_authority_is_refused(value: str) -> None:
    """Defect: ``ipv4://127.0.0.1:50051`` (the ``//`` of ``dns://``, the address taken for
    an authority) was let through the check; gRPC makes no channel of it ("the target uri
    is not valid") and the bot ended saying "the arena at ipv4://... ended the stream"."""
    from sdk.cli import _address_problem

    problem = _address_problem(value)
    assert problem is not None and "takes no authority" in problem, problem
    assert f"write {value.partition(':')[0]}:ADDRESS:PORT" in problem, problem


def test_a_target_grpc_makes_no_channel_of_is_not_said_to_be_the_arenas_doing() -> None:
    """Defect: a target that passes the check but of which gRPC makes no channel ended the
    bot with "the arena at X ended the stream: UNKNOWN: Failed to create channel to ...":
    no arena was reached, and none ended anything. Said as gRPC's refusal of the address
    (its words read from the gRPC installed)."""
    import grpc

    from sdk.client import _why_final

    target = "ipv4://x/127.0.0.1:1"
    channel = grpc.insecure_channel(target)
    try:
        with pytest.raises(grpc.RpcError) as ei:
            channel.unary_unary("/arena.v1.Arena/Nothing")(b"", timeout=5)
    finally:
        channel.close()
    code, details = ei.value.code(), ei.value.details()  # type: ignore[attr-defined]
    said = _why_final(code, details, target)
    assert "ended the stream" not in said, said
    assert said.startswith(f"gRPC cannot use {target} as an address ("), said
    assert "the target uri is not valid" in said, said


# ------------------------------------------------------------------------ arena serve --db


def test_a_serve_that_cannot_listen_leaves_no_unfinished_tournament(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: `arena serve --db` registers its tournament before it listens; when
    listening then failed (an address taken between the check and the bind, a TLS key gRPC
    refuses), it ended with its tournament unfinished and empty: the latest, the one
    `arena leaderboard`, replay and web show by default, hiding the results before it
    (what a run that stores nothing otherwise removes), and the next serve "found" it left
    by an arena "killed, or its machine went down". A serve that ends without playing, for
    whatever reason, leaves its tournament as a finished run would: removed if empty."""
    import arena.cli.serve as serve_module
    from arena.cli import main as arena_cli
    from arena.storage import Storage

    async def cannot_listen(*args: object) -> None:
        raise OSError(98, "Address already in use")

    monkeypatch.setattr(serve_module, "start_server", cannot_listen)
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\na = "tok-aaaa-1"\nb = "tok-bbbb-1"\nc = "tok-cccc-1"\n')
    db = tmp_path / "results.sqlite"
    Storage(db).close()  # (there before: one the serve made would be removed whole)
    r = CliRunner().invoke(
        arena_cli,
        ["serve", "--port", "0", "--tokens", str(tokens), "--record-dir", str(tmp_path / "rec"),
         "--db", str(db)],
    )  # fmt: skip
    assert r.exit_code == 1 and "cannot listen on" in r.output, r.output
    with Storage.open_readonly(db) as st:
        assert [t.id for t in st.tournaments() if t.finished_at is None] == []
    made = tmp_path / "made.sqlite"  # (not there before: removed, with its lock)
    r = CliRunner().invoke(
        arena_cli,
        ["serve", "--port", "0", "--tokens", str(tokens), "--record-dir", str(tmp_path / "rec"),
         "--db", str(made)],
    )  # fmt: skip
    assert r.exit_code == 1 and "cannot listen on" in r.output, r.output
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("made.")]


def test_a_lock_file_that_cannot_be_made_is_not_said_to_be_removable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (round 38's review): a --db in a directory this user may not write to (EACCES
    on making `<db>.lock`; root, as the tests run, may write anywhere, so it is simulated)
    said "remove it if no run uses ..." of a lock file that did not exist. Now it says the
    file cannot be made there, and what to do; a lock file that exists but cannot be opened
    still gets the advice to remove it."""
    from arena.storage import StorageError
    from arena.tournament.runner import DatabaseLock

    real_open = Path.open

    def refused(self: Path, *args: object, **kwargs: object) -> object:
        if self.suffix == ".lock":
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", refused)
    db = tmp_path / "arena.sqlite"
    with pytest.raises(StorageError) as info:
        DatabaseLock(db).acquire()
    said = str(info.value)
    assert said.startswith(f"cannot make the lock file {tmp_path / 'arena.sqlite.lock'}"), said
    assert "Permission denied" in said and "directory this user may write to" in said, said
    assert "remove it" not in said, said
    os.close(os.open(tmp_path / "arena.sqlite.lock", os.O_CREAT | os.O_WRONLY))  # (no Path.open)
    with pytest.raises(StorageError) as info:
        DatabaseLock(db).acquire()
    assert "remove it if no run uses" in str(info.value), info.value
