"""A self-signed certificate for localhost, made with openssl (the test is skipped without it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def make_cert(
    where: Path, cert: str = "arena.pem", key: str = "arena.key", names: str = "DNS:localhost"
) -> tuple[Path, Path]:
    """Write a self-signed certificate for ``localhost`` (or the subjectAltName ``names``)
    and its key into ``where``."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a certificate")
    where.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = where / cert, where / key
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key_path), "-out", str(cert_path), "-subj", "/CN=localhost",
         "-addext", f"subjectAltName={names}"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert_path, key_path
