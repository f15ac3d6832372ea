"""Ways to extend redline: custom tools and the workspace trust they depend on."""
