"""`mirage` command line: one subcommand per pipeline stage, imported only when used."""

from __future__ import annotations

import importlib
import os
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
    "judge": "mirage.judge.cli:judge",
    "report": "mirage.report.cli:report",
    "render": "mirage.render.cli:render",
    "probe": "mirage.probe.cli:probe",
    "generate": "mirage.generate.cli:generate",
    "estimate": "mirage.generate.cli:estimate",
    "dvc-yaml": "mirage.dvc_yaml:dvc_yaml",
    "audit": "mirage.audit:audit",
    "leaderboard": "mirage.leaderboard.cli:leaderboard",
}


class BadInput(click.ClickException):
    """A bad params or data file: one line naming file, line and field; exit 2 (like a usage error)."""

    exit_code = 2


def _bad_input_types() -> tuple[type[BaseException], ...]:
    import yaml

    from mirage.io import DataError
    from mirage.params import ParamsError

    return DataError, ParamsError, UnicodeDecodeError, yaml.YAMLError


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"input is not valid UTF-8 ({exc.reason} at byte {exc.start}); save the file as UTF-8"
    return str(exc)


class LazyGroup(click.Group):
    def invoke(self, ctx: click.Context):
        """Run the subcommand; bad input (DataError, ParamsError, non-UTF-8, bad YAML), raised directly or
        wrapped by a command in a ClickException, becomes BadInput: one message, exit 2, no traceback."""
        bad = _bad_input_types()
        try:
            return super().invoke(ctx)
        except BadInput:
            raise
        except click.ClickException as exc:
            if isinstance(exc.__context__, bad) and not isinstance(exc, click.UsageError):
                raise BadInput(exc.format_message()) from None
            raise
        except bad as exc:
            raise BadInput(_one_line(exc)) from None

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
@click.option("--defaults", is_flag=True,
              help="Allow a missing or empty params file and use the built-in defaults (same as MIRAGE_DEFAULTS=1). "
              "Without it a missing --params file or one with no sections is an error.")
@click.option("--model-set", metavar="NAME", help="Run the named model set (params.yaml `model_sets:`, e.g. paper or current) "
              "on every slice that lists no models of its own (same as MIRAGE_MODEL_SET=NAME).")
def cli(defaults: bool, model_set: str | None) -> None:
    """MIRAGE: audit anti-Muslim bias in LLMs across direct completion (C1), chain-of-thought
    (C2), agentic decisions (C3) and time-coupled retrieval.

    Stages, in pipeline order: corpus -> render -> generate -> label -> metrics -> report.
    Every stage reads and writes the files of mirage/artefacts.py and takes its settings from params.yaml.
    Bad input (params, data files) stops with one line naming the file, line and field, exit 2.
    """
    if defaults:
        from mirage.params import DEFAULTS_ENV

        os.environ[DEFAULTS_ENV] = "1"  # also reaches Snakemake jobs started from here
    if model_set:
        from mirage.params import MODEL_SET_ENV

        os.environ[MODEL_SET_ENV] = model_set


def main() -> None:
    """Console entry point; bad input raised outside a subcommand (e.g. while importing one) also exits 2."""
    try:
        cli(standalone_mode=True)
    except _bad_input_types() as exc:
        click.echo(f"Error: {_one_line(exc)}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
