"""The Dask engine builds the same tables as the local one (a LocalCluster with two worker processes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pikit.corpus import TABLES, Corpus

pytestmark = pytest.mark.slow


def test_dask_tables_are_identical_to_local(sample_corpus: Path, tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    root = tmp_path / "sessions"
    shutil.copytree(sample_corpus, root)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        with Corpus.open(root, index=tmp_path / "dask.duckdb", client=client) as remote, \
                Corpus.open(root, index=tmp_path / "local.duckdb", workers=1) as local:
            assert remote.last_scan is not None and remote.last_scan.read_whole == 37
            for table in TABLES:
                assert remote.table(table).equals(local.table(table)), table
            for by in ("day", "session", "model"):
                assert remote.usage_rows(by, timezone="UTC") == local.usage_rows(by, timezone="UTC")
        # an append: the workers continue from the stored mark too
        target = sorted(root.glob("*/*.jsonl"))[0]
        with target.open("ab") as out:
            out.write(target.read_bytes().split(b"\n")[-2] + b"\n")
        with Corpus.open(root, index=tmp_path / "dask.duckdb", client=client) as remote, \
                Corpus.open(root, index=tmp_path / "local.duckdb", workers=1) as local:
            assert remote.last_scan is not None and remote.last_scan.read_appended == 1
            for table in TABLES:
                assert remote.table(table).equals(local.table(table)), table


def test_cli_engine_dask_local(sample_corpus: Path, tmp_path: Path) -> None:
    def usage(*extra: str) -> dict[str, object]:
        result = subprocess.run([sys.executable, "-m", "pikit", "usage", str(sample_corpus), "--by", "month", "--json",
                                 "--timezone", "UTC", *extra], capture_output=True, text=True, timeout=300, check=True)
        return json.loads(result.stdout)

    assert usage("--engine", "dask", "--scheduler", "local", "--index", str(tmp_path / "a.duckdb")) == \
        usage("--index", str(tmp_path / "b.duckdb"))
