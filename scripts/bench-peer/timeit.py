#!/usr/bin/env python3
"""Runs one command and appends its wall time and CPU time to a TSV file:

    timeit.py TIMES_TSV LABEL OUTPUT_FILE -- COMMAND [ARGS...]

The line is LABEL, wall seconds, CPU seconds. CPU time is user + system of
the whole process tree: this process becomes a child subreaper
(PR_SET_CHILD_SUBREAPER), so a grandchild whose parent did not wait for it
(a plugin process, QMD's launcher's node child) is re-parented here and
reaped, and getrusage(RUSAGE_CHILDREN) counts every process that ran. Wall
time ends when COMMAND exits; descendants still running then are waited
for (at most 60 s) only to count their CPU. The command's stdout and stderr
go to OUTPUT_FILE. Exits with the command's status.
"""
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main():
    tsv, label, out = sys.argv[1], sys.argv[2], sys.argv[3]
    assert sys.argv[4] == "--", "usage: timeit.py TIMES_TSV LABEL OUTPUT_FILE -- COMMAND..."
    cmd = sys.argv[5:]
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the CPU time may miss orphaned grandchildren
    with open(out, "ab") as f:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        rc = p.wait()
        wall = time.perf_counter() - t0
    deadline = time.monotonic() + 60
    while True:  # reap re-parented descendants
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                print(f"timeit: {label}: descendants still running after 60 s; their CPU is not counted", file=sys.stderr)
                break
            time.sleep(0.05)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    with open(tsv, "a") as f:
        f.write(f"{label}\t{wall:.6f}\t{cpu:.6f}\t{rc}\n")
    sys.exit(rc)


if __name__ == "__main__":
    main()
