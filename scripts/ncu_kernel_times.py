#!/usr/bin/env python3
"""Summarises an Nsight Compute CSV (ncu --csv --metrics
gpu__time_duration.sum,dram__bytes_read.sum ...) per kernel and grid: how
many launches, mean time, mean DRAM bytes read and the read rate, so that a
decode step's kernels can be set against the GPU's read bandwidth.

    python3 scripts/ncu_kernel_times.py ncu.csv [READ_GBPS]
"""
import csv
import sys
from collections import defaultdict

TIME_UNITS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0, "second": 1.0}
BYTE_UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def read_launches(path):
    """{launch id: {"name", "grid", "seconds", "bytes"}} from ncu's long CSV."""
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    launches = {}
    for row in csv.DictReader(lines):
        launch = launches.setdefault(row["ID"], {"name": row["Kernel Name"][:60], "grid": row["Grid Size"]})
        value = float(row["Metric Value"].replace(",", ""))
        if row["Metric Name"] == "gpu__time_duration.sum":
            launch["seconds"] = value * TIME_UNITS[row["Metric Unit"]]
        elif row["Metric Name"] == "dram__bytes_read.sum":
            launch["bytes"] = value * BYTE_UNITS[row["Metric Unit"]]
    return launches


def main():
    launches = read_launches(sys.argv[1])
    read_gbps = float(sys.argv[2]) if len(sys.argv) > 2 else None
    groups = defaultdict(list)
    for launch in launches.values():
        groups[(launch["name"], launch["grid"])].append(launch)
    total = sum(l.get("seconds", 0) for l in launches.values())
    print(f"{len(launches)} launches, {total * 1e6:.1f} us in all")
    rows = sorted(groups.items(), key=lambda kv: -sum(l.get("seconds", 0) for l in kv[1]))
    for (name, grid), ls in rows:
        t = sum(l.get("seconds", 0) for l in ls) / len(ls)
        b = sum(l.get("bytes", 0) for l in ls) / len(ls)
        rate = b / t / 1e9 if t > 0 else 0
        share = f" {rate / read_gbps:.2f} of read bw" if read_gbps else ""
        print(f"{len(ls):4d} x {t * 1e6:8.2f} us {b / 1e6:9.2f} MB {rate:7.0f} GB/s{share}  {name} grid {grid}")


if __name__ == "__main__":
    main()
