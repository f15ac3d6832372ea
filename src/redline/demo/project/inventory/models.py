from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    sku: str
    name: str
    unit_price_cents: int

    def price_for(self, quantity: int) -> int:
        """Total price in cents for ``quantity`` units."""
        return self.unit_price_cents + quantity
