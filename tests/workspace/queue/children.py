"""Child-process scripts for the multi-process queue tests (run with ``python -c``)."""

PUSH_AND_RESOLVE = """
import asyncio, sys
from pathlib import Path
from redline.review.queued import resolve_queued
from redline.workspace import transaction
from redline.workspace.preview import FileCreate, Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue, claims

root, count = Path(sys.argv[1]), int(sys.argv[2])

def say(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()

claims._step_hook = lambda text: say("step " + text)
transaction._step_hook = lambda number, text: say(f"journal {number} {text}")
queue = WorkspaceQueue(root)
pushed = []
for index in range(count):
    record = queue.push(ActionDraft(
        label=f"f{index}.txt", source=Source.current("exec"), source_tool_name="write",
        preview=Preview([FileCreate(f"f{index}.txt", f"content {index}\\n")]),
    ))
    pushed.append(record.id)
    say("acked " + record.id)
for number, action_id in enumerate(pushed):
    decision = "apply" if number % 2 == 0 else "discard"
    result = asyncio.run(resolve_queued(queue, action_id, decision, "test"))
    say(f"resolved {action_id} {result.is_error}")
say("done")
"""

PUSHER = """
import sys
from pathlib import Path
from redline.workspace.preview import FileCreate, Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

root, count, tag = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
queue = WorkspaceQueue(root)
sys.stdin.readline()  # start together
for index in range(count):
    record = queue.push(ActionDraft(
        label=f"{tag}-{index}", source=Source.current("exec", tag), source_tool_name="write",
        preview=Preview([FileCreate(f"{tag}/{index}.txt", f"{tag} {index}\\n")]),
    ))
    print(record.id, flush=True)
"""

RESOLVER = """
import asyncio, sys
from pathlib import Path
from redline.review.queued import resolve_queued
from redline.workspace.queue import WorkspaceQueue

queue = WorkspaceQueue(Path(sys.argv[1]))

def resolve_listed():
    for record in queue.list():
        decision = "apply" if int(record.id[3:]) % 2 else "discard"
        result = asyncio.run(resolve_queued(queue, record.id, decision, "load"))
        if not result.is_error:
            print(record.id, flush=True)

# The test writes a line each time some pusher acknowledged a push, and closes stdin once
# every pusher is done: a last pass then resolves whatever the other resolver did not take.
for _pushed in sys.stdin:
    resolve_listed()
resolve_listed()
"""

PUSH_ONE = """
import sys
from pathlib import Path
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

queue = WorkspaceQueue(Path(sys.argv[1]))
print(queue.push(ActionDraft(label="from afar", source=Source.current("mcp", "client"))).id)
"""
