"""Serial-link robot described by Denavit–Hartenberg parameters (standard or modified).

``SerialLink`` supplies the kinematics of a chain of ``Link`` objects; everything else (poses,
gravity, base and tool, dynamics, friction, modifiers, analysis) comes from ``RobotBase``,
which documents the conventions.
"""

import functools

import numpy as np

from .link import Link
from .robot_base import RobotBase, readonly
from .transforms import transl, trotx, trotz


class SerialLink(RobotBase):
    """A serial-link manipulator given by DH links (immutable by convention: modifiers return
    new robots).

    ``SerialLink(links, name='', manufacturer='', convention=None, gravity=(0, 0, 9.81),
    base=None, tool=None, poses=None, comment='')``: ``links`` a sequence of ``Link``, all of
    one convention ('standard' or 'modified'; ``convention=None`` takes it from the links),
    ``base``/``tool`` 4x4 transforms (identity when None), ``poses`` a mapping name -> (n,)
    joint vector.

    Attributes (read-only arrays) besides those of ``RobotBase``: ``links``, ``convention``,
    ``mdh``, ``alpha``, ``a``, ``theta``, ``d``, ``offset`` (n,). The end-effector pose is
    base·A_1(q_1)…A_n(q_n)·tool.
    """

    def __init__(self, links, name="", manufacturer="", convention=None, gravity=(0.0, 0.0, 9.81),
                 base=None, tool=None, poses=None, comment=""):
        links = tuple(links)
        if not links or not all(isinstance(L, Link) for L in links):
            raise ValueError("SerialLink needs a non-empty sequence of Link objects")
        used = {L.convention for L in links}
        if convention is None:
            if len(used) > 1:
                raise ValueError("links mix standard and modified DH")
            convention = used.pop()
        elif used != {convention}:
            raise ValueError(f"convention={convention!r} but the links use {sorted(used)}")
        self.links = links
        self.convention = convention
        self.mdh = convention == "modified"

        def col(attr):
            return readonly([getattr(L, attr) for L in links])

        self.alpha, self.a, self.theta, self.d = col("alpha"), col("a"), col("theta"), col("d")
        self.offset = col("offset")
        super().__init__([L.sigma for L in links], *(col(k) for k in ("m", "r", "I", "Jm", "G",
                                                                       "B", "Tc", "qlim")),
                         name=name, manufacturer=manufacturer, comment=comment, gravity=gravity,
                         base=base, tool=tool, poses=poses)

    _kind = property(lambda self: f"{self.convention} DH")

    def _rebuild(self, m, r, I, Jm, G, B, Tc, qlim, **common):
        links = [L.replace(m=m[j], r=r[j], I=I[j], Jm=Jm[j], G=G[j], B=B[j], Tc=Tc[j],
                           qlim=None if np.isnan(qlim[j]).all() else qlim[j])
                 for j, L in enumerate(self.links)]
        return SerialLink(links, convention=self.convention, **common)

    def _kinematics(self):
        """The joint frames of the DH chain (``RobotBase``). Link j's transform is
        A_j(q) = Pre_j·J(q)·Post_j with J(q) = Rz(q) (revolute) or Tz(q) (prismatic):
        standard DH Pre = Rz(offset), Post = Tz(d)·Tx(a)·Rx(α) (revolute) or
        Pre = Rz(θ)·Tz(offset), Post = Tx(a)·Rx(α) (prismatic); modified DH
        Pre = Rx(α)·Tx(a)·Rz(offset)·Tz(d) or Rx(α)·Tx(a)·Rz(θ)·Tz(offset), Post = 1 (Rz and Tz
        commute). So X_j = Post_{j−1}·Pre_j, Y_j = Post_j and the end frame is DH frame n.
        Made once per geometry (read-only arrays): the copies ``_copy`` makes (other masses,
        friction, base or tool: a perturbed robot per run of a Monte Carlo sweep) share them."""
        return _dh_frames(self.mdh, tuple((int(L.sigma), float(L.alpha), float(L.a),
                                           float(L.theta), float(L.d), float(L.offset))
                                          for L in self.links))

    # ------------------------------------------------------------ kinematics
    def A(self, j, qj):
        """Link transform ^{j-1}A_j (4, 4) of joint j (0-based) at joint value qj."""
        return self.links[j].A(qj)

    def isspherical(self):
        """True when the last three joints are revolute with orthogonally intersecting axes."""
        if self.n < 3 or self.config[-3:] != "RRR":
            return False
        tw = np.abs(np.sin(self.alpha))
        if self.mdh:   # axes z_{n-3}, z_{n-2}, z_{n-1} meet at o_{n-3}
            return bool(self.a[-2] == 0 and self.a[-1] == 0 and self.d[-2] == 0
                        and np.allclose(tw[-2:], 1))
        # standard DH: axes z_{n-4}, z_{n-3}, z_{n-2} meet at o_{n-3}
        return bool(self.a[-3] == 0 and self.a[-2] == 0 and self.d[-2] == 0
                    and np.allclose(tw[-3:-1], 1))

    def __repr__(self):
        return f"SerialLink({self.name!r}, n={self.n}, {self.config}, {self.convention} DH)"

    def _table(self):
        """The DH table, one row per joint, numbered 1..n with coordinates q1..qn as in the
        toolbox."""
        def num(x):
            return f"{x:.6g}"

        heads = ("theta", "d", "a", "alpha", "offset") if not self.mdh else \
            ("theta", "d", "a_{j-1}", "alpha_{j-1}", "offset")
        rule = "+---+" + "+".join("-" * 13 for _ in heads) + "+"
        lines = [rule, "| j |" + "|".join(f"{h:>12} " for h in heads) + "|", rule]
        for j, L in enumerate(self.links, 1):
            th = f"q{j}" if L.sigma == 0 else num(L.theta)
            d = num(L.d) if L.sigma == 0 else f"q{j}"
            cells = (th, d, num(L.a), num(L.alpha), num(L.offset))
            lines.append(f"|{j:>2} |" + "|".join(f"{c:>12} " for c in cells) + "|")
        return lines + [rule]

    def ikine6s(self, T, config="lun"):
        """Closed form for a Puma-type arm with a spherical wrist: ``ikine.ikine6s``."""
        from .ikine import ikine6s
        return ikine6s(self, T, config)

    ikine560 = ikine6s


@functools.lru_cache(maxsize=64)
def _dh_frames(mdh, geometry):
    """(X, Y, slide, E) of ``SerialLink._kinematics`` for the links' (sigma, alpha, a, theta,
    d, offset) ``geometry``, modified DH when ``mdh``."""
    n = len(geometry)
    X, Y = np.empty((n, 4, 4)), np.empty((n, 4, 4))
    post = np.eye(4)
    for j, (sigma, alpha, a, theta, d, offset) in enumerate(geometry):
        turn = trotz(offset) if sigma == 0 else trotz(theta) @ transl(0, 0, offset)
        if mdh:
            X[j] = post @ trotx(alpha) @ transl(a, 0, 0) @ turn @ transl(0, 0, d)
            post = np.eye(4)
        else:
            X[j] = post @ turn
            post = transl(0, 0, d) @ transl(a, 0, 0) @ trotx(alpha)
        Y[j] = post
    return (readonly(X), readonly(Y), readonly([float(g[0]) for g in geometry]),
            readonly(np.eye(4)))
