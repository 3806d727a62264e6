"""Checks of htoe-bridge --json summaries, shared by the bridge tests:
`from summary_check import last_json, check, done` (the test puts this
directory on sys.path)."""
import json
import sys

_failed = []


def last_json(name):
    """The last JSON line of NAME.out (the process's --json summary)."""
    return json.loads([l for l in open(name + ".out") if l.startswith("{")][-1])


def check(cond, msg):
    """Print ok/FAIL with msg; remember a failure."""
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        _failed.append(msg)


def done():
    """Exit 1 if any check failed, else 0."""
    sys.exit(1 if _failed else 0)
