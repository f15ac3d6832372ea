import logging

from inventory.store import Store

logger = logging.getLogger(__name__)


def total_value_cents(store: Store) -> int:
    total = 0
    for item in store.items():
        total += item.price_for(store.quantity(item.sku))
    return total


def print_report(store: Store) -> None:
    if len(store.items()) == 0:
        print("the store is empty")
        return
    for item in store.items():
        print(f"{item.sku:<8} {item.name:<20} {store.quantity(item.sku):>5}")
    print("total value:", total_value_cents(store) / 100)
