"""The package's build backend: maturin's, which first tells the user that
installing compiles the Rust engine.

pip shows nothing a build backend prints unless it runs with `-v`, and the
first build from a clone takes minutes: without a word, that reads as a hang.
So the first hook pip calls writes one line to the terminal itself (when there
is one), then every hook is maturin's.
"""

import sys

import maturin
from maturin import *  # noqa: F401,F403 (the PEP 517 hooks pip calls)

MESSAGE = (
    "tribunal: compiling the Rust engine from source, in release mode "
    "(about 4 minutes on 2 cores the first time; `pip install -v` shows the compiler)\n"
)


def announce(terminal="/dev/tty"):
    """Writes MESSAGE to the terminal, else to stderr (which pip shows with -v)."""
    try:
        with open(terminal, "w", encoding="utf-8") as tty:
            tty.write(MESSAGE)
    except OSError:
        sys.stderr.write(MESSAGE)


def get_requires_for_build_wheel(config_settings=None):
    announce()
    return maturin.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings=None):
    announce()
    return maturin.get_requires_for_build_editable(config_settings)
