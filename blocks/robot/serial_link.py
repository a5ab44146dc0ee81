"""Serial-link robot described by Denavit–Hartenberg parameters (standard or modified).

``SerialLink`` supplies the kinematics of a chain of ``Link`` objects; everything else (poses,
gravity, base and tool, dynamics, friction, modifiers, analysis) comes from ``RobotBase``,
which documents the conventions.
"""

import numpy as np

from .link import Link
from .robot_base import RobotBase, readonly


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

    def _end_frame(self):
        """The end-effector (without the tool) in the last link's frame: DH frame n itself."""
        return np.eye(4)

    def _pack(self):
        """P, W for ``_kernels`` (layout there)."""
        K, n = self._k, self.n
        P = np.zeros((n, K.NP))
        P[:, K.SIGMA] = self.sigma
        P[:, K.A] = self.a
        P[:, K.THETA] = self.theta
        P[:, K.D] = self.d
        P[:, K.OFFSET] = self.offset
        P[:, K.M] = self.m
        P[:, K.RX:K.RZ + 1] = self.r
        P[:, K.I0:K.I0 + 9] = self.I.reshape(n, 9)
        P[:, K.JM] = self.Jm
        P[:, K.G] = self.G
        P[:, K.B] = self.B
        P[:, K.TCP] = self.Tc[:, 0]
        P[:, K.TCN] = self.Tc[:, 1]
        P[:, K.CA] = np.cos(self.alpha)
        P[:, K.SA] = np.sin(self.alpha)
        W = np.zeros(K.NW)
        W[K.BASE:K.BASE + 12] = self.base[:3].ravel()
        W[K.TOOL:K.TOOL + 12] = self.tool[:3].ravel()
        W[K.MDH] = float(self.mdh)
        return P, W

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
        """The DH table, one row per joint."""
        def num(x):
            return f"{x:.6g}"

        heads = ("theta", "d", "a", "alpha", "offset") if not self.mdh else \
            ("theta", "d", "a_{j-1}", "alpha_{j-1}", "offset")
        rule = "+---+" + "+".join("-" * 13 for _ in heads) + "+"
        lines = [rule, "| j |" + "|".join(f"{h:>12} " for h in heads) + "|", rule]
        for j, L in enumerate(self.links):
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
