from __future__ import annotations

import threading

import pytest

from redline.review.store import PendingAction, PendingActionStore, StoreEvent


def make(label: str) -> PendingAction:
    return PendingAction(label=label, apply=lambda reason: f"applied {label}: {reason}")


def test_lifo_order_across_several_pushes() -> None:
    store = PendingActionStore()
    for label in ("first", "second", "third"):
        store.push(make(label))
    assert store.has_pending
    assert store.count == len(store) == 3
    assert [a.label for a in store.snapshot()] == ["third", "second", "first"]
    assert store.peek() is not None and store.peek().label == "third"  # type: ignore[union-attr]
    popped = [store.pop(), store.pop(), store.pop()]
    assert [a.label for a in popped if a] == ["third", "second", "first"]
    assert store.pop() is None
    assert store.peek() is None
    assert not store.has_pending


def test_ids_and_deterministic_clock() -> None:
    ticks = iter([100.0, 101.0, 102.0])
    store = PendingActionStore(clock=lambda: next(ticks))
    a, b = store.push(make("a")), store.push(make("b"))
    assert (a.id, b.id) == ("pa-1", "pa-2")
    assert (a.created_at, b.created_at) == (100.0, 101.0)
    assert a.source_tool_name == "custom_tool"


def test_replace_keeps_position_and_gives_new_id() -> None:
    store = PendingActionStore()
    bottom, middle, top = (
        store.push(make("bottom")),
        store.push(make("middle")),
        store.push(make("top")),
    )
    fresh = store.replace(middle.id, make("middle v2"))
    assert fresh.id == "pa-4"
    assert [a.label for a in store.snapshot()] == ["top", "middle v2", "bottom"]
    assert store.get(middle.id) is None
    assert store.peek() is top and bottom in store.snapshot()
    with pytest.raises(KeyError):
        store.replace("pa-99", make("x"))


def test_clear_and_listener_events() -> None:
    store = PendingActionStore()
    seen: list[StoreEvent] = []
    unsubscribe = store.subscribe(seen.append)
    a = store.push(make("a"))
    store.push(make("b"))
    store.replace(a.id, make("a2"))
    store.pop()
    removed = store.clear()
    assert [e.kind for e in seen] == ["push", "push", "replace", "pop", "clear"]
    assert seen[2].previous is a
    assert [x.label for x in removed] == ["a2"]
    unsubscribe()
    store.push(make("c"))
    assert len(seen) == 5


def test_raising_listener_never_breaks_the_store() -> None:
    store = PendingActionStore()
    calls: list[str] = []

    def bad(_event: StoreEvent) -> None:
        raise RuntimeError("listener bug")

    store.subscribe(bad)
    store.subscribe(lambda e: calls.append(e.kind))
    store.push(make("a"))
    assert store.count == 1
    assert calls == ["push"]


def test_label_and_apply_are_required() -> None:
    with pytest.raises(ValueError):
        PendingAction(label="  ", apply=lambda r: r)
    with pytest.raises(TypeError):
        PendingAction(label="x", apply="not callable")  # type: ignore[arg-type]


@pytest.mark.stress
def test_concurrent_push_and_pop_lose_and_duplicate_nothing(stress: bool) -> None:
    store = PendingActionStore()
    pushers, per_thread = 4, (5000 if stress else 500)
    popped: list[str] = []
    popped_lock = threading.Lock()
    start = threading.Barrier(pushers + 2)

    def push(n: int) -> None:
        start.wait()
        for i in range(per_thread):
            store.push(make(f"{n}-{i}"))

    def pop() -> None:
        start.wait()
        for _ in range(per_thread * pushers):
            action = store.pop()
            if action is not None:
                with popped_lock:
                    popped.append(action.id)

    threads = [threading.Thread(target=push, args=(n,)) for n in range(pushers)]
    threads += [threading.Thread(target=pop) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    remaining = [a.id for a in store.snapshot()]
    everything = popped + remaining
    assert len(everything) == pushers * per_thread
    assert len(set(everything)) == len(everything)


def test_a_listener_may_wait_on_another_thread_that_uses_the_store() -> None:
    """Listeners run after the store's lock is released: one that waits for another thread
    reading and changing the store (as an SDK user's or a UI's might) never deadlocks."""
    store = PendingActionStore()
    answers: list[tuple[int, str]] = []

    def listener(event: StoreEvent) -> None:
        if event.kind != "push" or event.action is None or event.action.label != "first":
            return

        def other() -> None:
            pushed = store.push(make("second"))
            answers.append((store.count, pushed.label))

        worker = threading.Thread(target=other)
        worker.start()
        worker.join(timeout=30)  # a hang guard: the other thread needs only the lock
        assert not worker.is_alive(), "the other thread blocked on the store"

    kinds: list[str] = []
    store.subscribe(listener)
    store.subscribe(lambda e: kinds.append(f"{e.kind} {e.action.label if e.action else ''}"))
    store.push(make("first"))
    assert answers == [(2, "second")]
    # Both events reached every listener, in the order the changes happened.
    assert kinds == ["push first", "push second"]


def test_a_change_made_by_a_listener_is_delivered_before_that_change_returns() -> None:
    store = PendingActionStore()
    seen: list[str] = []

    def listener(event: StoreEvent) -> None:
        label = event.action.label if event.action else ""
        seen.append(f"{event.kind} {label}")
        if event.kind == "push" and label == "first":
            store.push(make("nested"))
            seen.append("nested returned")

    store.subscribe(listener)
    store.push(make("first"))
    assert seen == ["push first", "push nested", "nested returned"]
