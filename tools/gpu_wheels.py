"""Downloads into .whl/ the wheels a GPU machine lacks to run dflow and its tests (tools/gpu_wheels.sh).

    python tools/gpu_wheels.py [--dest .whl] [--present FILE] [--dry-run]

The GPU machines this project borrows (docs: the device tool's KINDS.md, 'nvidia-h200') have Python
3.12 with numpy, cupy, JAX, PyTorch, pytest... but no network, and lack dask, distributed, zarr and
others dflow needs. This script, run where the package registries can be reached, resolves the
closure of pyproject's `dependencies` plus the `test` extra over the wheels' own `Requires-Dist`
(markers evaluated for CPython 3.12 on Linux x86-64, extras followed), leaves out what the image
already has (PRESENT below, or `--present FILE`: one name a line), and downloads one wheel of each
(`pip download --no-deps --only-binary=:all:` for cp312 manylinux x86-64) into `--dest`.

Versions: the one installed in the interpreter running this script when it has the package (the
versions this checkout is tested with), else the newest that pip finds for 3.12. Re-runnable: a
wheel already in `--dest` at the chosen version is kept, other wheels there (other versions, or
packages no longer needed) are removed, so the folder always holds one version of each; the
machine then installs them with `pip install --no-index --no-deps --target DIR .whl/*.whl`.
Prints one line per package (fetched / kept / present in the image) and a total.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from pip._vendor.packaging.markers import default_environment
from pip._vendor.packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]

# The 'cuda' image's packages (the device tool's KINDS.md, "Python packages already there",
# read on 2026-11-17). Normalized names (PEP 503). Anything here is not carried.
PRESENT = """
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build
certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings
cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils
execnet filelock flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet
httpcore httpx huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax
jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning
lightning-utilities linear-operator lineax llvmlite lxml markdown markdown-it-py markupsafe matplotlib
mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch mypy-extensions nanobind
narwhals networkx ninja numba numba-cuda numpy numpyro nvidia-cublas nvidia-cuda-cupti
nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile nvidia-curand
nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink
nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript opencv-python-headless optax
opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy peft pillow pip
pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments
pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock
pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu
safetensors scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece
sentence-transformers setuptools shellingham simplejson six sortedcontainers statsmodels sympy
tabulate tensorboard tensorboard-data-server tensorstore threadpoolctl tifffile tiktoken timm
tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics torchvision tqdm
transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig
werkzeug wheel wrapt xarray xxhash yarl zipp
""".split()

# cp312 wheels for Linux x86-64: pip matches manylinux_2_N exactly, so every N the image's glibc
# (Ubuntu 24.04, 2.39) runs is named; pure-Python wheels (py3-none-any) match any of them.
PLATFORMS = (["manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64"]
             + [f"manylinux_2_{n}_x86_64" for n in range(5, 40)])
TARGET_ENV = dict(default_environment(), python_version="3.12", python_full_version="3.12.3",
                  implementation_name="cpython", platform_python_implementation="CPython",
                  sys_platform="linux", platform_system="Linux", platform_machine="x86_64",
                  os_name="posix")


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def top_requirements(pyproject=ROOT / "pyproject.toml"):
    """pyproject's `dependencies` and its `test` extra, as Requirements."""
    project = tomllib.loads(Path(pyproject).read_text())["project"]
    return [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]


def installed_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def wheel_name_version(path):
    """(normalized name, version) of a wheel file name (PEP 427: NAME-VERSION-...whl)."""
    name, version = Path(path).name.split("-")[:2]
    return normalize(name), version


def requires_dist(wheel):
    """The `Requires-Dist` lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode("utf-8", "replace")
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


def applies(req, extras):
    """Whether `req` (a Requires-Dist) is needed on the target for the requested `extras`."""
    if req.marker is None:
        return True
    return any(req.marker.evaluate(dict(TARGET_ENV, extra=e)) for e in [""] + sorted(extras))


def download(spec, dest, fallback=None):
    """Runs pip download for one requirement string; returns (the wheel it wrote or kept, whether
    it was fetched now). When `spec` has no cp312 wheel, `fallback` (a looser spec) is tried."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "--python-version", "3.12", "--implementation", "cp", "-d", str(dest), spec]
    for p in PLATFORMS:
        cmd += ["--platform", p]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0 and fallback is not None:
        print(f"  note     {spec} has no cp312 manylinux wheel: taking {fallback}", flush=True)
        return download(fallback, dest)
    if out.returncode != 0:
        raise SystemExit(f"gpu_wheels: pip download {spec} failed:\n{out.stderr.strip()[-2000:]}")
    text = out.stdout + out.stderr
    found = re.findall(r"(?:Saved|File was already downloaded) (\S+\.whl)", text)
    if not found:
        raise SystemExit(f"gpu_wheels: pip download {spec} named no wheel:\n{text[-2000:]}")
    return Path(found[-1]), "already downloaded" not in text


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dest", default=str(ROOT / ".whl"), help="wheel folder (default: .whl in the checkout)")
    p.add_argument("--present", default=None, help="a file of the image's package names, one a line "
                   "(default: the list in this script)")
    p.add_argument("--dry-run", action="store_true", help="resolve and print, remove nothing")
    args = p.parse_args(argv)
    present = set(map(normalize, PRESENT))
    if args.present:
        present = {normalize(line.split()[0]) for line in Path(args.present).read_text().splitlines()
                   if line.strip() and not line.startswith("#")}
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    have = {wheel_name_version(w): w for w in dest.glob("*.whl")}

    queue = [(r, "dflow") for r in top_requirements()]
    extras_of, wheels, skipped, order = {}, {}, {}, []
    while queue:
        req, parent = queue.pop(0)
        if not applies(req, extras_of.get(parent, set())):
            continue
        name = normalize(req.name)
        if name == "dflow":  # dflow[...] inside its own extras
            continue
        if name in present:
            skipped.setdefault(name, parent)
            continue
        new_extras = set(req.extras) - extras_of.get(name, set())
        if name in wheels and not new_extras:
            continue
        extras_of.setdefault(name, set()).update(req.extras)
        if name not in wheels:
            version = installed_version(req.name)
            if version is not None and version not in req.specifier:
                version = None
            kept = next((w for (n, v), w in have.items() if n == name and (version is None or v == version)), None)
            if kept is not None and (version is not None or req.specifier.contains(wheel_name_version(kept)[1])):
                wheels[name], status = kept, "kept"
            else:
                spec = f"{req.name}=={version}" if version else f"{req.name}{req.specifier}"
                wheel, fetched = download(spec, dest, fallback=f"{req.name}{req.specifier}" if version else None)
                wheels[name], status = wheel, "fetched" if fetched else "kept"
            order.append((name, status, parent))
        for line in requires_dist(wheels[name]):
            queue.append((Requirement(line), name))

    keep = {w.name for w in wheels.values()}
    removed = [w for w in dest.glob("*.whl") if w.name not in keep]
    for name, status, parent in order:
        w = wheels[name]
        print(f"  {status:8} {w.name}  ({w.stat().st_size / 1e6:.1f} MB; for {parent})")
    for name, parent in sorted(skipped.items()):
        print(f"  present  {name}  (in the GPU image; for {parent})")
    for w in removed:
        print(f"  {'stale' if args.dry_run else 'removed'}  {w.name}  (not needed, or another version)")
        if not args.dry_run:
            w.unlink()
    total = sum(w.stat().st_size for w in wheels.values())
    print(f"gpu_wheels: {len(wheels)} wheels, {total / 1e6:.1f} MB in {dest} "
          f"({sum(s == 'fetched' for _, s, _ in order)} fetched now); {len(skipped)} packages left to the image")
    return 0


if __name__ == "__main__":
    sys.exit(main())
