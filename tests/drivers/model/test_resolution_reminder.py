"""The model's report of decisions says each reason once."""

from __future__ import annotations

from redline.drivers.model.turns import Resolution, resolution_reminder


def test_the_reason_is_said_once() -> None:
    text = resolution_reminder(
        [
            Resolution(
                "discarded",
                "pa-1",
                "Edit a.txt",
                "no reason given",
                "Discarded: Edit a.txt. Reason: no reason given",
            ),
            Resolution("applied", "pa-2", "Edit b.txt", "fine", "Applied: Edit b.txt."),
        ]
    )
    assert text.count("no reason given") == 1
    assert (
        "- discarded pa-1 (Edit a.txt). Reason: no reason given Result: Discarded: Edit a.txt."
        in text
    )
    assert "- applied pa-2 (Edit b.txt). Reason: fine Result: Applied: Edit b.txt." in text


def test_an_edited_apply_keeps_its_diff() -> None:
    result = (
        "Applied with your proposal edited by the reviewer: Write notes.md. Reason: ok\n"
        "--- proposed/notes.md\n+++ written/notes.md\n-# Notes\n+# Edited\n"
    )
    text = resolution_reminder([Resolution("applied", "pa-2", "Write notes.md", "ok", result)])
    assert text.count("Reason: ok") == 1
    assert "edited by the reviewer: Write notes.md.\n--- proposed/notes.md" in text
    assert "+# Edited" in text
