"""`mirage params`: validate params.yaml and list every setting with its default and meaning."""

from __future__ import annotations

import click

from mirage.params import ParamsError, describe, load_params


@click.command()
@click.option("--params", "params_path", default="params.yaml", show_default=True, type=click.Path(dir_okay=False))
@click.option("--list", "list_fields", is_flag=True, help="List every key with its default and description.")
def params(params_path: str, list_fields: bool) -> None:
    """Validate params.yaml (exit 2 naming each bad key and its allowed values)."""
    if list_fields:
        for key, default, desc in describe():
            click.echo(f"{key:45s} {default:25s} {desc}")
        return
    try:
        load_params(params_path)
    except ParamsError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{params_path}: ok")
