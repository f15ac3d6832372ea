"""Drive a redline session from Python: the agent proposes, this script reviews.

Run it with ``uv run python examples/sdk_review.py``. It needs no key and no network: a
scripted plan plays the model, in a throwaway workspace.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from redline import Event, PendingPushed, PendingResolved, create_agent_session

PLAN = {
    "name": "sdk-example",
    "steps": [
        {"say": "I'll fix the greeting and add a changelog."},
        {
            "call": [
                {"tool": "edit", "args": {"path": "hello.py", "old": "Helo", "new": "Hello"}},
                {"tool": "write", "args": {"path": "CHANGES.md", "content": "- fix greeting\n"}},
            ]
        },
        {"say": "Thanks for the review."},
    ],
}


def show(event: Event) -> None:
    match event:
        case PendingPushed(action_id=action_id, label=label):
            print(f"  [queued] {action_id} {label}")
        case PendingResolved(action=action, label=label, reason=reason):
            print(f"  [{action}] {label}: {reason}")


def main() -> None:
    workspace = Path(tempfile.mkdtemp(prefix="redline-sdk-"))
    (workspace / "hello.py").write_text('print("Helo, world")\n', encoding="utf-8")
    plan = workspace.parent / f"{workspace.name}-plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")

    with create_agent_session(workspace, f"scripted:{plan}", resolver="human") as session:
        session.subscribe(show)
        status = session.prompt("Fix the typo in hello.py")
        while status == "awaiting_review":
            top = session.store.peek()
            assert top is not None
            print(f"\nReviewing {top.id}: {top.label}")
            if top.preview is not None:
                print(top.preview.diff())
            # Keep code changes, drop the changelog: the reason goes back to the agent.
            if top.source_tool_name == "edit":
                session.resolve("apply", "typo fix is right", action_id=top.id)
            else:
                session.resolve("discard", "we don't keep a changelog", action_id=top.id)
            if not session.store.has_pending:
                status = session.resume()
        print(f"\nRun finished: {status}")
    print((workspace / "hello.py").read_text(encoding="utf-8"), end="")


if __name__ == "__main__":
    main()
