"""redline's own overhead per hook call (``redline hook claude``), against a bare start.

Run from the repository root:  uv run python bench/hooks.py [--calls 100]
Targets (issue 49, docs/performance.md): start → queued + decision → exit for a person's
decision ≤ 3× a bare start of the same interpreter; decision → exit ≤ 15 ms; each step
this round added ≤ 3 ms per call; a pass-through ≤ 2× a bare start.

Every call is a real process started as the agent starts it: the installed command
(``…/redline hook claude``, the script whose first line names the interpreter and its
flags) gets a recorded payload on stdin. Each round runs, interleaved so that the load of
the moment weighs on all of them alike:

* **bare start**: the same interpreter with the same flags running nothing
  (``python -c pass``), start → exit: the floor every row is compared with;
* **start → queued**: the process starts → its action's record is in the workspace queue
  (seen by looking at the queue's folder every millisecond; a watcher would add its own
  debounce). The record's two fsyncs (the file, then its folder) are timed beside it, in
  this process, writing the record just queued again on the same disk: disk latency is
  visible on its own line, not hidden in the start-up;
* **decision → exit**: a decision is made here (discard through ``resolve_queued``, on one
  event loop kept for the whole run, as a running dashboard's is) → the hook has printed
  its answer and exited. The decision comes ``--think`` ms after queueing
  (500 by default), as a person's does: a hook loads what only a decision needs (the event
  loop, the queue's watch, the resolution machinery) while the person reads. ``--think 0``
  decides at once, the worst case, which pays for those loads too;
* **rule-decided**: a Write that a review rule (user ``rules.toml``) discards at push,
  start → exit;
* **pass-through**: a ``Read``, which needs no review, start → exit;
* **prompt-time call**: ``UserPromptSubmit`` (only the outbox is looked at), start → exit.

Every row but the bare start runs twice per round, interleaved: **cold**, a process per
call (``REDLINE_HOOK_SERVER=off``: the hook's own process answers, as before issue 49's
server), and **resident**, the same command answered by a running ``redline hook-server``
(started by the benchmark for the environments it uses, stopped at the end; the call's
process hands its streams to a warm fork of it: docs/agents.md). Both are printed, each
against the same bare start.

The steps this round added to the hook path are timed alone in this process (median per
call over ``--loops`` calls), and are inside the real calls above too: the **presence
lookup** (is a dashboard watching? a live and a dead dashboard's files in the workspace, a
dashboard over every workspace), the **outbox check** (nothing there; one entry claimed,
read and removed), the **notification** when nobody watches, the **model capture** of the
post-tool path (``drivers/hooks/agent_model.py``: the model named in Claude Code's
transcript, the recorded one of tests/fixtures) and the **revision lookup** at push
(issue 47: the session's last discarded action read and checked, for another file).
The run holds a dashboard's presence for the workspace, so no call sends a notification.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "hooks" / "claude"
REDLINE = str(Path(sys.executable).with_name("redline"))
HOOK = [REDLINE, "hook", "claude"]
#: A rule that discards the Writes of the rule-decided row (and only those) at push.
RULES = (
    '[[rule]]\nname = "bench"\ndecision = "discard"\nsources = ["hook:*"]\n'
    'paths = ["ruled-*.txt"]\nreason = "decided by a rule"\n'
)
#: Each row: its name, and the target as a multiple of a bare start or in ms.
MODES = ("cold", "resident")
ROWS = (
    ("bare start (python -c pass)", None),
    ("start -> queued", None),
    ("  of which the record's fsyncs", None),
    ("decision -> exit", "15 ms"),
    ("person's decision: queued + exit", "3x"),
    ("rule-decided, start -> exit", None),
    ("pass-through (Read), start -> exit", "2x"),
    ("prompt-time call, start -> exit", None),
)


def bare_start() -> list[str]:
    """The installed command's interpreter and its flags (its script's first line),
    running nothing."""
    first = Path(REDLINE).read_bytes().split(b"\n", 1)[0].decode()
    assert first.startswith("#!"), f"{REDLINE} is not a script"
    words = shlex.split(first[2:])
    if Path(words[0]).name == "env":  # `#!/usr/bin/env python3 -X …`
        words = words[1:]
    return [*words, "-c", "pass"]


def payload(name: str, root: Path, file_name: str) -> bytes:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    data["cwd"] = str(root)
    data["tool_input"]["file_path"] = str(root / file_name)
    return json.dumps(data).encode()


def prompt_payload(root: Path) -> bytes:
    data = json.loads((FIXTURES / "user-prompt-submit.json").read_text(encoding="utf-8"))
    data["cwd"] = str(root)
    return json.dumps(data).encode()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed_run(command: list[str], raw: bytes | None, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, input=raw, capture_output=True, env=env, check=False)
    took = time.perf_counter() - start
    assert done.returncode == 0, done
    return took


def fsyncs(folder: Path, data: bytes) -> float:
    """The record's fsyncs (file, then folder) on the queue's disk: a durable write of
    ``data`` less the same write without them."""
    from redline.workspace.queue import storage

    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        start = time.perf_counter()
        storage.write_atomic(fd, "probe.json", data, durable=False)
        loose = time.perf_counter() - start
        start = time.perf_counter()
        storage.write_atomic(fd, "probe.json", data)
        return max(0.0, time.perf_counter() - start - loose)
    finally:
        os.close(fd)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument(
        "--think", type=float, default=500.0, help="ms between queued and the decision"
    )
    parser.add_argument("--loops", type=int, default=2000, help="in-process timings' calls")
    args = parser.parse_args()
    # The hook runs from compiled modules, as an installed redline does: compile them
    # once, and let the hook processes write bytecode (some shells set
    # PYTHONDONTWRITEBYTECODE, which would make every call compile its modules again).
    import redline

    compileall.compile_dir(Path(redline.__file__).parent, quiet=1)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bare = bare_start()
    print(f"load average before: {' '.join(f'{n:.2f}' for n in os.getloadavg())}")
    print(f"hook command: {' '.join(HOOK)} (bare start: {shlex.join(bare)})")
    from redline.review.queued import resolve_queued
    from redline.workspace.queue import WorkspaceQueue

    rows = {mode: {name: [] for name, _ in ROWS} for mode in MODES}
    servers: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir="/tmp") as run:
        root = Path(tmp) / "ws"
        root.mkdir()
        # The user's state and config (known workspaces, presence, outboxes) of this run
        # only; the rule-decided calls get a config folder whose rules.toml decides them.
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"] = str(Path(tmp) / ".state")
        (Path(tmp) / "config").mkdir()
        env["REDLINE_CONFIG_DIR"] = str(Path(tmp) / "config")
        env.pop("REDLINE_QUEUE_URL", None)
        env.pop("REDLINE_HOOK_SERVER", None)
        env["XDG_RUNTIME_DIR"] = run  # a short private folder for the servers' sockets
        os.chmod(run, 0o700)
        ruled_env = {**env, "REDLINE_CONFIG_DIR": str(Path(tmp) / "ruled")}
        (Path(tmp) / "ruled").mkdir()
        (Path(tmp) / "ruled" / "rules.toml").write_text(RULES, encoding="utf-8")
        (root / ".git").mkdir()
        (root / "a.txt").write_text("hello\n", encoding="utf-8")
        probe = Path(tmp) / "probe"
        probe.mkdir()
        queue = WorkspaceQueue(root)
        queue.list()  # the queue's folders exist before the first hook runs
        actions = root / ".redline" / "queue" / "actions"
        from redline.workspace.presence import present

        # A dashboard watches (no notification from any call), and a killed one left its file.
        watching = present(root, "dashboard")
        watching.__enter__()
        dead = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        )
        folder = root / ".redline" / "presence"
        (folder / f"{int(dead.stdout)}.json").write_text(
            json.dumps(
                {"pid": int(dead.stdout), "start_time": 1, "kind": "dashboard", "since": 0.0}
            )
        )
        added = in_process(root, args.loops)
        retried = 0
        envs = {
            "cold": (
                {**env, "REDLINE_HOOK_SERVER": "off"},
                {**ruled_env, "REDLINE_HOOK_SERVER": "off"},
            ),
            "resident": (env, ruled_env),
        }
        try:
            servers += [start_server(env, run), start_server(ruled_env, run)]
            for n in range(args.calls):
                for mode in MODES:
                    rows[mode][ROWS[0][0]].append(timed_run(bare, None, env))
                for mode in MODES:
                    mode_env = envs[mode][0]
                    row = rows[mode]
                    queued, answered, retries, record = reviewed(
                        root, queue, actions, f"{mode}-{n}", args.think, mode_env, resolve_queued
                    )
                    retried += retries
                    row["start -> queued"].append(queued)
                    row["  of which the record's fsyncs"].append(fsyncs(probe, record))
                    row["decision -> exit"].append(answered)
                    row["person's decision: queued + exit"].append(queued + answered)
                for mode in MODES:
                    raw = payload("pre-write.json", root, f"ruled-{mode}-{n}.txt")
                    took = timed_run(HOOK, raw, envs[mode][1])
                    rows[mode]["rule-decided, start -> exit"].append(took)
                for mode in MODES:
                    raw = payload("pre-read.json", root, "a.txt")
                    took = timed_run(HOOK, raw, envs[mode][0])
                    rows[mode]["pass-through (Read), start -> exit"].append(took)
                for mode in MODES:
                    took = timed_run(HOOK, prompt_payload(root), envs[mode][0])
                    rows[mode]["prompt-time call, start -> exit"].append(took)
        finally:
            watching.__exit__(None, None, None)
            queue.close()
            served = [
                stop_server(server, e) for server, e in zip(servers, (env, ruled_env), strict=False)
            ]
    report(rows, added, args, retried, served)
    return 0


def start_server(env: dict[str, str], run: str) -> subprocess.Popen[bytes]:
    """``redline hook-server`` for ``env``, listening (its socket is in ``run``) and warm
    (one pass-through call served)."""
    before = set(Path(run).glob("redline/hook-*.sock"))
    server = subprocess.Popen(
        [REDLINE, "hook-server", "--idle", "3600"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not set(Path(run).glob("redline/hook-*.sock")) - before:
        assert server.poll() is None, "the hook server ended"
        assert time.monotonic() < deadline, "the hook server never listened"
        time.sleep(0.01)
    return server


def stop_server(server: subprocess.Popen[bytes], env: dict[str, str]) -> str:
    """Stop a benchmark's server; what it said (its pid and the calls it served)."""
    said = subprocess.run(
        [REDLINE, "hook-server", "--stop"], env=env, capture_output=True, text=True, check=False
    ).stdout.strip()
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    return said


#: The deciding reviewer's event loop, made once: a person decides in a running dashboard
#: (or any reviewer whose loop exists already), so making a loop is not the hook's cost.
_DECIDER = asyncio.Runner()


def reviewed(
    root: Path,
    queue: Any,
    actions: Path,
    n: str,
    think: float,
    env: dict[str, str],
    resolve_queued: Any,
) -> tuple[float, float, int, bytes]:
    """One reviewed Write: (start → queued, decision → exit, retries, the record's bytes)."""
    from redline.hooktrace import mark  # REDLINE_HOOK_TRACE: the decider's steps too

    raw = payload("pre-write.json", root, f"f{n}.txt")
    mark("started")
    start = time.perf_counter()
    proc = subprocess.Popen(
        HOOK, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin is not None
    proc.stdin.write(raw)
    proc.stdin.close()
    proc.stdin = None
    while True:
        with os.scandir(actions) as found:
            names = [e.name for e in found if e.name.endswith(".json") and e.name[0] != "."]
        if names:
            break
        time.sleep(0.001)  # a benchmark's instrument, not a test
    queued = time.perf_counter() - start
    mark("seen queued")
    record = (actions / names[0]).read_bytes()
    records = queue.list()
    assert records, "the hook's record is listed"
    if think:
        time.sleep(think / 1000)
    # The hook's exit is awaited beside the decision: the agent goes on when the hook
    # exits, whatever the deciding command still does (it polls for the owner's answer).
    ended: dict[str, Any] = {}

    def reap() -> None:
        ended["output"] = proc.communicate(timeout=30)
        ended["at"] = time.perf_counter()
        mark("reaped")

    reaper = threading.Thread(target=reap)
    reaper.start()
    decided = time.perf_counter()
    mark("decided")
    retried = 0
    for _attempt in range(5):  # kept from the 2-second owner wait: a retry is counted
        result = _DECIDER.run(resolve_queued(queue, records[0].id, "discard", "bench"))
        if not result.is_error or "did not answer" not in result.text:
            break
        retried += 1
    assert not result.is_error, result.text
    reaper.join(30)
    out, err = ended["output"]
    assert b'"deny"' in out, (out, err)
    return queued, ended["at"] - decided, retried, record


def report(
    rows: dict[str, dict[str, list[float]]],
    added: dict[str, list[float]],
    args: argparse.Namespace,
    retried: int,
    served: list[str],
) -> None:
    print(f"load average after: {' '.join(f'{n:.2f}' for n in os.getloadavg())}")
    print(f"decisions retried: {retried}")
    print(f"hook servers: {'; '.join(served)}")
    when = f"{args.think:g} ms after it was queued" if args.think else "at once"
    print(f"{args.calls} rounds of `redline hook claude`, interleaved (a Write decided {when}):")
    bare = rows["cold"][ROWS[0][0]] + rows["resident"][ROWS[0][0]]
    floor = statistics.median(bare)
    titles = {
        "cold": "cold: a process per call (REDLINE_HOOK_SERVER=off)",
        "resident": "resident: answered by a running hook server (a warm fork per call)",
    }
    for mode in MODES:
        print(f" {titles[mode]}")
        for name, target in ROWS:
            values = bare if name == ROWS[0][0] else rows[mode][name]
            median = statistics.median(values)
            ratio = f"{median / floor:5.2f}x bare" if name != ROWS[0][0] else " " * 10
            print(
                f"  {name:36} median {median * 1000:6.1f} ms   "
                f"p95 {pct(values, 0.95) * 1000:6.1f} ms"
                f"   {ratio}" + (f"   (target <= {target})" if target else "")
            )
    print(f"steps added this round, in-process, up to {args.loops} calls each (target <= 3 ms):")
    for name, values in added.items():
        print(
            f"  {name:36} median {statistics.median(values) * 1000:6.3f} ms   "
            f"p95 {pct(values, 0.95) * 1000:6.3f} ms"
        )


def in_process(root: Path, loops: int) -> dict[str, list[float]]:
    """Each step this round added to the hook path, timed alone, up to ``loops`` times."""
    from redline.workspace import outbox
    from redline.workspace.presence import present, watched

    timings: dict[str, list[float]] = {
        "presence lookup (watched?)": [],
        "outbox check, nothing there": [],
        "outbox check, one entry told": [],
        "nobody watching: notify started": [],
        "model capture (Claude transcript)": [],
    }
    with present(None, "all"):
        for _ in range(loops):
            start = time.perf_counter()
            watched(root)
            timings["presence lookup (watched?)"].append(time.perf_counter() - start)
    for _ in range(loops):
        start = time.perf_counter()
        outbox.take("claude", "bench-session").done()
        timings["outbox check, nothing there"].append(time.perf_counter() - start)
    # Nobody watching another workspace: the decision, then `[notify] command` started
    # (detached; `true` as the command, set in a user config of this run only).
    other = root / "unwatched"
    other.mkdir()
    config = root / ".config"
    config.mkdir()
    (config / "config.toml").write_text('[notify]\ncommand = ["true"]\n', encoding="utf-8")
    before = os.environ.get("REDLINE_CONFIG_DIR")
    os.environ["REDLINE_CONFIG_DIR"] = str(config)
    from redline.review.unseen import tell_if_unseen

    for n in range(min(loops, 200)):
        start = time.perf_counter()
        assert tell_if_unseen(other, f"pa-{n + 1}", "Write a.txt", "hook:claude") == "true"
        timings["nobody watching: notify started"].append(time.perf_counter() - start)
    if before is None:
        del os.environ["REDLINE_CONFIG_DIR"]
    else:
        os.environ["REDLINE_CONFIG_DIR"] = before
    late = outbox.Late("pa-1", "Write a.txt", "applied", files=("a.txt",))
    for _ in range(min(loops, 500)):
        outbox.post("claude", "bench-session", late)
        start = time.perf_counter()
        taken = outbox.take("claude", "bench-session")
        assert taken.text
        taken.done()
        timings["outbox check, one entry told"].append(time.perf_counter() - start)
    from redline.drivers.hooks.agent_model import model_of
    from redline.drivers.hooks.payload import parse_payload

    # The post-tool call of a Write, its model found in a recorded transcript (150 KB).
    data = json.loads((FIXTURES / "post-write.json").read_text(encoding="utf-8"))
    data["cwd"] = str(root)
    data["transcript_path"] = str(FIXTURES / "transcript.jsonl")
    post = parse_payload("claude", json.dumps(data).encode())
    for _ in range(min(loops, 500)):
        start = time.perf_counter()
        model, why = model_of(post)
        timings["model capture (Claude transcript)"].append(time.perf_counter() - start)
        assert model, why
    timings["revision lookup at push (issue 47)"] = revision_lookup(min(loops, 500))
    return timings


def revision_lookup(rounds: int) -> list[float]:
    """The revision lookup a push does (issue 47): the session's last discarded action read
    (one signed file) and checked, as every hook call's push does it."""
    from redline.workspace.preview import FileCreate, Preview
    from redline.workspace.queue import ActionDraft, QueueRecord, Source, WorkspaceQueue
    from redline.workspace.queue.revisions import link

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        queue = WorkspaceQueue(root)
        source = Source.current("hook", "claude", "bench-session")
        draft = ActionDraft("x", source, preview=Preview([FileCreate("a.txt", "a\n")]))
        first = queue.push(draft)
        with queue.claim(first.id) as claim:
            queue.discard_record(claim, "bench")
        spans = []
        for n in range(rounds):
            # Another file of the same session: looked up and checked, not linked.
            record = QueueRecord(f"pa-{n + 100}", n, "x", "write", source, 0.0, files=["b.txt"])
            start = time.perf_counter()
            link(queue, draft, record, None)
            spans.append(time.perf_counter() - start)
        queue.close()
    return spans


if __name__ == "__main__":
    raise SystemExit(main())
