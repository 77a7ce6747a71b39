"""`mirage` command line: one subcommand per pipeline stage, imported only when used."""

from __future__ import annotations

import importlib
import os
import sys

import click

from mirage import __version__
from mirage.untrusted import clean

# name -> "module:attribute" of a click command. Stages are imported lazily so that
# `mirage corpus` never imports torch or an API SDK.
COMMANDS: dict[str, str] = {
    "params": "mirage.params_cli:params",
    "corpus": "mirage.corpus.cli:corpus",
    "label": "mirage.label.cli:label",
    "metrics": "mirage.metrics.cli:metrics",
    "compare": "mirage.compare.cli:compare",
    "over-time": "mirage.compare.cli:over_time",
    "judges": "mirage.compare.cli:judges",
    "validate": "mirage.validation.cli:validate",
    "judge": "mirage.judges.cli:judge",
    "report": "mirage.report.cli:report",
    "render": "mirage.render.cli:render",
    "probe": "mirage.probe.cli:probe",
    "generate": "mirage.generate.cli:generate",
    "estimate": "mirage.estimate:estimate",
    "dvc-yaml": "mirage.dvc_yaml:dvc_yaml",
    "devices": "mirage.devices:devices",
    "audit": "mirage.audit:audit",
    "leaderboard": "mirage.leaderboard.cli:leaderboard",
}


class BadInput(click.ClickException):
    """A bad params or data file: one line naming file, line and field; exit 2 (like a usage error)."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(clean(message))


class EnvironmentFailure(click.ClickException):
    """The machine, not the input, failed (disk full, out of memory, no permission): one line, exit 1."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(clean(message))


def environment_message(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "out of memory (environment failure; free memory or lower the batch sizes, then rerun: nothing is lost)"
    where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
    what = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"{where}{what} (environment failure; fix it and rerun: completions already stored are kept)"


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
        wrapped by a command in a ClickException, becomes BadInput: one message, exit 2, no traceback. A failure
        of the machine (OSError: disk full, permissions; MemoryError) is one message, exit 1."""
        bad = _bad_input_types()
        try:
            return super().invoke(ctx)
        except BadInput:
            raise
        except click.UsageError as exc:  # one line, like every other failure (click would add the usage text)
            where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
            raise BadInput(exc.format_message() + where) from None
        except click.ClickException as exc:
            if isinstance(exc.__context__, bad) and not isinstance(exc, click.UsageError):
                raise BadInput(exc.format_message()) from None
            exc.message = clean(exc.message)
            raise
        except bad as exc:
            raise BadInput(_one_line(exc)) from None
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise BadInput(f"{exc.filename}: {exc.strerror}") from None
        except (OSError, MemoryError) as exc:
            raise EnvironmentFailure(environment_message(exc)) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return _guard_files(getattr(importlib.import_module(module), attr))


def _regular_files_only(ctx: click.Context, param: click.Parameter, value):  # noqa: ANN001, ANN202 - click's callback
    """A FILE option naming an existing FIFO, device or socket is refused before the command opens it (it could block
    the command forever or stream without end)."""
    import stat

    from mirage.io import DataError

    for v in value if isinstance(value, tuple) else (value,):
        if isinstance(v, str) and v != "-":
            try:
                mode = os.stat(v).st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                from mirage.untrusted import _kind

                what = f"option {param.opts[0]}" if isinstance(param, click.Option) else f"argument {param.human_readable_name}"
                raise DataError(f"{v}: {_kind(mode)}, not a regular file; {what} takes a plain file")
    return value


def _guard_files(cmd: click.Command) -> click.Command:
    """Give every FILE option of `cmd` (and of its subcommands) the regular-file check, once."""
    if getattr(cmd, "_files_guarded", False):
        return cmd
    for param in cmd.params:
        if isinstance(param.type, click.Path) and not param.type.dir_okay:
            inner = param.callback
            param.callback = (lambda c, p, v, inner=inner: (inner(c, p, _regular_files_only(c, p, v)) if inner
                                                              else _regular_files_only(c, p, v)))
    for sub in getattr(cmd, "commands", {}).values():
        _guard_files(sub)
    cmd._files_guarded = True
    return cmd


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
        cli(standalone_mode=True, prog_name="mirage")
    except _bad_input_types() as exc:
        click.echo(f"Error: {clean(_one_line(exc))}", err=True)
        sys.exit(2)
    except (OSError, MemoryError) as exc:
        click.echo(f"Error: {clean(environment_message(exc))}", err=True)
        sys.exit(1)

