"""Write pikit's snapshot of Pi's built-in model catalogs (pikit/llm/_catalog.json.gz).

    python data/model_catalog/generate.py                  # Pi 1.6.0, the version pikit ships
    python data/model_catalog/generate.py --version 1.7.0  # a later Pi

npm installs ``@earendil-works/pi-coding-agent@VERSION`` (and the pi-ai it depends on) into a
temporary folder, ``dump.mjs`` asks pi-ai for every built-in provider's models, and the
snapshot keeps only what pikit reads: each model's id, name, type when it is not a chat model,
context window, output limit and prices (with their tiers), plus the pi-coding-agent and pi-ai
versions and the time the catalogs were generated. The file is gzip'd compact JSON, written the
same way byte for byte for the same catalogs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SNAPSHOT = HERE.parents[1] / "pikit" / "llm" / "_catalog.json.gz"
PACKAGE = "@earendil-works/pi-coding-agent"


def dump(version: str) -> dict:
    """Install Pi ``version`` into a temporary folder and return its catalogs, as dump.mjs prints them."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        sys.exit("generate.py: npm and node are needed (Debian: apt-get install npm)")
    with tempfile.TemporaryDirectory(prefix="pikit-catalog-") as folder:
        subprocess.run([npm, "install", "--prefix", folder, "--no-audit", "--no-fund", "--ignore-scripts",
                        "--loglevel=error", f"{PACKAGE}@{version}"], check=True, stdout=subprocess.DEVNULL)
        return catalog_of(Path(folder), version)


def catalog_of(folder: Path, version: str) -> dict:
    """The catalogs of the Pi ``version`` installed in ``folder``, in the snapshot's shape."""
    script = folder / "dump.mjs"
    shutil.copyfile(HERE / "dump.mjs", script)
    out = subprocess.run([shutil.which("node") or "node", str(script)], check=True, capture_output=True, text=True,
                         cwd=folder)
    catalog = json.loads(out.stdout)
    return {"pi": version, **catalog}


def write(catalog: dict, path: Path = SNAPSHOT) -> None:
    """Write ``catalog`` as gzip'd compact JSON (no timestamp in the gzip header)."""
    data = json.dumps(catalog, separators=(",", ":"), ensure_ascii=False).encode()
    path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="1.6.0", help=f"the {PACKAGE} version (default: 1.6.0)")
    args = parser.parse_args()
    catalog = dump(args.version)
    write(catalog)
    models = sum(len(models) for models in catalog["providers"].values())
    print(f"{SNAPSHOT}: pi {catalog['pi']} (pi-ai {catalog['piAi']}, generated {catalog['generatedAt']}), "
          f"{len(catalog['providers'])} providers, {models} models, {SNAPSHOT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
