"""The package's build backend: maturin's, which first tells the user that
installing compiles the Rust engine.

pip shows nothing a build backend prints unless it runs with `-v`, and the
first build from a clone takes minutes: without a word, that reads as a hang
(a redirected CI log shows only "still running..."). So the first hook pip
calls writes one line to the terminal itself when there is one, else to pip's
own standard error (the hook runs in a child of pip, whose standard error
pip captures), then every hook is maturin's.
"""

import os
import sys

import maturin
from maturin import *  # noqa: F401,F403 (the PEP 517 hooks pip calls)

MESSAGE = (
    "tribunal: compiling the Rust engine from source, in release mode "
    "(about 4 minutes on 2 cores the first time; `pip install -v` shows the compiler)\n"
)


def announce(terminal="/dev/tty"):
    """Writes MESSAGE to the terminal; without one, to the standard error of
    the process that runs this hook (pip), which a CI log shows; else to our
    own stderr (which pip shows with -v)."""
    try:
        with open(terminal, "w", encoding="utf-8") as tty:
            tty.write(MESSAGE)
            return
    except OSError:
        pass
    if not _to_parent_stderr():
        sys.stderr.write(MESSAGE)


def _to_parent_stderr():
    """Writes MESSAGE to the parent process's standard error (Linux's /proc),
    unless that is where ours goes already; whether it did."""
    parent = f"/proc/{os.getppid()}/fd/2"
    try:
        theirs, ours = os.stat(parent), os.fstat(sys.stderr.fileno())
        if (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino):
            return False
        # Appended: a log file behind it keeps what it holds.
        with open(parent, "a", encoding="utf-8") as stream:
            stream.write(MESSAGE)
        return True
    except (OSError, ValueError):
        return False


def get_requires_for_build_wheel(config_settings=None):
    announce()
    return maturin.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings=None):
    announce()
    return maturin.get_requires_for_build_editable(config_settings)
