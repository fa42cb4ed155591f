"""Measure how long collecting a 2,000-case file takes (the issue's target: well under 2 s).

Run: .venv/bin/python benchmarks/collection_speed.py [N]
It writes a synthetic case file of N valid cases to a temporary folder, then times
`pytest --bench-round=2 --collect-only -q` on it three times and prints the best and the
time spent loading and validating the file alone.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers import casefile


def main(count: int = 2000) -> None:
    from pytest_obelize_bench.casefile.cases import load_case_file

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        rows = [casefile.case_row(f"owner{i:05d}", "repo", split="dev" if i % 3 else "holdout") for i in range(count)]
        path = casefile.write(root / "cases" / "cases.yaml", casefile.case_file(rows))
        started = time.perf_counter()
        load_case_file(path)
        load_s = time.perf_counter() - started
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "--bench-round=2", "--collect-only", "-q", "-p", "no:cacheprovider"],
                cwd=root,
                capture_output=True,
                text=True,
                check=False,
            )
            timings.append(time.perf_counter() - started)
            items = sum("::" in line for line in done.stdout.splitlines())
            if items != count:
                raise SystemExit(
                    f"collected {items} items, expected {count}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
                )
        print(
            f"{count} cases: load+validate {load_s:.2f} s; pytest --collect-only best {min(timings):.2f} s "
            f"(runs: {', '.join(f'{t:.2f}' for t in timings)}; includes interpreter start-up)"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
