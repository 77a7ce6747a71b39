"""The profiles load where Snakemake looks for them, and the Kubernetes plugin's own job builder accepts the jobs."""

from __future__ import annotations

import json
import re
import shutil
import threading
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from test_workflow import jobs, run

from mirage.params import load_params


def test_a_plain_dry_run_loads_the_default_profile_and_starts_gpu_jobs_on_their_own_devices(root):
    # the target comes first: `--resources` takes every word after it (`... --resources gpu=8 lite` fails to parse)
    result = run(["snakemake", "lite", "-n", "--cores", "all", "--resources", "gpu=8"], root)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Using workflow specific profile profiles/default for setting default command line arguments." in out
    params = load_params(root / "params.yaml")
    seen = set()
    for job in jobs(out):
        if job["rule"].startswith("generate_"):
            model = job["wildcards"]["model"]
            gpus = params.models[model].gpus
            assert int(job["resources"]["gpu"]) == gpus
            # printshellcmds comes from the profile; the command takes its GPUs through the slot allocator
            assert f"python -m mirage devices --gpus {gpus} -- python -m mirage generate --model {model} " in job["block"]
            seen.add(model)
    assert seen == set(params.slices.lite.models)


class KubernetesApi(BaseHTTPRequestHandler):
    """Enough of the Kubernetes API server for `create_namespaced_job`: records each Job and echoes it back."""

    created: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.created.append({"path": self.path, "body": body})
        data = json.dumps(body).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def kube_api():
    server = ThreadingHTTPServer(("127.0.0.1", 0), KubernetesApi)
    KubernetesApi.created = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def plugin_executor(host: str):
    """The plugin's Executor with its real `run_job`, talking to `host`; the cluster login of `__post_init__` and
    the Snakemake command line it would wrap (format_job_exec) are left out."""
    import logging

    import kubernetes
    from snakemake_executor_plugin_kubernetes import Executor

    config = kubernetes.client.Configuration()
    config.host = host
    ex = object.__new__(Executor)
    ex.__dict__.update(
        batchapi=kubernetes.client.BatchV1Api(kubernetes.client.ApiClient(config)), namespace="mirage",
        run_namespace="run", container_image="snakemake/snakemake", privileged=False, persistent_volumes=[],
        secret_envvars={}, k8s_service_account_name=None, k8s_cpu_scalar=0.95, lock=threading.Lock(),
        logger=logging.getLogger("k8s-test"))
    ex.format_job_exec = lambda job: "snakemake --the-job"
    ex.report_job_submission = lambda info: None
    return ex


def resource_values(pairs: dict[str, str]) -> dict:
    """A dry run's `resources:` line as the values a job carries (sizes Snakemake fills in later left out)."""
    out = {}
    for key, value in pairs.items():
        if value != "<TBD>":
            out[key] = int(value) if re.fullmatch(r"-?\d+", value) else value
    return out


def test_the_kubernetes_plugin_accepts_cpu_api_and_gpu_jobs(root, tmp_path, kube_api):
    """The plugin refuses a job that declares `gpu` (0 included) without `gpu_manufacturer`; Kubernetes refuses an
    extended resource (nvidia.com/gpu) whose limit is missing or differs from its request. The profile's jobs pass
    both: the plugin builds each Job and our stand-in API server receives it."""
    shutil.copytree(root / "data", tmp_path / "data")
    result = run(["snakemake", "-n", "--profile", "workflow/profiles/kubernetes", "--default-storage-provider", "fs",
                  "--default-storage-prefix", str(tmp_path), "lite"], root)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    params = load_params(root / "params.yaml")
    kinds: dict[str, dict] = {}
    for job in jobs(out):
        model = job["wildcards"].get("model")
        kind = "cpu" if model is None else ("gpu" if params.models[model].gpus else "api")
        if job["rule"] != "lite":
            kinds.setdefault(kind, job)
    assert set(kinds) == {"cpu", "api", "gpu"}
    executor = plugin_executor(kube_api)
    for i, (kind, job) in enumerate(sorted(kinds.items())):
        res = resource_values(job["resources"]) | {"_cores": 2}
        executor.run_job(types.SimpleNamespace(resources=res, jobid=i, attempt=1, is_containerized=False))
        created = KubernetesApi.created[-1]
        assert created["path"] == "/apis/batch/v1/namespaces/mirage/jobs"
        container = created["body"]["spec"]["template"]["spec"]["containers"][0]
        requests, limits = container["resources"]["requests"], container["resources"].get("limits") or {}
        for name, value in requests.items():  # Guaranteed pods; extended resources need limit == request
            assert limits.get(name) is not None, (kind, name, container["resources"])
        gpu = requests.get("nvidia.com/gpu")
        if kind == "gpu":
            want = str(params.models[job["wildcards"]["model"]].gpus)
            assert gpu == want and limits["nvidia.com/gpu"] == want, container["resources"]
        else:
            assert gpu in (None, "0"), (kind, container["resources"])
    assert len(KubernetesApi.created) == 3


def test_a_dry_run_warns_of_a_model_the_gpu_memory_plan_refuses(root):
    result = run(["snakemake", "lite", "-n", "--cores", "all", "--resources", "gpu=8", "--config", "model_set=current"],
                 root)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "warning: params.yaml: the GPU memory plan refuses deepseek-v3.2: deepseek-ai/DeepSeek-V3.2 ships no chat" in out
