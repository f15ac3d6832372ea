"""A compact footer that shows only the keys that fit whole on one line.

Textual's own footer lays its keys out left to right and lets the last one run under the
command-palette key, so a narrow terminal shows half a word. This one measures each key
before showing it: the keys named in ``first`` get the room first (in that order), then the
command-palette key, then the rest in binding order, each only while it still fits. The keys
shown keep the bindings' order. The footer recomposes when its width changes, and when the
screen's bindings change in a way it shows: Textual's footer rebuilds all of its keys on every
``refresh_bindings`` (several per decision in the dashboard, each a few dozen widgets), so this
one first compares what it would show with what it shows. When the keys do change, the ones
that stay as they were are kept: only the keys that are new or changed are mounted (each key
mounted is styled with its two parts; issue 44).
"""

from __future__ import annotations

from collections.abc import Iterable
from difflib import SequenceMatcher

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.compose import compose
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# In the compact style a key is "<key> <description>" followed by a one-cell margin; the
# command-palette key has no margin but a one-cell border on its left.
_KEY_MARGIN = 1
_PALETTE_BORDER = 1
PALETTE_CLASS = "-command-palette"


def key_width(key: FooterKey) -> int:
    """Cells ``key`` takes in a compact footer, its margin or border included."""
    text = cell_len(key.key_display)
    if key.description:
        text += 1 + cell_len(key.description)
    if key.has_class(PALETTE_CLASS):
        return text + _PALETTE_BORDER
    return text + _KEY_MARGIN


def _key_state(key: FooterKey) -> tuple[object, ...]:
    """Everything a key shows: two keys with the same state look the same."""
    return (
        key.key,
        key.key_display,
        key.description,
        key.action,
        key.tooltip,
        frozenset(key.classes),
        key.disabled,
    )


class FittingFooter(Footer):
    """A compact :class:`Footer` that drops the keys that would not fit whole."""

    def __init__(self, first: Iterable[str] = (), **kwargs: object) -> None:
        super().__init__(compact=True, **kwargs)  # type: ignore[arg-type]
        self.first: tuple[str, ...] = tuple(first)
        self._composed_width = -1
        self._composed_keys: tuple[tuple[object, ...], ...] | None = None
        # A rebuild is asked for and its compose has not run yet: it will read the bindings
        # as they are then, so further changes before it need no rebuild of their own.
        self._rebuild_pending = False

    def _available(self) -> int:
        width = self.size.width
        return width if width > 0 else self.app.size.width

    @staticmethod
    def _shown_keys(screen: Screen[object]) -> tuple[tuple[object, ...], ...]:
        """What the footer would show for ``screen``'s bindings, as comparable values.

        Each entry ends with the key's enabled flag, so two results that differ only there
        can be brought up to date without building the keys again.
        """
        return tuple(
            (binding.key, binding.action, binding.description, binding.group, tooltip, enabled)
            for (_, binding, enabled, tooltip) in screen.active_bindings.values()
            if binding.show
        )

    def bindings_changed(self, screen: Screen[object]) -> None:
        composed = self._composed_keys
        if composed is None or screen is not self.screen or not self.is_attached:
            self._rebuild(screen)
            return
        wanted = self._shown_keys(screen)
        if wanted == composed:
            return  # nothing it shows changed: keep the keys it has
        if [entry[:-1] for entry in wanted] == [entry[:-1] for entry in composed]:
            # Only keys turning on or off (the dashboard busy with a decision, say): update
            # the keys in place rather than mounting them all again.
            enabled = {entry[1]: bool(entry[-1]) for entry in wanted}
            for key in self.query(FooterKey):
                if key.action in enabled:
                    key.disabled = not enabled[key.action]
            self._composed_keys = wanted
            return
        self._rebuild(screen)

    def _rebuild(self, screen: Screen[object]) -> None:
        if self._rebuild_pending:
            return  # the compose already asked for reads the bindings as they are by then
        self._rebuild_pending = True
        # In the footer's own context (it may be called from the handler that changed the
        # bindings): its recompose binds the footer's data.
        self.call_next(self._rebuild_now, screen)

    def _rebuild_now(self, screen: Screen[object]) -> None:
        if not (screen.app.app_focus and self.is_attached and screen is self.screen):
            self._rebuild_pending = False  # Footer.bindings_changed asks for no compose then
        super().bindings_changed(screen)

    def on_mount(self) -> None:
        # Footer.on_mount (run after this one) subscribes to the bindings' changes by message:
        # the keys would turn on or off a frame after the buttons. Once both have run, the
        # footer follows at once, in the handler that changed them (issue 44).
        self.call_next(self._follow_at_once)

    def _follow_at_once(self) -> None:
        signal = self.screen.bindings_updated_signal
        signal.unsubscribe(self)
        signal.subscribe(self, self.bindings_changed, immediate=True)

    def compose(self) -> ComposeResult:
        self._rebuild_pending = False
        if self._bindings_ready and self.is_attached:
            self._composed_keys = self._shown_keys(self.screen)
        widgets = list(super().compose())
        if self.compact:
            # Each key would add the class itself once mounted (its ``compact`` is bound to
            # the footer's), restyling it and its two parts a second time (issue 44).
            for widget in widgets:
                if isinstance(widget, FooterKey):
                    widget.add_class("-compact", update=False)
        budget = self._available()
        self._composed_width = budget
        keys = [w for w in widgets if isinstance(w, FooterKey)]
        palette = [k for k in keys if k.has_class(PALETTE_CLASS)]
        plain = [k for k in keys if not k.has_class(PALETTE_CLASS)]
        # Anything else (a group of keys with one label) is kept and counted as unknown width.
        shown = {id(w) for w in widgets if not isinstance(w, FooterKey)}

        def rank(key: FooterKey) -> int:
            return self.first.index(key.action) if key.action in self.first else len(self.first)

        candidates = sorted((k for k in plain if k.action in self.first), key=rank)
        candidates += palette
        candidates += [k for k in plain if k.action not in self.first]
        for key in candidates:
            width = key_width(key)
            if width <= budget:
                shown.add(id(key))
                budget -= width
        kept: list[Widget] = [w for w in widgets if id(w) in shown]
        yield from kept

    async def recompose(self) -> None:
        """Compose the keys again, keeping the mounted ones that are unchanged."""
        if not self.is_attached or self._pruning:
            await super().recompose()  # which does nothing then
            return
        async with self.batch():
            old = list(self.children)
            new = compose(self)
            if not all(isinstance(w, FooterKey) for w in (*old, *new)):  # groups: build anew
                await self.remove_children(old)
                await self.mount_all(new)
                return
            keys = [w for w in new if isinstance(w, FooterKey)]
            matcher = SequenceMatcher(
                None,
                [_key_state(k) for k in old if isinstance(k, FooterKey)],
                [_key_state(k) for k in keys],
                autojunk=False,
            )
            shown: list[Widget] = []
            for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
                shown += old[old_from:old_to] if tag == "equal" else keys[new_from:new_to]
            kept = {id(w) for w in shown}
            await self.remove_children([w for w in old if id(w) not in kept])
            mounting = []
            for index, widget in enumerate(shown):
                if widget.parent is None:  # new: before the next key that stays, or last
                    following = next((w for w in shown[index + 1 :] if w.parent is self), None)
                    mounting.append(self.mount(widget, before=following))
            for mounted in mounting:
                await mounted

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._composed_width:
            self.call_after_refresh(self.recompose)
