"""[notify]: the config table (only the user's or a trusted workspace's command), the
terminal escapes, and the user's command run as an argv, never through a shell."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from redline import trust as trust_store
from redline.config import ConfigError, NotifyConfig, notify_settings
from redline.notify import (
    Arrival,
    CommandNotifier,
    command_argv,
    desktop_kind,
    run_command,
    terminal_alert,
)

HOSTILE = "edit a.py $(touch pwned); rm -rf x `id` {source} | tee y"
# A tiny program that writes its argv and the action's variables, one per line.
RECORDER = (
    "import os, sys\n"
    "with open(sys.argv[1], 'w', encoding='utf-8') as out:\n"
    "    out.write('\\n'.join(sys.argv[2:]) + '\\n')\n"
    "    for key in ('REDLINE_ACTION_ID', 'REDLINE_ACTION_LABEL', 'REDLINE_ACTION_SOURCE'):\n"
    "        out.write(os.environ[key] + '\\n')\n"
)


def user_config(config_dir: Path, text: str) -> Path:
    path = config_dir / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def workspace_config(root: Path, text: str) -> Path:
    state = root / ".redline"
    state.mkdir(mode=0o700, exist_ok=True)
    path = state / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


# -- the table ------------------------------------------------------------------------
def test_defaults_ring_and_show_but_run_nothing(ws: Path) -> None:
    config = notify_settings(ws)
    assert config == NotifyConfig(bell=True, desktop="auto", command=(), timeout=10.0)


def test_user_config_sets_every_key(ws: Path, isolated_user_config: Path) -> None:
    path = user_config(
        isolated_user_config,
        '[notify]\nbell = false\ndesktop = "osc777"\ncommand = ["ntfy", "{label}"]\ntimeout = 3\n',
    )
    config = notify_settings(ws)
    assert (config.bell, config.desktop, config.command, config.timeout) == (
        False,
        "osc777",
        ("ntfy", "{label}"),
        3.0,
    )
    assert config.origin == str(path)
    assert config.warnings == ()


def test_untrusted_workspace_notify_is_ignored_with_a_note(
    ws: Path, isolated_user_config: Path
) -> None:
    user_config(isolated_user_config, '[notify]\ncommand = ["mine"]\n')
    path = workspace_config(ws, '[notify]\ncommand = ["curl", "evil.example"]\nbell = false\n')
    config = notify_settings(ws)
    assert config.command == ("mine",)
    assert config.bell is True
    assert len(config.warnings) == 1
    assert str(path) in config.warnings[0]
    assert "notify ignored" in config.warnings[0]
    assert "redline trust" in config.warnings[0]


def test_trusted_workspace_notify_counts(ws: Path, isolated_user_config: Path) -> None:
    user_config(isolated_user_config, '[notify]\ncommand = ["mine"]\ndesktop = "off"\n')
    path = workspace_config(ws, '[notify]\ncommand = ["theirs", "{id}"]\n')
    trust_store.trust(ws)
    config = notify_settings(ws)
    assert config.command == ("theirs", "{id}")
    assert config.desktop == "off"  # the user's key the workspace did not set stays
    assert config.origin == str(path)
    assert config.warnings == ()


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("notify = 1", "notify"),
        ('[notify]\ncommand = "notify-send hi"', "notify.command"),
        ("[notify]\ncommand = []", "notify.command"),
        ('[notify]\ncommand = ["a", ""]', "notify.command"),
        ('[notify]\nbell = "yes"', "notify.bell"),
        ('[notify]\ndesktop = "osc99"', "notify.desktop"),
        ("[notify]\ntimeout = 0", "notify.timeout"),
        ("[notify]\ntimeout = true", "notify.timeout"),
        ('[notify]\nsound = "ding"', "notify.sound"),
    ],
    ids=["not-a-table", "string", "empty", "empty-part", "bell", "desktop", "zero", "bool", "key"],
)
def test_bad_values_name_the_file_and_key(
    ws: Path, isolated_user_config: Path, text: str, key: str
) -> None:
    path = user_config(isolated_user_config, text + "\n")
    with pytest.raises(ConfigError) as caught:
        notify_settings(ws)
    assert str(path) in str(caught.value)
    assert f"{key}:" in str(caught.value)


def test_notify_is_a_known_key_for_the_settings_loader(
    ws: Path, isolated_user_config: Path
) -> None:
    from redline.config import load_settings

    user_config(isolated_user_config, '[notify]\ncommand = ["x"]\n')
    assert load_settings(ws).warnings == ()


# -- the terminal ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("env", "kind"),
    [
        ({"TERM_PROGRAM": "iTerm.app"}, "osc9"),
        ({"TERM_PROGRAM": "ghostty"}, "osc777"),
        ({"TERM_PROGRAM": "WezTerm"}, "osc777"),
        ({"TERM": "foot"}, "osc777"),
        ({"TERM": "rxvt-unicode-256color"}, "osc777"),
        ({"TERM": "xterm-256color", "VTE_VERSION": "7600"}, "osc777"),
        ({"TERM": "xterm-256color"}, None),
        ({}, None),
    ],
    ids=["iterm", "ghostty", "wezterm", "foot", "rxvt", "vte", "xterm", "nothing"],
)
def test_auto_picks_the_escape_by_the_terminal(env: dict[str, str], kind: str | None) -> None:
    assert desktop_kind("auto", env) == kind
    assert desktop_kind("off", env) is None
    assert desktop_kind("osc9", env) == "osc9"


def test_terminal_alert_is_the_bell_and_the_escape() -> None:
    arrival = Arrival("pa-7", "edit app.py", "acp:gemini")
    text = terminal_alert(NotifyConfig(desktop="osc9"), [arrival], {})
    assert text == "\a\x1b]9;pa-7 edit app.py (acp:gemini) waits for review\x07"
    text = terminal_alert(NotifyConfig(desktop="osc777", bell=False), [arrival], {})
    assert text == "\x1b]777;notify;redline;pa-7 edit app.py (acp:gemini) waits for review\x07"
    assert terminal_alert(NotifyConfig(desktop="off"), [arrival], {}) == "\a"
    assert terminal_alert(NotifyConfig(desktop="off", bell=False), [arrival], {}) == ""
    many = [Arrival("pa-1", "a", "exec"), arrival]
    assert "2 actions wait for review; newest: pa-7 edit app.py" in terminal_alert(
        NotifyConfig(desktop="osc9"), many, {}
    )


def test_a_label_cannot_end_the_escape_or_write_to_the_terminal() -> None:
    hostile = Arrival("pa-1", "x\x07\x1b]0;owned\x1b\\\x9b2J\nnext", "mcp:\x1b[31mred")
    text = terminal_alert(NotifyConfig(desktop="osc777", bell=False), [hostile], {})
    assert text.startswith("\x1b]777;notify;redline;")
    assert text.endswith("\x07")
    inner = text[len("\x1b]777;notify;redline;") : -1]
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in inner)
    assert "owned" in inner  # the text stays, only the controls go


def test_under_tmux_the_escape_is_wrapped_for_passthrough() -> None:
    arrival = Arrival("pa-1", "a", "exec")
    text = terminal_alert(NotifyConfig(desktop="osc9", bell=False), [arrival], {"TMUX": "/t,1,0"})
    assert text == "\x1bPtmux;\x1b\x1b]9;pa-1 a (exec) waits for review\x07\x1b\\"


# -- the command ----------------------------------------------------------------------
def test_placeholders_are_replaced_once_and_literally() -> None:
    arrival = Arrival("pa-3", HOSTILE, "mcp:{id}")
    argv = command_argv(["send", "{id}", "[{source}] {label}", "{other}"], arrival)
    assert argv == ["send", "pa-3", f"[mcp:{{id}}] {HOSTILE}", "{other}"]


def test_the_command_gets_argv_and_variables_without_a_shell(tmp_path: Path) -> None:
    script = tmp_path / "record.py"
    script.write_text(RECORDER, encoding="utf-8")
    out = tmp_path / "out.txt"
    arrival = Arrival("pa-9", HOSTILE, "acp:gemini")
    command = [sys.executable, str(script), str(out), "{id}", "{label}", "{source}"]
    assert run_command(command, arrival, timeout=30) is None
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines == ["pa-9", HOSTILE, "acp:gemini", "pa-9", HOSTILE, "acp:gemini"]
    # Nothing in the label ran: no file named by it appeared.
    assert not (tmp_path / "pwned").exists()
    assert not Path("pwned").exists()


def test_failures_are_one_line_naming_the_command(tmp_path: Path) -> None:
    arrival = Arrival("pa-1", "a", "exec")
    missing = run_command([str(tmp_path / "nope")], arrival, timeout=5)
    assert missing == f"notify command {str(tmp_path / 'nope')!r} not found"
    failing = run_command(
        [sys.executable, "-c", "import sys; sys.stderr.write('no route\\n'); sys.exit(3)"],
        arrival,
        timeout=30,
    )
    assert failing is not None
    assert "failed (exit status 3): no route" in failing


def test_a_command_that_hangs_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    arrival = Arrival("pa-1", "a", "exec")
    # It would sleep far past the timeout; the timeout is what ends it.
    error = run_command(
        [sys.executable, "-c", "import time; time.sleep(600)"], arrival, timeout=0.5
    )
    assert error is not None
    assert "did not finish within 0.5 s and was stopped" in error


def test_the_notifier_runs_in_order_off_the_callers_thread(tmp_path: Path) -> None:
    script = tmp_path / "append.py"
    script.write_text(
        "import sys\n"
        "if sys.argv[2] == 'pa-4':\n"
        "    sys.exit('the end')\n"
        "open(sys.argv[1], 'a', encoding='utf-8').write(sys.argv[2] + '\\n')\n",
        encoding="utf-8",
    )
    out = tmp_path / "log.txt"
    errors: list[str] = []
    done = threading.Event()

    def on_error(text: str) -> None:
        errors.append(text)
        done.set()

    notifier = CommandNotifier([sys.executable, str(script), str(out), "{id}"], 30, on_error)
    try:
        for number in range(1, 4):
            assert notifier.notify(Arrival(f"pa-{number}", "x", "exec"))
        # A last run that fails marks the end of the queue (runs are one at a time, in order).
        assert notifier.notify(Arrival("pa-4", "x", "exec"))
        assert done.wait(60)
    finally:
        notifier.close()
    assert out.read_text(encoding="utf-8").splitlines() == ["pa-1", "pa-2", "pa-3"]
    assert len(errors) == 1
    assert "failed (exit status 1): the end" in errors[0]
    assert not notifier.notify(Arrival("pa-5", "x", "exec"))
