"""``python -m ragloop``: the same command line as ``ragloop``."""

from ragloop.cli import app

if __name__ == "__main__":
    app(prog_name="ragloop")
