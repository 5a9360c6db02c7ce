"""The build backend says, before anything else, that installing compiles."""

import importlib.util
import pathlib

import pytest

BACKEND = pathlib.Path(__file__).resolve().parents[1] / "_backend" / "tribunal_backend.py"


def load_backend():
    pytest.importorskip("maturin")
    spec = importlib.util.spec_from_file_location("tribunal_backend", BACKEND)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_hook_says_that_it_compiles(tmp_path, capsys):
    backend = load_backend()
    terminal = tmp_path / "tty"
    backend.announce(str(terminal))
    assert terminal.read_text().startswith("tribunal: compiling the Rust engine")
    # No terminal: stderr, which pip shows with -v.
    backend.announce(str(tmp_path / "no" / "tty"))
    assert "compiling the Rust engine" in capsys.readouterr().err
    # pip's hooks are all there, maturin's.
    for hook in ("build_wheel", "build_sdist", "prepare_metadata_for_build_wheel",
                 "get_requires_for_build_wheel", "build_editable"):
        assert callable(getattr(backend, hook)), hook
