"""`mirage` command line: one subcommand per pipeline stage, imported only when used."""

from __future__ import annotations

import importlib
import sys

import click

from mirage import __version__

# name -> "module:attribute" of a click command. Stages are imported lazily so that
# `mirage corpus` never imports torch or an API SDK.
COMMANDS: dict[str, str] = {
    "params": "mirage.params_cli:params",
    "corpus": "mirage.corpus.cli:corpus",
    "label": "mirage.label.cli:label",
    "metrics": "mirage.metrics.cli:metrics",
    "validate": "mirage.validation.cli:validate",
    "report": "mirage.report.cli:report",
    "render": "mirage.render.cli:render",
    "probe": "mirage.probe.cli:probe",
    "generate": "mirage.generate.cli:generate",
    "estimate": "mirage.generate.cli:estimate",
    "leaderboard": "mirage.leaderboard.cli:leaderboard",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mirage")
def cli() -> None:
    """MIRAGE: audit anti-Muslim bias in LLMs across direct completion (C1), chain-of-thought
    (C2), agentic decisions (C3) and time-coupled retrieval.

    Stages, in pipeline order: corpus -> render -> generate -> label -> metrics -> report.
    Every stage reads and writes files under results/ and takes its settings from params.yaml.
    """


def main() -> None:
    from mirage.io import DataError
    from mirage.params import ParamsError

    try:
        cli(standalone_mode=True)
    except (ParamsError, DataError) as exc:  # pragma: no cover - click exits before here normally
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
