"""Small dense linear algebra for the kernels (plain loops, compiled by numba when enabled)."""
import math

from ._jit import jit


@jit
def cholesky_solve(A, b):
    """Solve A·x = b for a symmetric positive-definite A (n, n) in place: A's lower triangle
    becomes the Cholesky factor L (A = L·Lᵀ), b becomes x. Reads only A's lower triangle.
    Returns False (A and b partly overwritten) when A is not positive definite."""
    n = b.shape[0]
    for j in range(n):
        s = A[j, j]
        for p in range(j):
            s -= A[j, p] * A[j, p]
        if not s > 0.0:
            return False
        s = math.sqrt(s)
        A[j, j] = s
        for i in range(j + 1, n):
            r = A[i, j]
            for p in range(j):
                r -= A[i, p] * A[j, p]
            A[i, j] = r / s
    for i in range(n):                    # L·z = b
        r = b[i]
        for p in range(i):
            r -= A[i, p] * b[p]
        b[i] = r / A[i, i]
    for i in range(n - 1, -1, -1):        # Lᵀ·x = z
        r = b[i]
        for p in range(i + 1, n):
            r -= A[p, i] * b[p]
        b[i] = r / A[i, i]
    return True
