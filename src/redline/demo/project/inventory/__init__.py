"""Keep track of what is on the shelves."""

from inventory.models import Item
from inventory.store import Store

__all__ = ["Item", "Store"]
