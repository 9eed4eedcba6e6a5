#!/usr/bin/env python3
"""Runs scikit-learn's anchor and onelearn-bench on the same data in one run and prints ratios.

usage: bench/compare.py DATADIR WORKLOAD... [--bench build-release/bench/onelearn-bench] [--ranks 2]

DATADIR is what bench/anchors/make_data.py wrote. scikit-learn must be importable by
/usr/bin/python3: source bench/anchors/skl-env.sh first. Each workload is timed by both
sides back to back, so machine drift affects both alike. Prints one JSON line per workload:
{"workload", "sklearn_seconds", "onelearn_local_seconds", "speedup_local", ...quality}.
No numpy needed here: this script only runs the two programs and pairs their lines.
"""
import json, os, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHOR = os.path.join(HERE, "anchors", "sklearn_bench.py")


def sklearn(data, workload):
    out = subprocess.run(["/usr/bin/python3", ANCHOR, data, workload], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[1]), float(out[2])


def onelearn(bench, data, workload, ranks):
    cmd = [bench, "--data", data, workload]
    if ranks > 1:
        # One OpenMP thread per rank: 2 ranks already fill the 2 cores of the reference machine.
        flags = ["--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none",
                 "-x", "OMP_NUM_THREADS=1"]
        if os.geteuid() == 0:
            flags.append("--allow-run-as-root")
        cmd = ["mpirun", "-np", str(ranks), *flags, bench, "--data", data, "--policy", "mpi", workload]
    line = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[0]
    result = json.loads(line)
    if "error" in result:
        return None, None
    return result["seconds"], result["quality"]


def main():
    args = sys.argv[1:]
    bench = os.path.join(HERE, "..", "build-release", "bench", "onelearn-bench")
    ranks = 2
    if "--bench" in args:
        i = args.index("--bench"); bench = args[i + 1]; del args[i:i + 2]
    if "--ranks" in args:
        i = args.index("--ranks"); ranks = int(args[i + 1]); del args[i:i + 2]
    data, workloads = args[0], args[1:]
    have_mpi = shutil.which("mpirun") is not None
    for w in workloads:
        sk_s, sk_q = sklearn(data, w)
        ol_s, ol_q = onelearn(bench, data, w, 1)
        row = {"workload": w, "sklearn_seconds": sk_s, "sklearn_quality": sk_q,
               "onelearn_local_seconds": ol_s, "onelearn_local_quality": ol_q,
               "speedup_local": None if ol_s is None else round(sk_s / ol_s, 2)}
        if have_mpi and ranks > 1 and ol_s is not None:
            mp_s, mp_q = onelearn(bench, data, w, ranks)
            row.update({f"onelearn_mpi{ranks}_seconds": mp_s, f"onelearn_mpi{ranks}_quality": mp_q,
                        f"speedup_mpi{ranks}": round(sk_s / mp_s, 2)})
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
