"""`blocksim edit`: the diagram editor in the browser, over the same YAML files."""
