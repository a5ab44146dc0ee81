"""The diagram's `robots:` section: one entry -> a configured robot and its named poses.

    robots:
      p560:  {model: puma560, friction: viscous}
      p560p: {model: puma560, friction: viscous, perturb: 0.1, seed: 1}
      mine:  {file: my_robot.yaml, gravity: [0, 0, 9.81], tool: transl(0, 0, 0.1)}
      arm:   {links: [{alpha: 0, a: 1, m: 1}, ...], convention: standard}
      scara: {twists: [{w: [0, 0, 1], q: [0, 0, 0]}, ...], home: transl(0, 0.65, 0.4)}

Exactly one of `model` (a built-in), `file` (a robot YAML file, relative to the diagram),
`links` (an inline table, same keys as a robot file) or `twists` (a TwistRobot: twists,
home and optional links, see `twists.section`) says what the robot is; the options
`friction` (full | viscous | none, default full), the friction values `B` and `Tc` (per
joint, replacing the model's), `perturb` with `seed`, `gravity`, `base`, `tool` and
`payload` ({mass, com, frame}) configure it (see RobotBase.configure). Values may use the
diagram's top-level parameters that need no robot (the compiler's evaluator).
docs/robots.md documents every key.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from blocksim.language.diagram import suggest

from .robot_base import joint_friction

SOURCES = ("model", "file", "links", "twists")
INLINE_KEYS = ("name", "manufacturer", "convention", "poses")
TWIST_KEYS = ("home",)
OPTIONS = ("friction", "B", "Tc", "perturb", "seed", "gravity", "base", "tool", "payload")
LINK_NUMBERS = ("alpha", "a", "theta", "d", "offset", "m", "r", "I", "Jm", "G", "B", "Tc", "qlim")


def build_robot(name, options, evaluate, base_dir):
    """Build one entry of the robots section. `options` maps keys to located raw values
    (`.raw`, `.loc`) plus '__loc__'; `evaluate(value, what)` evaluates an expression at its
    location. Returns (robot, poses)."""
    from . import models

    loc = options["__loc__"]
    keys = [k for k in options if k != "__loc__"]
    known = SOURCES + OPTIONS + INLINE_KEYS + TWIST_KEYS
    for key in keys:
        if key not in known:
            raise options[key].loc.error(
                f"unknown robot option '{key}'{suggest(key, known)}",
                hint="options: " + ", ".join(known))
    # with twists, links is the twist robot's table of link frames and inertias
    given = [k for k in SOURCES if k in options and not (k == "links" and "twists" in options)]
    if len(given) != 1:
        raise loc.error(f"robot '{name}' needs exactly one of model, file, links or twists"
                        + (f" (got {', '.join(given)})" if given else ""))
    source = options[given[0]]
    inline = [k for k in INLINE_KEYS if k in options]
    if inline and given[0] not in ("links", "twists"):
        raise options[inline[0]].loc.error(f"'{inline[0]}' belongs to an inline robot (links:)")
    if "home" in options and given[0] != "twists":
        raise options["home"].loc.error("'home' belongs to a twist robot (twists:)")
    try:
        if given[0] == "model":
            builtin = models.available() + sorted(models.ALIASES)
            if source.raw not in builtin:
                raise source.loc.error(f"unknown robot model {source.raw!r}"
                                       f"{suggest(source.raw, builtin)}",
                                       hint="built-in models: " + ", ".join(models.available()))
            robot = models.load_robot(source.raw)
        elif given[0] == "file":
            path = Path(base_dir) / str(source.raw)
            if not path.is_file():
                raise source.loc.error(f"robot file not found: {source.raw}")
            robot = models.load_robot(path)
        elif given[0] == "twists":
            from .twists.section import build_twist_robot
            robot = build_twist_robot(name, options, evaluate)
        else:
            data = {k: _plain(options[k].raw) for k in inline}
            data["links"] = _evaluate_links(source, evaluate)
            data.setdefault("name", name)
            robot = models.robot_from_dict(data, source=f"{source.loc.file}:{source.loc.line}")
    except models.RobotDataError as e:
        raise source.loc.error(f"robot '{name}': {e}") from None

    kw = {}
    for key in OPTIONS:
        if key not in options:
            continue
        value = options[key]
        if key == "friction":
            if value.raw not in ("full", "viscous", "none"):
                raise value.loc.error(f"friction must be full, viscous or none, got {value.raw!r}")
            kw[key] = value.raw
        elif key == "payload":
            kw[key] = _payload(value, evaluate)
        elif key in ("B", "Tc"):
            try:
                kw[key] = joint_friction(robot.n, **{key: evaluate(value, key)})[key == "Tc"]
            except ValueError as e:
                raise value.loc.error(f"robot '{name}': {key}: {e}") from None
        elif key == "seed":
            seed = evaluate(value, "seed")
            if np.ndim(seed) or not np.isfinite(seed) or seed != int(seed) or seed < 0:
                raise value.loc.error(f"seed must be a non-negative integer, got "
                                      f"{np.asarray(seed).tolist()!r}")
            kw[key] = int(seed)
        else:
            arr = np.asarray(evaluate(value, key), dtype=float)
            want = {"perturb": (), "gravity": (3,), "base": (4, 4), "tool": (4, 4)}[key]
            if arr.shape != want:
                raise value.loc.error(f"robot option '{key}' must have shape {want}, got {arr.shape}")
            if not np.isfinite(arr).all():
                raise value.loc.error(f"robot option '{key}' must be finite, got {arr.tolist()}")
            kw[key] = float(arr) if key == "perturb" else arr
    if "perturb" in kw and not 0 <= kw["perturb"] < 1:
        raise options["perturb"].loc.error("perturb must be in [0, 1)")
    try:
        robot = robot.configure(**kw)
    except ValueError as e:
        raise loc.error(f"robot '{name}': {e}") from None
    return robot, {k: np.asarray(v, dtype=float) for k, v in robot.poses.items()}


def _payload(value, evaluate):
    raw = value.raw
    if not isinstance(raw, dict) or set(raw) - {"mass", "com", "frame"} or "mass" not in raw:
        raise value.loc.error("payload must be {mass: m, com: [x, y, z], frame: tool or link}")
    frame = raw.get("frame", "tool")
    if frame not in ("tool", "link"):
        raise value.loc.error(f"payload frame must be tool or link, got {frame!r}")
    mass = np.asarray(evaluate(type(value)(raw["mass"], value.loc), "payload mass"), dtype=float)
    com = np.asarray(evaluate(type(value)(raw.get("com", [0, 0, 0]), value.loc), "payload com"),
                     dtype=float)
    if mass.shape != () or not np.isfinite(mass) or mass < 0:
        raise value.loc.error(f"payload mass must be one finite number >= 0 (kg), got "
                              f"{mass.tolist()!r}")
    if com.shape != (3,) or not np.isfinite(com).all():
        raise value.loc.error(f"payload com must be a finite 3-vector (m), got {com.tolist()!r}")
    return (float(mass), com, frame)


def _evaluate_links(source, evaluate):
    """Inline link tables may use expressions (pi/2, -pi/2, parameters are not yet known)."""
    if not isinstance(source.raw, list) or not source.raw:
        raise source.loc.error("links must be a non-empty list of link mappings")
    links = []
    for i, link in enumerate(source.raw):
        if not isinstance(link, dict):
            raise source.loc.error(f"links[{i}] must be a mapping")
        out = {}
        for key, raw in link.items():
            if key in LINK_NUMBERS:
                value = evaluate(type(source)(raw, source.loc), f"links[{i}].{key}")
                out[key] = np.asarray(value, dtype=float).tolist()
            else:
                out[key] = _plain(raw)
        links.append(out)
    return links


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def describe(robots):
    """What `blocksim check` says about a diagram's robots (name -> robot): the kernels that
    run them, then each robot as `print(robot)` shows it (joints numbered 1..n, coordinates
    q1..qn, as in the toolbox) and the friction it has."""
    from .backend import describe as kernels

    lines = [kernels()]
    for name, robot in robots.items():
        text = str(robot).splitlines()
        friction = "none" if not (robot.B.any() or robot.Tc.any()) else \
            "viscous only" if not robot.Tc.any() else \
            "Coulomb only" if not robot.B.any() else "viscous and Coulomb"
        lines += [f"robot {name}: {text[0]}", *(f"  {line}" for line in text[1:]),
                  f"  friction: {friction}"]
    return "\n".join(lines)
