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


def test_without_a_terminal_the_line_reaches_pip_s_own_stderr(tmp_path):
    """pip runs the hook in a child whose stderr it captures: the line goes to
    pip's stderr (a CI log), once, not only to the captured pipe."""
    import subprocess
    import sys

    pytest.importorskip("maturin")
    log = tmp_path / "ci.log"
    child = (
        "import importlib.util, sys;"
        f"spec = importlib.util.spec_from_file_location('b', {str(BACKEND)!r});"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m);"
        f"m.announce({str(tmp_path / 'no' / 'tty')!r})"
    )
    # The "pip": its stderr is the log; the hook's stderr is a pipe it keeps.
    pip = (
        "import subprocess, sys;"
        f"r = subprocess.run([sys.executable, '-c', {child!r}], stderr=subprocess.PIPE);"
        "sys.exit(r.returncode)"
    )
    log.write_text("earlier lines of the log\n")
    with open(log, "a") as stderr:
        subprocess.run([sys.executable, "-c", pip], stderr=stderr, check=True)
    text = log.read_text()
    assert text.startswith("earlier lines of the log\n"), "the log is kept"
    assert text.count("compiling the Rust engine") == 1
