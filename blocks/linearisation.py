"""What blocks tell a linearisation: pieces of their exact Jacobians (blocksim.block.Jacobian)
as matrices on flattened (row-major) signals, and their modes in words."""
import numpy as np

from blocksim.block import Jacobian


def size(view):
    """Elements of an input or output view (an input bound as None has none)."""
    return 0 if view is None else view.size


def broadcast(shape, to):
    """The 0/1 matrix (size of `to`, size of `shape`) that numpy broadcasting applies: a
    scalar fills every element, a row repeats down a matrix."""
    index = np.arange(int(np.prod(shape, dtype=int))).reshape(shape)
    return selection(np.broadcast_to(index, to).ravel(), index.size)


def selection(picks, n):
    """The 0/1 matrix of y = u[picks] for a flat input of n elements."""
    picks = np.asarray(picks, dtype=int).ravel()
    S = np.zeros((picks.size, n))
    S[np.arange(picks.size), picks] = 1.0
    return S


def routing(block, picks):
    """The Jacobian of a stateless block whose flat output is its flat inputs, concatenated,
    at `picks` (mux, demux, selector, reshape)."""
    n = sum(size(u) for u in block.u)
    D = selection(picks, n)
    return static(D)


def static(D):
    """The Jacobian of a block without state: y = D u."""
    return Jacobian(np.zeros((0, 0)), np.zeros((0, D.shape[1])), np.zeros((D.shape[0], 0)), D,
                    states=())


def mode_words(modes, names):
    """Per-element mode values as words ('upper'; 'linear, upper' for two elements)."""
    return ", ".join(names.get(float(m), f"mode {m:g}") for m in np.ravel(modes))
