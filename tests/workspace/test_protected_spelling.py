""".git/ and .redline/ stay protected whatever their spelling (case, Unicode, Windows quirks)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from redline.review.store import PendingActionStore
from redline.tools.base import ToolContext
from redline.tools.files import WriteParams, WriteTool
from redline.workspace.paths import (
    ConfinementError,
    folded_name,
    protected_by_identity,
    protected_name,
    resolve_inside,
)
from redline.workspace.preview import FileCreate, Preview
from redline.workspace.safe_apply import ConfinementError as ApplyConfinementError
from redline.workspace.safe_apply import apply_preview

SPELLINGS = [
    ".Git",
    ".GIT",
    ".gIt",
    ".REDLINE",
    ".Redline",
    "\uff0egit",  # fullwidth full stop: NFKC makes it "."
    ".\uff27\uff29\uff34",  # fullwidth G I T
    ".g\u200cit",  # zero-width non-joiner, ignored by HFS+
    ".git\ufeff",  # zero-width no-break space
    ".git.",  # Windows drops trailing dots
    ".git ",  # ... and spaces
    "GIT~1",  # the 8.3 short name of .git
    "REDLIN~1",
    ".rEdLıne".replace("ı", "i"),
]


@pytest.mark.parametrize("name", SPELLINGS)
def test_every_spelling_of_a_protected_folder_is_recognised(name: str) -> None:
    assert protected_name(name) in (".git", ".redline")


@pytest.mark.parametrize("name", ["git", ".github", ".gitignore", "redline", ".redline-x", "src"])
def test_other_names_are_not_protected(name: str) -> None:
    assert protected_name(name) is None


def test_folding_is_nfkc_and_casefold() -> None:
    assert folded_name(".GIT") == ".git"
    assert folded_name("e\u0301") == folded_name("\u00e9")  # NFD and NFC spell one name
    assert folded_name("STRASSE") == folded_name("straße")


@pytest.mark.parametrize(
    "rel",
    [".Git/config", ".GIT/hooks/pre-commit", ".REDLINE/tools/x.py", "sub/../.Git/HEAD"],
)
def test_resolve_inside_refuses_every_spelling(tmp_path: Path, rel: str) -> None:
    with pytest.raises(
        ConfinementError, match=r"redline never touches files inside \.(git|redline)/"
    ):
        resolve_inside(tmp_path, rel)


def test_a_symlink_to_another_spelling_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".GIT").mkdir()
    (tmp_path / "docs").symlink_to(".GIT")
    with pytest.raises(ConfinementError, match=r"inside \.git/"):
        resolve_inside(tmp_path, "docs/config")


async def test_the_write_tool_queues_nothing_inside_a_respelled_folder(tmp_path: Path) -> None:
    store = PendingActionStore()
    for rel in (".Git/config", ".GIT/hooks/pre-commit", ".REDLINE/tools/x.py"):
        result = await WriteTool().execute(
            WriteParams(path=rel, content="evil\n"), ToolContext(cwd=tmp_path, store=store)
        )
        assert result.is_error
        assert "redline never touches files inside" in result.text
    assert store.count == 0


def test_safe_apply_refuses_a_respelled_folder(tmp_path: Path) -> None:
    with pytest.raises(ApplyConfinementError, match=r"\.GIT/hooks/pre-commit"):
        apply_preview(tmp_path, Preview([FileCreate(".GIT/hooks/pre-commit", "#!/bin/sh\n")]))
    assert not (tmp_path / ".GIT").exists()


# -- the decision by identity, on both kinds of file system ---------------------------------


def _case_insensitive_stat(root: Path):
    """os.stat as a case-insensitive file system answers it: each name below ``root``
    opens the entry whose case-folded name matches."""

    def lookup(path: str) -> os.stat_result:
        rel = Path(path).relative_to(root)
        folder = root
        for part in rel.parts:
            matches = [entry for entry in os.listdir(folder) if entry.casefold() == part.casefold()]
            if not matches:
                raise FileNotFoundError(path)
            folder = folder / matches[0]
        return os.stat(folder)

    return lookup


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".redline" / "tools").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    return tmp_path


def test_identity_on_a_case_sensitive_file_system(repo: Path) -> None:
    # Linux: .GIT does not exist, it is not .git; the real folder is found by identity.
    assert protected_by_identity(repo, (".GIT", "hooks", "pre-commit")) is None
    assert protected_by_identity(repo, (".git", "hooks", "pre-commit")) == ".git"
    assert protected_by_identity(repo, ("src", "app.py")) is None


def test_identity_on_a_case_insensitive_file_system(repo: Path) -> None:
    lookup = _case_insensitive_stat(repo)
    assert protected_by_identity(repo, (".GIT", "hooks", "pre-commit"), lookup) == ".git"
    assert protected_by_identity(repo, (".Redline", "tools", "x.py"), lookup) == ".redline"
    assert protected_by_identity(repo, ("SRC", "app.py"), lookup) is None
    assert protected_by_identity(repo, ("missing", "x.py"), lookup) is None


def test_identity_catches_a_spelling_names_cannot(repo: Path) -> None:
    """A folder that *is* .git under a name no folding knows (a bind mount, a case-folding
    quirk of some file system) is refused by identity."""
    alias = repo / "innocent"
    real_stat = os.stat

    def aliased(path: str) -> os.stat_result:
        if Path(path) == alias:
            return real_stat(repo / ".git")
        return real_stat(path)

    assert protected_by_identity(repo, ("innocent", "config"), aliased) == ".git"
    assert protected_by_identity(repo, ("innocent", "config")) is None


def test_the_ascii_shortcut_folds_as_the_unicode_way() -> None:
    # folded_name takes a shortcut for ASCII names (a listing checks 10,000 of them); it
    # must give what NFKC, case folding and dropping format characters give.
    def unicode_way(name: str) -> str:
        text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
        text = "".join(char for char in text if unicodedata.category(char) != "Cf")
        return text.rstrip(". ") or text

    names = [chr(a) + chr(b) for a in range(128) for b in range(128)]
    names += [".GIT", "Redlin~1", ".redline. . ", "...", " ", "Git~1", "README.md"]
    assert [folded_name(n) for n in names] == [unicode_way(n) for n in names]
