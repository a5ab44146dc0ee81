"""A twist-defined robot as an entry of a diagram's `robots:` section.

    robots:
      scara:
        twists:                                # one per joint, base frame, at q = 0
          - {w: [0, 0, 1], q: [0, 0, 0]}       # revolute about w through q: screw(w, q)
          - [0.35, 0, 0, 0, 0, 1]              # twist coordinates (v, w)
          - {w: [0, 0, 1], q: [0, 0.65, 0], h: 0.01}   # screw with pitch h (m/rad)
          - {v: [0, 0, 1]}                     # prismatic along v
        home: transl(0, 0.65, 0.4)             # tool pose g_st(0) at q = 0
        links:                                 # optional, one mapping per joint
          - {frame: "transl(0, 0.175, 0.4)", m: 5, I: [0.01, 0.05, 0.05, 0, 0, 0]}
        poses: {qz: [0, 0, 0, 0]}              # and name, manufacturer

(In a `{...}` mapping an expression with commas, such as the frame above, is quoted.) A link
mapping has the keys `frame` (home pose of the link frame, default ``default_frames``), `m`,
`r`, `I`, `Jm`, `G`, `B`, `Tc`, `qlim` (see ``TwistRobot``). The options of every robot
(friction, gravity, base, tool, payload, perturb) apply after.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from blocksim.language.diagram import suggest

from ..link import inertia_tensor
from .lie import screw, translation
from .robot import TwistRobot, default_frames

TWIST_KEYS = ("w", "q", "h", "v")
_LINK_SHAPES = {"frame": [(4, 4)], "m": [()], "r": [(3,)], "I": [(6,), (3, 3)], "Jm": [()],
                "G": [()], "B": [()], "Tc": [(), (2,)], "qlim": [(2,)]}


def _item_loc(loc, node, i):
    """The location of item/key i of a YAML list or mapping (its line when known)."""
    line = node.item_line(i) if hasattr(node, "item_line") else \
        node.key_line(i) if hasattr(node, "key_line") else None
    return replace(loc, line=line) if line else loc


def build_twist_robot(name, options, evaluate):
    """The TwistRobot of one `robots:` entry with a `twists` key (before the common
    options). `options` and `evaluate` as in ``blocks.robot.section.build_robot``."""
    if "convention" in options:
        raise options["convention"].loc.error("'convention' belongs to a DH robot (links:), "
                                              "not to a twist robot")
    source = options["twists"]

    def value(raw, loc, what, shape=None):
        x = np.asarray(evaluate(type(source)(raw, loc), what), dtype=float)
        if shape is not None and x.shape != shape:
            raise loc.error(f"{what} must have shape {shape}, got {x.shape}")
        return x

    raw = source.raw
    if not isinstance(raw, list) or not raw:
        raise source.loc.error("twists must be a non-empty list: [v, w] 6-vectors, "
                               "{w: axis, q: point} (revolute) or {v: direction} (prismatic)")
    twists = [_twist(item, _item_loc(source.loc, raw, i), f"twists[{i}]", value)
              for i, item in enumerate(raw)]
    n = len(twists)
    if "home" not in options:
        raise source.loc.error(f"robot '{name}': a twist robot needs 'home', the tool pose at "
                               "q = 0 (e.g. transl(0, 0.65, 0.4))")
    home = value(options["home"].raw, options["home"].loc, "home", (4, 4))
    kw = _links(options["links"], n, twists, value) if "links" in options else {}
    for key in ("name", "manufacturer"):
        if key in options:
            kw[key] = str(options[key].raw)
    kw.setdefault("name", name)
    if "poses" in options:
        kw["poses"] = _poses(options["poses"], n, value)
    try:
        return TwistRobot(twists, home, **kw)
    except ValueError as e:
        raise source.loc.error(f"robot '{name}': {e}") from None


def _twist(item, loc, what, value):
    """Twist coordinates (6,) of one entry: a 6-vector, {w, q[, h]} or {v}."""
    if not isinstance(item, dict):
        return value(item, loc, what, (6,))
    for key in item:
        if key not in TWIST_KEYS:
            raise loc.error(f"{what}: unknown key '{key}'{suggest(key, TWIST_KEYS)}",
                            hint="a twist is [v1, v2, v3, w1, w2, w3], {w: axis, q: point} "
                                 "(h: pitch) or {v: direction}")
    if "v" in item:
        if set(item) != {"v"}:
            raise loc.error(f"{what}: a prismatic joint has only 'v' (its direction)")
        return translation(value(item["v"], loc, f"{what}.v", (3,)))
    if set(item) - {"h"} != {"w", "q"}:
        raise loc.error(f"{what}: a revolute joint needs 'w' (axis) and 'q' (a point on it)")
    h = float(value(item["h"], loc, f"{what}.h", ())) if "h" in item else 0.0
    return screw(value(item["w"], loc, f"{what}.w", (3,)), value(item["q"], loc, f"{what}.q", (3,)), h)


def _links(option, n, twists, value):
    """Per-joint arrays of the `links:` table (keyword arguments of TwistRobot)."""
    raw = option.raw
    if not isinstance(raw, list) or len(raw) != n:
        raise option.loc.error(f"links must be a list of {n} link mappings, one per twist")
    kw = {"frames": default_frames(np.array(twists)), "m": np.zeros(n), "r": np.zeros((n, 3)),
          "I": np.zeros((n, 3, 3)), "Jm": np.zeros(n), "G": np.ones(n), "B": np.zeros(n),
          "Tc": np.zeros((n, 2)), "qlim": np.full((n, 2), np.nan)}
    for i, link in enumerate(raw):
        loc = _item_loc(option.loc, raw, i)
        if not isinstance(link, dict):
            raise loc.error(f"links[{i}] must be a mapping")
        for key, text in link.items():
            if key not in _LINK_SHAPES:
                raise loc.error(f"links[{i}]: unknown key '{key}'{suggest(key, _LINK_SHAPES)}",
                                hint="link keys: " + ", ".join(_LINK_SHAPES))
            x = value(text, loc, f"links[{i}].{key}")
            if x.shape not in _LINK_SHAPES[key]:
                raise loc.error(f"links[{i}].{key} must have shape "
                                + " or ".join(map(str, _LINK_SHAPES[key])) + f", got {x.shape}")
            if key == "I":
                try:
                    x = inertia_tensor(x)
                except ValueError as e:
                    raise loc.error(f"links[{i}].I: {e}") from None
            elif key == "Tc" and x.shape == ():
                x = np.array([x, -x])
            kw["frames" if key == "frame" else key][i] = x
    return kw


def _poses(option, n, value):
    raw = option.raw
    if not isinstance(raw, dict):
        raise option.loc.error("poses must be a mapping name -> joint values")
    return {str(k): value(v, _item_loc(option.loc, raw, k), f"poses.{k}", (n,))
            for k, v in raw.items()}
