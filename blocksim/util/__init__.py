"""Small helpers every layer uses: atomic file writes, pausing the garbage collector."""
