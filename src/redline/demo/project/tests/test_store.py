from inventory import Item, Store


def test_add_and_remove() -> None:
    store = Store()
    store.add(Item("A1", "bolt", 25), quantity=10)
    store.remove("A1", 4)
    assert store.quantity("A1") == 6
