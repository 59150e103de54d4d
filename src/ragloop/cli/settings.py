"""``ragloop settings``: every setting with its environment variable, flags and default."""

from __future__ import annotations

import typer

from ragloop.cli import app
from ragloop.cli.flags import settings_table


@app.command("settings")
def settings_command() -> None:
    """Print every setting: its environment variable, flags, default and what it does."""
    typer.echo(settings_table(app), nl=False)
