"""Shared fixtures: the repository root, the CLI to compare with, a private
embedding cache."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _private_embedding_cache(tmp_path_factory, monkeypatch):
    # SEMANTIC packs cache embeddings; keep the tests' out of the user's cache.
    monkeypatch.setenv("TRIBUNAL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def plugin_dir() -> Path:
    """Where `cargo build` put the example plugins (scripts/test builds them)."""
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug"


@pytest.fixture
def panicky_pack(tmp_path) -> Path:
    """A pack folder whose only metric is the fixture plugin that panics on an
    output containing "panic" (it needs plugin consent to load)."""
    (tmp_path / "pack.yaml").write_text(
        "name: panicky\nversion: 1.0.0\ncomponents: [p.yaml]\n"
        "pipeline:\n  metrics:\n    - use: p\n"
    )
    (tmp_path / "p.yaml").write_text(
        "kind: metric\nname: p\n"
        "implementation: { plugin: { library: tribunal_fixture_sdk, component: panics } }\n"
    )
    return tmp_path


@pytest.fixture(scope="session")
def cli():
    """Runs `tribunal` (TRIBUNAL_BIN, else `cargo run`) from the repository root
    and returns its stdout's JSON lines, parsed (or as text with raw=True)."""
    binary = os.environ.get("TRIBUNAL_BIN")
    command = [str(ROOT / binary)] if binary else ["cargo", "run", "-q", "--"]

    def run(*args: str, raw: bool = False) -> list:
        done = subprocess.run(
            [*command, *args], cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert done.returncode in (0, 1), done.stderr
        lines = done.stdout.splitlines()
        return lines if raw else [json.loads(line) for line in lines]

    return run
