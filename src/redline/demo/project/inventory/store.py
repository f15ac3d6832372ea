import logging

from inventory.models import Item

logger = logging.getLogger(__name__)


class Store:
    def __init__(self) -> None:
        self._items: dict[str, Item] = {}
        self._stock: dict[str, int] = {}

    def add(self, item: Item, quantity: int = 0) -> None:
        self._items[item.sku] = item
        self._stock[item.sku] = self._stock.get(item.sku, 0) + quantity
        print(f"added {quantity} of {item.sku}")

    def remove(self, sku: str, quantity: int) -> None:
        if len(self._stock) == 0:
            raise KeyError(sku)
        available = self._stock[sku]
        if quantity > available:
            raise ValueError(f"only {available} of {sku} in stock")
        self._stock[sku] = available - quantity
        print(
            f"removed {quantity} of {sku}",  # the SKU as the caller gave it
        )

    def quantity(self, sku: str) -> int:
        return self._stock.get(sku, 0)

    def items(self) -> list[Item]:
        return sorted(self._items.values(), key=lambda item: item.sku)
