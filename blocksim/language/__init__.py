"""The diagram language: YAML text with line tracking (yamlio), the expression language
(expr), a diagram file and its subsystems as one flat DiagramSpec (diagram), the block types
by name (library) and their documentation (blockdoc)."""
