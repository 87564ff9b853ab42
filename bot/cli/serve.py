"""`traindoc serve`: run the Slack app."""

from __future__ import annotations

from typing import Annotated

import typer

from bot.cli.common import app, fail


@app.command()
def serve(
    socket: Annotated[
        bool, typer.Option("--socket", help="Socket Mode (needs SLACK_BOT_TOKEN, SLACK_APP_TOKEN).")
    ] = False,
    http: Annotated[
        bool,
        typer.Option("--http", help="HTTP mode (needs SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET)."),
    ] = False,
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 3000,
    log_level: Annotated[
        str, typer.Option("--log-level", help="debug, info, warning or error.")
    ] = "info",
    log_json: Annotated[
        bool, typer.Option("--log-json", help="Log one JSON object per line.")
    ] = False,
) -> None:
    """Run the Slack app."""
    if socket and http:
        fail("choose one of --socket and --http")
    from bot.slack.serve import load_settings
    from bot.slack.serve import serve as run

    run(
        load_settings(),
        mode="http" if http else "socket",
        host=host,
        port=port,
        log_level=log_level,
        log_json=log_json,
    )
