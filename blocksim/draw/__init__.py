"""`blocksim draw`: a compiled diagram as boxes and wires (graph), placed (layout) and routed
(route) as pure geometry, rendered with matplotlib (render)."""
