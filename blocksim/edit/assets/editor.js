// blocksim edit: the page. Plain JavaScript, no build step, no network beyond this server.
// The server owns the diagram (its YAML text) and its geometry: every edit is one request to
// /api/edit and the answer is the level's new view, which is drawn again whole. The canvas only
// previews what a gesture is doing (a block being dragged, a wire being drawn).
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const SVGNS = "http://www.w3.org/2000/svg";
const FONT = '"DejaVu Sans", Verdana, sans-serif';
// matplotlib's colour cycle: a line has the colour it has in the run's PNG figures
const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"];

const state = {
  level: [],          // subsystem names from the top
  view: null,         // the server's view of the level
  catalogue: null,
  types: {},          // type -> catalogue entry
  selected: new Set(), // "b:NAME" and "w:ID"
  clip: null,         // what Ctrl+C copied (from /api/copy)
  pastes: 0,
  world: { x: 40, y: 40, k: 1.5 },
  fitted: false,
  pending: 0,         // requests not answered yet
  run: null,          // the last run status
  results: null,
  runError: null,     // {block, text} of the last failed run
  plotPick: null,     // the results tab shown
  checked: {},        // field key -> problems from typing (trial checks)
  space: false,       // the space bar held: a drag pans
};

// ---- small helpers ------------------------------------------------------------------------
function $(sel, root) { return (root || document).querySelector(sel); }
function $$(sel, root) { return Array.from((root || document).querySelectorAll(sel)); }

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) node.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c) node.append(c);
  return node;
}

function toast(text, error) {
  const t = $("#toast");
  t.textContent = text;
  t.hidden = false;
  t.classList.toggle("error", !!error);
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, error ? 6000 : 2500);
}

async function api(method, name, body, query) {
  state.pending++;
  try {
    const url = `/api/${name}${query ? "?" + new URLSearchParams(query) : ""}`;
    const reply = await fetch(url, {
      method, headers: { "X-Blocksim-Token": TOKEN, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body) });
    const data = await reply.json();
    if (!reply.ok) throw new Error(data.error || `${reply.status}`);
    return data;
  } finally {
    state.pending--;
  }
}

// edits: every one answers with the level's new view
async function edit(op, args) {
  try {
    const view = await api("POST", "edit", { level: state.level, op, ...args });
    show(view);
    return view;
  } catch (e) {
    toast(e.message, true);
    return null;
  }
}

async function load(level) {
  try {
    const view = await api("GET", "diagram", undefined, { level: level.join("/") });
    state.level = level;
    state.selected.clear();
    state.fitted = false;
    show(view);
  } catch (e) { toast(e.message, true); }
}

// ---- drawing the level ----------------------------------------------------------------------
function show(view) {
  state.view = view;
  state.checked = {};  // what typing tried is superseded by the diagram as it now is
  const keys = new Set(view.boxes.map(b => "b:" + b.key).concat(view.wires.map(w => "w:" + w.id)));
  for (const s of Array.from(state.selected)) if (!keys.has(s)) state.selected.delete(s);
  if (view.made) { state.selected = new Set(view.made.map(n => "b:" + n)); }
  draw();
  if (!state.fitted) {  // a level opened with blocks is fitted once; an empty one is left alone
    if (view.boxes.length) fit(); else applyWorld();
    state.fitted = true;
  }
  crumbs();
  $("#dirty").textContent = view.dirty ? "\u25cf unsaved" : "";
  document.title = `${view.dirty ? "\u25cf " : ""}${view.file} - blocksim edit`;
  $('[data-action="undo"]').disabled = !view.can_undo;
  $('[data-action="redo"]').disabled = !view.can_redo;
  problems();
  inspect();
}

function draw() {
  const view = state.view;
  const wires = $("#wires"), boxes = $("#boxes");
  wires.replaceChildren();
  boxes.replaceChildren();
  $("#empty").hidden = view.boxes.length > 0;
  const bad = problemsByBlock();
  for (const w of view.wires) {
    if (!w.points) continue;
    const points = w.points.map(p => p.join(",")).join(" ");
    const wrong = view.problems.some(p => p.path && p.path[0] === "wires" && p.path[1] === w.index);
    wires.append(svg("g", { class: "wire" + (state.selected.has("w:" + w.id) ? " selected" : "")
                                + (wrong ? " has-error" : ""), "data-wire": w.id },
      svg("polyline", { class: "hit", points }), svg("polyline", { class: "line", points })));
  }
  for (const [x, y] of view.dots) wires.append(svg("circle", { class: "dot", cx: x, cy: y, r: 1.8 }));
  for (const [x, y, text] of view.labels) {
    wires.append(svg("text", { class: "shape-label", x, y, "font-family": FONT }, text));
  }
  for (const b of view.boxes) boxes.append(boxElement(b, bad[b.key]));
}

function boxElement(b, issues) {
  const classes = ["box", "kind-" + b.kind];
  if (state.selected.has("b:" + b.key)) classes.push("selected");
  if (issues && issues.length) classes.push("has-error");
  if (state.runError && state.runError.box === b.key) classes.push("run-error");
  const g = svg("g", { class: classes.join(" "), "data-block": b.key,
                       transform: `translate(${b.x},${b.y})` });
  const round = b.kind === "inport" || b.kind === "outport" ? b.h / 2 : 2;
  g.append(svg("rect", { class: "body", width: b.w, height: b.h, rx: round, ry: round,
                         fill: state.view.fills[b.kind] || "#fff" }));
  const styles = state.view.styles;
  for (const [x, y, text, style, ha] of b.texts) {
    const s = styles[style];
    g.append(svg("text", {
      x: x - b.x, y: y - b.y, "font-size": s.size, "font-weight": s.weight, "font-style": s.style,
      fill: s.colour, "font-family": FONT, "dominant-baseline": "central",
      "text-anchor": ha === "center" ? "middle" : ha === "left" ? "start" : "end",
      class: style === "name" ? "name" : style }, text));
  }
  for (const side of ["inputs", "outputs"]) {
    for (const p of b[side]) {
      const x = side === "inputs" ? 0 : b.w, y = p.y - b.y;
      const mark = side === "inputs"
        ? `M${x - 5},${y - 3} L${x},${y} L${x - 5},${y + 3} z` : `M${x},${y - 3} L${x + 5},${y} L${x},${y + 3} z`;
      const title = `${b.key}.${p.name}` + (p.shape ? `  ${p.shape}` : "") +
                    (side === "inputs" ? "  (input)" : "  (output: drag to an input to wire)");
      g.append(svg("g", { class: `port ${side === "inputs" ? "in" : "out"}`, "data-port": `${b.key}.${p.name}` },
        svg("title", {}, title), svg("circle", { class: "hit", cx: x, cy: y, r: 6 }),
        svg("path", { class: "mark", d: mark })));
    }
  }
  if (issues && issues.length) {
    const badge = svg("g", { class: "badge", transform: `translate(${b.w - 2},2)` },
      svg("title", {}, issues.map(p => p.text).join("\n")),
      svg("circle", { r: 6 }), svg("text", { "text-anchor": "middle", "dominant-baseline": "central",
                                             "font-family": FONT }, "!"));
    g.append(badge);
  }
  return g;
}

function problemsByBlock() {
  const out = {};
  for (const p of state.view.problems) if (p.block) (out[p.block] = out[p.block] || []).push(p);
  return out;
}

function applyWorld() {
  const w = state.world;
  $("#world").setAttribute("transform", `translate(${w.x},${w.y}) scale(${w.k})`);
}

function fit() {
  const view = state.view;
  const svgEl = $("#canvas");
  const width = svgEl.clientWidth || 800, height = svgEl.clientHeight || 500;
  if (!view.boxes.length) { state.world = { x: 40, y: 40, k: 1.5 }; applyWorld(); return; }
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const b of view.boxes) {
    x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h);
  }
  for (const w of view.wires) for (const [x, y] of (w.points || [])) {
    x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
  }
  const k = Math.min(2, Math.max(0.2, Math.min((width - 40) / (x1 - x0 || 1), (height - 40) / (y1 - y0 || 1))));
  state.world = { k, x: (width - (x1 - x0) * k) / 2 - x0 * k, y: (height - (y1 - y0) * k) / 2 - y0 * k };
  applyWorld();
}

function zoom(factor, cx, cy) {
  const w = state.world;
  const svgEl = $("#canvas");
  if (cx === undefined) { cx = svgEl.clientWidth / 2; cy = svgEl.clientHeight / 2; }
  const k = Math.min(6, Math.max(0.1, w.k * factor));
  w.x = cx - (cx - w.x) * k / w.k;
  w.y = cy - (cy - w.y) * k / w.k;
  w.k = k;
  applyWorld();
}

function toWorld(clientX, clientY) {
  const r = $("#canvas").getBoundingClientRect();
  const w = state.world;
  return [(clientX - r.left - w.x) / w.k, (clientY - r.top - w.y) / w.k];
}

function crumbs() {
  const nav = $("#crumbs");
  nav.replaceChildren();
  const names = [state.view.name, ...state.level];
  names.forEach((name, i) => {
    if (i) nav.append(el("span", { class: "gt", text: "\u203a" }));
    const current = i === names.length - 1;
    nav.append(el("a", { class: current ? "current" : null, text: name, "data-level": i,
                         title: current ? state.view.file : "back to this level",
                         onclick: () => { if (!current) load(state.level.slice(0, i)); } }));
  });
}

// ---- problems ------------------------------------------------------------------------------
function problems() {
  const list = $("#problems");
  const items = state.view.problems;
  $("#problem-count").textContent = items.length ? `(${items.length})` : "";
  list.replaceChildren();
  if (!items.length) {
    list.append(el("div", { class: "ok", text: "No problems: blocksim check finds the diagram valid." }));
    return;
  }
  for (const p of items) {
    list.append(el("div", { class: "item", text: p.text, onclick: () => {
      if (p.block) { state.selected = new Set(["b:" + p.block]); selectionChanged(); }
      else if (p.path && p.path[0] === "wires") {
        const w = state.view.wires.find(w => w.index === p.path[1]);
        if (w) { state.selected = new Set(["w:" + w.id]); selectionChanged(); }
      } else { state.selected.clear(); selectionChanged(); }
    } }));
  }
}

function tab(name) {
  if (name === "results" && $("#panel").getBoundingClientRect().height < window.innerHeight * 0.35) {
    document.body.style.setProperty("--panel", `${Math.round(window.innerHeight * 0.42)}px`);
    if (state.view) fit();  // the canvas got shorter
  }
  for (const b of $$("#tabs [data-tab]")) b.classList.toggle("active", b.dataset.tab === name);
  $("#problems").hidden = name !== "problems";
  $("#results").hidden = name !== "results";
  if (name === "results") drawPlots();
}

// ---- the palette ---------------------------------------------------------------------------
function palette() {
  const root = $("#families");
  root.replaceChildren();
  for (const family of state.catalogue.families) {
    const [head] = family.title.split(":");
    const open = ["sources", "continuous", "math", "sinks"].includes(familyKey(family));
    const details = el("details", { open: open || null, "data-open": open ? "1" : "0" },
      el("summary", { text: head, title: family.title }));
    details.addEventListener("toggle", () => { if (!$("#search").value) details.dataset.open = details.open ? "1" : "0"; });
    for (const t of family.types) {
      state.types[t.type] = t;
      details.append(el("div", { class: "entry", "data-palette": t.type, title: t.summary,
                                  tabindex: 0 }, t.type, el("small", { text: t.summary })));
    }
    root.append(details);
  }
}

function familyKey(family) { return family.title.split(":")[0].toLowerCase(); }

function filterPalette(text) {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  for (const details of $$("#families details")) {
    let shown = 0;
    for (const entry of $$(".entry", details)) {
      const t = state.types[entry.dataset.palette];
      const hay = (t.type + " " + t.summary).toLowerCase();
      const ok = words.every(w => hay.includes(w));
      entry.hidden = !ok;
      shown += ok;
    }
    details.hidden = shown === 0;
    details.open = words.length ? shown > 0 : details.dataset.open === "1";
  }
}

function startPaletteDrag(event, type) {
  event.preventDefault();
  const ghost = el("div", { class: "ghost", text: type });
  document.body.append(ghost);
  const move = e => { ghost.style.left = `${e.clientX + 6}px`; ghost.style.top = `${e.clientY + 6}px`; };
  move(event);
  const up = e => {
    window.removeEventListener("pointermove", move);
    window.removeEventListener("pointerup", up);
    ghost.remove();
    const r = $("#canvas").getBoundingClientRect();
    if (e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom) {
      const [x, y] = toWorld(e.clientX, e.clientY);
      edit("add", { type, x: Math.round(x - 28), y: Math.round(y - 17) });
    }
  };
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", up);
}

function addAtCentre(type) {
  const c = $("#canvas");
  const [x, y] = toWorld(c.getBoundingClientRect().left + c.clientWidth / 2,
                         c.getBoundingClientRect().top + c.clientHeight / 2);
  edit("add", { type, x: Math.round(x), y: Math.round(y) });
}

// ---- canvas gestures -----------------------------------------------------------------------
function boxOf(key) { return state.view.boxes.find(b => b.key === key); }

function portPoint(id) {
  const dot = id.lastIndexOf(".");
  const b = boxOf(id.slice(0, dot));
  const name = id.slice(dot + 1);
  const input = b.inputs.find(p => p.name === name);
  if (input) return { x: b.x, y: input.y, side: "in", box: b, name };
  const output = b.outputs.find(p => p.name === name);
  return { x: b.x + b.w, y: output.y, side: "out", box: b, name };
}

function onCanvasDown(event) {
  if (event.button === 1 || (event.button === 0 && (event.altKey || state.space))) return startPan(event);
  if (event.button !== 0) return;
  $("#canvas").focus();
  const port = event.target.closest(".port");
  if (port) return startWire(event, port.dataset.port);
  const box = event.target.closest(".box");
  if (box) return startMove(event, box.dataset.block);
  const wire = event.target.closest(".wire");
  if (wire) {
    select("w:" + wire.dataset.wire, event.shiftKey);
    return;
  }
  startBand(event);
}

function select(key, add) {
  if (add) { if (state.selected.has(key)) state.selected.delete(key); else state.selected.add(key); }
  else if (!state.selected.has(key) || state.selected.size > 1) state.selected = new Set([key]);
  selectionChanged();
}

function selectionChanged() {
  // classes only: the elements stay (a double-click needs its two clicks on one element)
  for (const g of $$("#boxes [data-block]")) g.classList.toggle("selected", state.selected.has("b:" + g.dataset.block));
  for (const g of $$("#wires [data-wire]")) g.classList.toggle("selected", state.selected.has("w:" + g.dataset.wire));
  inspect();
}

function drag(event, onMove, onUp) {
  const id = event.pointerId;
  const canvas = $("#canvas");
  try { canvas.setPointerCapture(id); } catch (e) { /* a synthetic pointer */ }
  const move = e => onMove(e);
  const up = e => {
    canvas.removeEventListener("pointermove", move);
    canvas.removeEventListener("pointerup", up);
    canvas.removeEventListener("pointercancel", up);
    onUp(e);
  };
  canvas.addEventListener("pointermove", move);
  canvas.addEventListener("pointerup", up);
  canvas.addEventListener("pointercancel", up);
}

function startPan(event) {
  event.preventDefault();
  const start = { x: event.clientX, y: event.clientY, wx: state.world.x, wy: state.world.y };
  $("#canvas").classList.add("panning");
  drag(event, e => {
    state.world.x = start.wx + e.clientX - start.x;
    state.world.y = start.wy + e.clientY - start.y;
    applyWorld();
  }, () => $("#canvas").classList.remove("panning"));
}

function startBand(event) {
  const [x0, y0] = toWorld(event.clientX, event.clientY);
  const rect = svg("rect", { class: "band", x: x0, y: y0, width: 0, height: 0 });
  $("#overlay").append(rect);
  const keep = event.shiftKey ? new Set(state.selected) : new Set();
  let moved = false;
  drag(event, e => {
    const [x1, y1] = toWorld(e.clientX, e.clientY);
    moved = moved || Math.hypot(x1 - x0, y1 - y0) > 2;
    rect.setAttribute("x", Math.min(x0, x1)); rect.setAttribute("y", Math.min(y0, y1));
    rect.setAttribute("width", Math.abs(x1 - x0)); rect.setAttribute("height", Math.abs(y1 - y0));
  }, e => {
    rect.remove();
    const [x1, y1] = toWorld(e.clientX, e.clientY);
    state.selected = new Set(keep);
    if (moved) {
      const [ax, bx, ay, by] = [Math.min(x0, x1), Math.max(x0, x1), Math.min(y0, y1), Math.max(y0, y1)];
      for (const b of state.view.boxes) {
        if (b.x >= ax && b.x + b.w <= bx && b.y >= ay && b.y + b.h <= by) state.selected.add("b:" + b.key);
      }
    }
    selectionChanged();
  });
}

function startMove(event, key) {
  if (!state.selected.has("b:" + key)) {
    if (event.shiftKey) state.selected.add("b:" + key);
    else state.selected = new Set(["b:" + key]);
    selectionChanged();
  } else if (event.shiftKey) {
    return select("b:" + key, true);
  }
  const [x0, y0] = toWorld(event.clientX, event.clientY);
  const moving = state.view.boxes.filter(b => state.selected.has("b:" + b.key));
  const groups = moving.map(b => [b, $(`[data-block="${CSS.escape(b.key)}"]`)]);
  let dx = 0, dy = 0, moved = false;
  drag(event, e => {
    const [x, y] = toWorld(e.clientX, e.clientY);
    dx = x - x0; dy = y - y0;
    moved = moved || Math.hypot(dx, dy) * state.world.k > 3;
    if (!moved) return;
    for (const [b, g] of groups) g.setAttribute("transform", `translate(${b.x + dx},${b.y + dy})`);
    previewWires(new Set(moving.map(b => b.key)), dx, dy);
  }, () => {
    if (!moved) return;
    const snap = moving.length === 1 ? straighten(moving[0], dx, dy) : 0;
    const positions = {};
    for (const b of moving) positions[b.key] = [Math.round(b.x + dx), Math.round(b.y + dy + snap)];
    edit("move", { positions });
  });
}

function straighten(b, dx, dy) {
  // a box dropped near the height that makes one of its wires straight goes there
  let best = 0;
  for (const w of state.view.wires) {
    let mine, other;
    if (w.dst === b.key && w.points) { mine = b.inputs.find(p => p.name === w.dst_port); other = w.points[0][1]; }
    else if (w.src === b.key && w.points) { mine = b.outputs.find(p => p.name === w.src_port); other = w.points[w.points.length - 1][1]; }
    else continue;
    if (!mine || (w.src === w.dst)) continue;
    const delta = other - (mine.y + dy);
    if (Math.abs(delta) < 8 && (best === 0 || Math.abs(delta) < Math.abs(best))) best = delta;
  }
  return best;
}

function previewWires(moving, dx, dy) {
  for (const w of state.view.wires) {
    if (!w.points || !(moving.has(w.src) || moving.has(w.dst))) continue;
    const g = $(`[data-wire="${CSS.escape(w.id)}"]`);
    if (!g) continue;
    const a = w.points[0], z = w.points[w.points.length - 1];
    const [x1, y1] = moving.has(w.src) ? [a[0] + dx, a[1] + dy] : a;
    const [x2, y2] = moving.has(w.dst) ? [z[0] + dx, z[1] + dy] : z;
    const points = orthogonal(x1, y1, x2, y2).map(p => p.join(",")).join(" ");
    for (const line of $$("polyline", g)) line.setAttribute("points", points);
  }
}

function orthogonal(x1, y1, x2, y2) {
  if (x2 >= x1 + 16) { const xm = (x1 + x2) / 2; return [[x1, y1], [xm, y1], [xm, y2], [x2, y2]]; }
  const ym = Math.max(y1, y2) + 30;
  return [[x1, y1], [x1 + 10, y1], [x1 + 10, ym], [x2 - 12, ym], [x2 - 12, y2], [x2, y2]];
}

function startWire(event, portId) {
  event.preventDefault();
  const from = portPoint(portId);
  const line = svg("polyline", { class: "draft" });
  $("#overlay").append(line);
  let target = null;
  drag(event, e => {
    const [x, y] = toWorld(e.clientX, e.clientY);
    const hit = document.elementFromPoint(e.clientX, e.clientY);
    const port = hit && hit.closest && hit.closest(".port");
    if (target) target.classList.remove("target");
    target = null;
    if (port && port.dataset.port !== portId && port.classList.contains(from.side === "out" ? "in" : "out")) {
      target = port;
      port.classList.add("target");
    }
    const end = target ? portPoint(target.dataset.port) : { x, y };
    const pts = from.side === "out" ? orthogonal(from.x, from.y, end.x, end.y) : orthogonal(end.x, end.y, from.x, from.y);
    line.setAttribute("points", pts.map(p => p.join(",")).join(" "));
  }, () => {
    line.remove();
    if (!target) return;
    target.classList.remove("target");
    const other = target.dataset.port;
    const [src, dst] = from.side === "out" ? [portId, other] : [other, portId];
    edit("connect", { src, dst });
  });
}

function onCanvasDouble(event) {
  // the element under the pointer (the click's own target is the canvas, which held the pointer)
  const under = document.elementFromPoint(event.clientX, event.clientY) || event.target;
  const box = under.closest && under.closest(".box");
  if (!box) return;
  const key = box.dataset.block;
  const b = boxOf(key);
  if (under.classList.contains("name") && (b.kind === "block" || b.kind === "subsystem")) {
    return rename(key);
  }
  if (b.kind === "subsystem") return load([...state.level, key]);
  state.selected = new Set(["b:" + key]);
  selectionChanged();
  const first = $("#inspector .field input, #inspector .field select");
  if (first) first.focus();
}

function rename(key) {
  const b = boxOf(key);
  if (!b || !(b.kind === "block" || b.kind === "subsystem")) return;
  const r = $("#canvas").getBoundingClientRect(), s = $("#stage").getBoundingClientRect();
  const w = state.world;
  const input = el("input", { class: "rename", value: key, "aria-label": "block name" });
  input.style.left = `${r.left - s.left + w.x + b.x * w.k}px`;
  input.style.top = `${r.top - s.top + w.y + (b.y + 2) * w.k}px`;
  input.style.width = `${Math.max(b.w * w.k, 90)}px`;
  $("#stage").append(input);
  input.focus();
  input.select();
  let done = false;
  const finish = commit => {
    if (done) return;
    done = true;
    const name = input.value.trim();
    input.remove();
    $("#canvas").focus();
    if (commit && name && name !== key) edit("rename", { block: key, name }).then(v => {
      if (v) { state.selected = new Set(["b:" + name]); selectionChanged(); }
    });
  };
  input.addEventListener("keydown", e => {
    if (e.key === "Enter") finish(true);
    else if (e.key === "Escape") finish(false);
    e.stopPropagation();
  });
  input.addEventListener("blur", () => finish(true));
}

// ---- keyboard ------------------------------------------------------------------------------
function typing(event) {
  const t = event.target;
  return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
}

async function onKey(event) {
  const mod = event.ctrlKey || event.metaKey;
  if (mod && event.key.toLowerCase() === "s") { event.preventDefault(); return save(); }
  if (mod && event.key.toLowerCase() === "r") { event.preventDefault(); return run(); }
  if (typing(event)) return;
  const key = event.key.toLowerCase();
  if (mod && key === "z" && !event.shiftKey) { event.preventDefault(); return history("undo"); }
  if (mod && ((key === "z" && event.shiftKey) || key === "y")) { event.preventDefault(); return history("redo"); }
  if (mod && key === "c") { event.preventDefault(); return copy(); }
  if (mod && key === "x") { event.preventDefault(); await copy(); return remove(); }
  if (mod && key === "v") { event.preventDefault(); return paste(); }
  if (mod && key === "a") {
    event.preventDefault();
    state.selected = new Set(state.view.boxes.filter(b => b.kind === "block" || b.kind === "subsystem").map(b => "b:" + b.key));
    selectionChanged(); return;
  }
  if (event.key === "Delete" || event.key === "Backspace") { event.preventDefault(); return remove(); }
  if (event.key === "F2") {
    const only = [...state.selected].filter(s => s.startsWith("b:"));
    if (only.length === 1) { event.preventDefault(); rename(only[0].slice(2)); }
    return;
  }
  if (event.key === "Escape") { state.selected.clear(); selectionChanged(); return; }
  if (key === "f" && !mod) return fit();
  if (event.key === " ") { state.space = true; }
  if ((event.key === "+" || event.key === "=") && !mod) return zoom(1.2);
  if (event.key === "-" && !mod) return zoom(1 / 1.2);
}

async function remove() {
  const blocks = [...state.selected].filter(s => s.startsWith("b:")).map(s => s.slice(2));
  const wires = [...state.selected].filter(s => s.startsWith("w:")).map(s => s.slice(2));
  if (!blocks.length && !wires.length) return;
  await edit("delete", { blocks, wires });
}

async function history(which) {
  try { show(await api("POST", which, { level: state.level })); } catch (e) { toast(e.message, true); }
}

async function copy() {
  const blocks = [...state.selected].filter(s => s.startsWith("b:")).map(s => s.slice(2));
  if (!blocks.length) return;
  try {
    state.clip = await api("POST", "copy", { level: state.level, blocks });
    state.pastes = 0;
    toast(`copied ${blocks.length} block${blocks.length > 1 ? "s" : ""}`);
  } catch (e) { toast(e.message, true); }
}

async function paste() {
  if (!state.clip) return;
  state.pastes++;
  await edit("paste", { clip: state.clip, offset: [30 * state.pastes, 30 * state.pastes] });
}

async function save() {
  try {
    const view = await api("POST", "save", { level: state.level });
    show(view);
    toast(view.saved.length ? `saved ${view.file}` : "nothing to save: the file is as on disk");
  } catch (e) { toast(e.message, true); }
}

// ---- the inspector -------------------------------------------------------------------------
function inspect() {
  const root = $("#inspector");
  const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  root.replaceChildren();
  const blocks = [...state.selected].filter(s => s.startsWith("b:")).map(s => s.slice(2));
  const wires = [...state.selected].filter(s => s.startsWith("w:")).map(s => s.slice(2));
  if (blocks.length === 1 && !wires.length) blockPanel(root, blocks[0]);
  else if (wires.length === 1 && !blocks.length) wirePanel(root, wires[0]);
  else if (state.selected.size > 1) {
    root.append(el("h2", { text: `${state.selected.size} selected` }),
                el("p", { class: "muted", text: "Delete removes them; Ctrl+C copies the blocks." }),
                el("div", { class: "actions" }, el("button", { text: "Delete", onclick: remove })));
  } else diagramPanel(root);
  if (focused) {
    const again = $(`[data-key="${CSS.escape(focused)}"]`, root);
    if (again) again.focus();
  }
}

function fieldProblems(path) {
  const key = path.join("\u0000");
  const trial = state.checked[key];
  const list = trial || state.view.problems;
  return list.filter(p => p.path && p.path.length === path.length && p.path.every((s, i) => s === path[i]));
}

function blockPanel(root, name) {
  const b = boxOf(name);
  if (b && (b.kind === "inport" || b.kind === "outport")) {
    root.append(el("h2", { text: `${b.kind === "inport" ? "Input" : "Output"} port ${name.slice(name.indexOf(":") + 1)}` }),
                el("p", { class: "muted", text: "A port of this subsystem: wire it to the blocks it stands for. Its entries are under the subsystem's inputs and outputs (select nothing)." }));
    return;
  }
  const block = state.view.blocks[name];
  if (!block) return;
  const entry = state.types[block.type];
  root.append(el("h2", {}, el("input", { value: name, "data-key": "name", "aria-label": "block name",
    onchange: e => { const v = e.target.value.trim(); if (v && v !== name) edit("rename", { block: name, name: v }).then(r => { if (r) { state.selected = new Set(["b:" + v]); selectionChanged(); } }); } })));
  root.append(el("div", { class: "type", text: block.type + (entry ? "" : " (unknown type)") }));
  if (entry) {
    root.append(el("div", { class: "summary", text: entry.summary }));
    root.append(el("details", { class: "doc" }, el("summary", { text: "documentation" }), el("pre", { text: entry.doc })));
  }
  const own = fieldProblems(["blocks", name]);
  for (const p of own) root.append(el("div", { class: "problem-text", text: p.text }));
  if (block.type === "subsystem") {
    root.append(el("div", { class: "actions" }, el("button", { text: "Open subsystem", onclick: () => load([...state.level, name]) })));
  }
  root.append(el("h3", { text: "Parameters" }));
  const params = entry ? entry.params : [];
  const known = new Set(params.map(p => p.name));
  for (const p of params) {
    if (block.type === "subsystem" && p.name === "file" && block.values.diagram) continue;
    root.append(paramField(name, p, block.values[p.name]));
  }
  for (const [key, value] of Object.entries(block.values)) {
    if (known.has(key) || key === "diagram") continue;
    root.append(paramField(name, { name: key, kind: "value", doc: "not a parameter of this block type", required: false }, value));
  }
  root.append(el("div", { class: "actions" },
    el("button", { text: "Rename (F2)", onclick: () => rename(name) }),
    el("button", { text: "Delete", onclick: remove })));
}

function shownText(kind, entry) {
  if (!entry) return "";
  if (typeof entry.value === "string") return entry.value;
  if (kind === "bool" && typeof entry.value === "boolean") return String(entry.value);
  return entry.source === null || entry.source === undefined ? "" : entry.source;
}

function literal(kind) { return ["string", "choice", "path", "resource"].includes(kind); }

function defaultText(p) {
  if (p.required) return "required";
  if (p.default === null || p.default === undefined || p.default === "" || (Array.isArray(p.default) && !p.default.length)) return "unset";
  return "default " + (Array.isArray(p.default) ? JSON.stringify(p.default) : String(p.default));
}

function paramField(block, p, entry) {
  const path = ["blocks", block, p.name];
  return field({
    path, label: p.name + (p.required ? " *" : ""), kind: p.kind, doc: p.doc, choices: p.choices,
    section: p.section, placeholder: defaultText(p), text: shownText(p.kind, entry),
    send: text => ({ op: "param", block, param: p.name, text, literal: literal(p.kind) }),
  });
}

function field(f) {
  const key = f.path.join("\u0000");
  const problems = fieldProblems(f.path);
  const box = el("div", { class: "field" + (problems.length ? " bad" : ""), "data-field": f.path.join(".") });
  box.append(el("label", {}, el("span", { text: f.label }), el("span", { class: "kind", text: f.kind === "choice" ? "" : f.kind })));
  let input;
  const options = f.kind === "choice" ? f.choices : f.kind === "bool" ? ["true", "false"]
    : f.kind === "resource" ? Object.keys((state.view.sections || {})[f.section] || {}) : null;
  if (options) {
    input = el("select", { "data-key": key, "aria-label": f.path.join(".") },
      el("option", { value: "", text: f.placeholder ? `(${f.placeholder})` : "" }),
      options.map(o => el("option", { value: o, text: o, selected: o === f.text || null })));
    if (f.text && !options.includes(f.text)) input.append(el("option", { value: f.text, text: f.text, selected: true }));
  } else {
    input = el("input", { value: f.text, placeholder: f.placeholder || "", "data-key": key,
                          "aria-label": f.path.join("."), spellcheck: "false", autocomplete: "off" });
  }
  const commit = () => {
    clearTimeout(field.timer);
    const text = input.value;
    if (text === f.text) return;
    edit(f.send(text).op, f.send(text));
  };
  input.addEventListener("change", commit);
  input.addEventListener("keydown", e => { if (e.key === "Enter") { e.preventDefault(); input.blur(); } });
  if (input.tagName === "INPUT") {
    input.addEventListener("input", () => {
      clearTimeout(field.timer);
      field.timer = setTimeout(async () => {
        try {
          const answer = await api("POST", "check", { level: state.level, ...f.send(input.value) });
          state.checked[key] = answer.problems;
          const bad = fieldProblems(f.path);
          box.classList.toggle("bad", bad.length > 0);
          $$(".problem", box).forEach(n => n.remove());
          for (const p of bad) box.append(el("div", { class: "problem", text: p.text }));
        } catch (e) { /* the edit itself will say */ }
      }, 250);
    });
  }
  box.append(input);
  if (f.doc) box.append(el("div", { class: "doc", text: f.doc }));
  for (const p of problems) box.append(el("div", { class: "problem", text: p.text }));
  return box;
}

function wirePanel(root, id) {
  const w = state.view.wires.find(w => w.id === id);
  if (!w) return;
  root.append(el("h2", { text: "Wire" }), el("div", { class: "summary", text: `${w.src}.${w.src_port} \u2192 ${w.dst}.${w.dst_port}` }),
              el("div", { class: "muted", text: `written: ${w.text}` }));
  for (const p of state.view.problems.filter(p => p.path && p.path[0] === "wires" && p.path[1] === w.index)) {
    root.append(el("div", { class: "problem-text", text: p.text }));
  }
  if (w.index !== undefined) {  // a record names the signal from the top: Ctl/Err.y
    const signal = [...state.level, w.text.split("->")[0].trim()].join("/");
    const recorded = (state.view.sections.record) || {};
    const names = Object.entries(recorded).filter(([, e]) => e.value === signal).map(([n]) => n);
    root.append(el("h3", { text: "Record" }));
    root.append(el("p", { class: "muted", text: names.length ? `recorded as ${names.join(", ")} (results.npz)` : "Record this signal in the run's results (results.npz) under a name:" }));
    const name = el("input", { placeholder: "name, e.g. x", "data-key": "record-name", "aria-label": "record name" });
    const record = () => { if (name.value.trim()) edit("entry", { section: "record", key: name.value.trim(), text: signal, literal: true }); };
    name.addEventListener("keydown", e => { if (e.key === "Enter") record(); });
    root.append(el("div", { class: "row wide" }, name, el("button", { text: "Record", onclick: record })));
  }
  root.append(el("div", { class: "actions" }, el("button", { text: "Delete wire", onclick: remove })));
}

const SIMULATION = [["stop", "value", "end time (s), required"], ["start", "value", "start time (s), default 0"],
  ["solver", "choice", "rk45 unless said"], ["rtol", "value", "adaptive solvers: relative tolerance"],
  ["atol", "value", "adaptive solvers: absolute tolerance"], ["max_step", "value", "adaptive solvers: largest step"],
  ["step", "value", "fixed-step solvers: the step"], ["output_interval", "value", "record at start + k*interval"],
  ["mode", "choice", "normal, accelerated or auto"]];
const SOLVERS = ["euler", "rk2", "rk4", "rk23", "rk45", "dop853", "radau", "bdf", "lsoda"];

function diagramPanel(root) {
  const s = state.view.sections;
  const top = !state.level.length;
  root.append(el("h2", { text: top ? "Diagram" : `Subsystem ${state.level[state.level.length - 1]}` }));
  root.append(el("p", { class: "muted", text: "Select a block or a wire to set it up. Drag a block from the palette; drag from an output port to an input port to wire." }));
  for (const p of fieldProblems([]).concat(state.view.problems.filter(p => !p.block && !p.path))) {
    root.append(el("div", { class: "problem-text", text: p.text }));
  }
  if (top) {
    for (const key of ["name", "description"]) {
      root.append(field({ path: [key], label: key, kind: "string", text: s[key] ? String(s[key].value) : "",
                          placeholder: key === "name" ? "the file name" : "", send: text => ({ op: "entry", section: key, text, literal: true }) }));
    }
    root.append(el("h3", { text: "Simulation" }));
    for (const [key, kind, doc] of SIMULATION) {
      root.append(field({ path: ["simulation", key], label: key, kind, doc,
                          choices: key === "solver" ? SOLVERS : ["normal", "accelerated", "auto"],
                          text: shownText(kind, (s.simulation || {})[key]),
                          send: text => ({ op: "entry", section: "simulation", key, text, literal: kind === "choice" }) }));
    }
  }
  table(root, "Parameters", "parameters", s.parameters, "value, e.g. 1.5 or 2*pi");
  if (top) {
    table(root, "Recorded signals", "record", s.record, "signal, e.g. Position.y", true);
    table(root, "Robots", "robots", s.robots, "{model: puma560}");
  } else {
    table(root, "Inputs", "inputs", s.inputs, "inner input, e.g. Sum.u1");
    table(root, "Outputs", "outputs", s.outputs, "inner output, e.g. Gain.y");
  }
}

function table(root, title, section, entries, hint, literalValues) {
  root.append(el("h3", { text: title }));
  for (const [key, entry] of Object.entries(entries || {})) {
    const text = shownText(literalValues ? "string" : "value", entry);
    const input = el("input", { value: text, "data-key": `${section}.${key}`, "aria-label": `${section}.${key}`, spellcheck: "false" });
    input.addEventListener("change", () => { if (input.value !== text) edit("entry", { section, key, text: input.value, literal: !!literalValues }); });
    input.addEventListener("keydown", e => { if (e.key === "Enter") input.blur(); });
    const problems = fieldProblems([section, key]);
    root.append(el("div", { class: "row" + (problems.length ? " bad" : ""), "data-field": `${section}.${key}` },
      el("span", { text: key, title: key }), input,
      el("button", { text: "\u00d7", title: `remove ${key}`, onclick: () => edit("entry", { section, key, text: null }) }),
      problems.map(p => el("div", { class: "problem", text: p.text }))));
  }
  const name = el("input", { placeholder: "name", "data-key": `${section}.+name`, "aria-label": `new ${section} name` });
  const value = el("input", { placeholder: hint, "data-key": `${section}.+value`, "aria-label": `new ${section} value`, spellcheck: "false" });
  const add = () => { if (name.value.trim() && value.value.trim()) edit("entry", { section, key: name.value.trim(), text: value.value, literal: !!literalValues }); };
  value.addEventListener("keydown", e => { if (e.key === "Enter") add(); });
  root.append(el("div", { class: "row" }, name, value, el("button", { text: "+", title: "add", onclick: add })));
}

// ---- running -------------------------------------------------------------------------------
async function run() {
  if (state.run && (state.run.state === "running" || state.run.state === "starting")) return;
  state.runError = null;
  try {
    state.run = await api("POST", "run", { level: state.level });
  } catch (e) { return toast(e.message, true); }
  progress();
  poll();
}

async function poll() {
  try { state.run = await api("GET", "run"); } catch (e) { return toast(e.message, true); }
  progress();
  if (state.run.state === "running" || state.run.state === "starting") {
    setTimeout(poll, 150);
    return;
  }
  await finished();
}

function progress() {
  const r = state.run || { state: "idle" };
  const bar = $("#progress");
  bar.classList.toggle("failed", r.state === "failed" || r.state === "invalid");
  bar.classList.toggle("done", r.state === "done");
  const running = r.state === "running" || r.state === "starting";
  $('[data-action="run"]').disabled = running;
  $('[data-action="stop"]').disabled = !running;
  const fraction = r.state === "done" ? 1 : (r.fraction || 0);
  $("#progress-fill").style.width = `${(100 * fraction).toFixed(1)}%`;
  const t = r.t === null || r.t === undefined ? "" : `t = ${Number(r.t).toPrecision(4)}`;
  $("#progress-text").textContent = {
    idle: "not run", starting: "starting\u2026", running: `${t} / ${r.stop} s`,
    done: `done, ${t} s`,
    failed: `failed at ${t || "start"}`, stopped: `stopped at ${t}`, invalid: "invalid diagram",
  }[r.state] || r.state;
  bar.dataset.state = r.state;
  bar.title = r.state === "done" ? `simulated to t = ${r.t} s in ${fmt(r.wall_time, 3)} s (${r.mode} mode)` : "simulated time";
}

async function finished() {
  const r = state.run;
  const links = $("#run-links");
  links.replaceChildren();
  if (r.files && r.files.length) {
    for (const f of r.files.filter(f => f === "report.html")) {
      links.append(el("a", { href: `/run/${encodeURIComponent(f)}?token=${encodeURIComponent(TOKEN)}`, target: "_blank", rel: "noopener", text: "report.html" }));
    }
    links.append(el("span", { class: "muted", text: ` in ${r.out}/` }));
  }
  if (r.state === "invalid") {
    toast("the diagram is not valid: see Problems", true);
    tab("problems");
    return;
  }
  if (r.error && r.error.block) {
    const flat = r.error.block.split("/");
    const depth = state.level.length;
    const here = flat.slice(0, depth).join("/") === state.level.join("/") ? flat[depth] : null;
    state.runError = { box: here, text: r.error.text };
  } else if (r.error) {
    state.runError = { box: null, text: r.error.text };
  }
  try { state.results = await api("GET", "results"); } catch (e) { state.results = null; }
  draw();
  tab("results");
}

// ---- plots ---------------------------------------------------------------------------------
function drawPlots() {
  const root = $("#results");
  root.replaceChildren();
  const res = state.results;
  if (state.runError) root.append(el("div", { class: "failure", text: state.runError.text }));
  const said = (state.run && state.run.messages) || [];  // a display block's values, warnings
  if (said.length) root.append(el("pre", { class: "messages", text: said.join("\n") }));
  if (!res) {
    if (!state.runError) root.append(el("p", { class: "muted", text: "Run the diagram (\u25b6 Run) to see its scopes and recorded signals here." }));
    return;
  }
  const list = el("div", { id: "signal-list" });
  const plots = el("div", { id: "plots" });
  root.append(list, plots);
  const picks = res.scopes.map(s => ({ key: "scope:" + s.name, label: `${s.name} (${s.type})`, scope: s }));
  if (res.signals.length) picks.push({ key: "signals", label: "Recorded signals" });
  if (!picks.length) { plots.append(el("p", { class: "muted", text: "The diagram records no signal and has no scope: record a wire's signal (select it) or add a scope." })); return; }
  if (!picks.some(p => p.key === state.plotPick)) state.plotPick = picks[0].key;
  list.append(el("h4", { text: "Show" }));
  for (const p of picks) {
    list.append(el("div", { class: "pick" + (p.key === state.plotPick ? " active" : ""), "data-plot": p.key, text: p.label,
                            onclick: () => { state.plotPick = p.key; drawPlots(); } }));
  }
  const pick = picks.find(p => p.key === state.plotPick);
  if (pick.scope) {
    const xy = pick.scope.type === "xy_graph" && pick.scope.inputs.length === 2;
    if (xy) {
      const [x, y] = pick.scope.inputs;
      plots.append(plot(x.data.map((col, i) => ({ name: y.columns[i], t: col, v: y.data[i] })), x.label || "x", `${pick.scope.name}`));
    } else {
      for (const input of pick.scope.inputs) {
        plots.append(plot(input.data.map((v, i) => ({ name: input.columns[i], t: input.t, v })), "t (s)", `${pick.scope.name}.${input.name}: ${input.label}`));
      }
    }
    return;
  }
  list.append(el("h4", { text: "Signals on one axis" }));
  state.shown = state.shown || new Set(res.signals.length ? [res.signals[0].columns[0]] : []);
  const lines = [];
  for (const s of res.signals) {
    s.columns.forEach((c, i) => {
      const box = el("input", { type: "checkbox", checked: state.shown.has(c) || null, "data-signal": c,
                                onchange: e => { if (e.target.checked) state.shown.add(c); else state.shown.delete(c); drawPlots(); } });
      list.append(el("label", {}, box, " " + c));
      if (state.shown.has(c)) lines.push({ name: c, t: s.t, v: s.data[i] });
    });
  }
  plots.append(plot(lines, "t (s)", "recorded signals"));
}

function plot(lines, xlabel, title) {
  const wrap = el("div", { class: "plot" });
  const canvas = el("canvas", { height: 220, "data-title": title });
  const readout = el("div", { class: "readout", hidden: true });
  wrap.append(canvas, readout);
  const all = (key) => lines.flatMap(l => l[key]).filter(v => v !== null && Number.isFinite(v));
  const xs = all("t"), vs = all("v");
  const home = { x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...vs), y1: Math.max(...vs) };
  if (!xs.length) { home.x0 = 0; home.x1 = 1; }
  if (!vs.length || home.y0 === home.y1) { const c = vs.length ? home.y0 : 0; home.y0 = c - 1; home.y1 = c + 1; }
  const pad = (home.y1 - home.y0) * 0.05; home.y0 -= pad; home.y1 += pad;
  let range = { ...home };
  // the legend stands beside the axes, where it cannot cover the data
  const measure = document.createElement("canvas").getContext("2d");
  measure.font = `11px ${FONT}`;
  const legendW = lines.length > 1 ? Math.min(200, Math.max(...lines.map(l => measure.measureText(l.name).width)) + 30) : 0;
  const margin = { l: 62, r: 12 + legendW, t: 20, b: 30 };
  function paint(cursor) {
    const dpr = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 600, height = 220;
    canvas.width = width * dpr; canvas.height = height * dpr;
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    g.font = `11px ${FONT}`;
    const pw = width - margin.l - margin.r, ph = height - margin.t - margin.b;
    const X = x => margin.l + (x - range.x0) / (range.x1 - range.x0) * pw;
    const Y = y => margin.t + (range.y1 - y) / (range.y1 - range.y0) * ph;
    g.fillStyle = "#1d2430"; g.fillText(title, margin.l, 13);
    g.strokeStyle = "#e3e6eb"; g.fillStyle = "#3a4454"; g.lineWidth = 1;
    for (const tx of ticks(range.x0, range.x1, 8)) {
      g.beginPath(); g.moveTo(X(tx), margin.t); g.lineTo(X(tx), margin.t + ph); g.stroke();
      g.textAlign = "center"; g.fillText(fmt(tx), X(tx), margin.t + ph + 14);
    }
    for (const ty of ticks(range.y0, range.y1, 5)) {
      g.beginPath(); g.moveTo(margin.l, Y(ty)); g.lineTo(margin.l + pw, Y(ty)); g.stroke();
      g.textAlign = "right"; g.fillText(fmt(ty), margin.l - 5, Y(ty) + 4);
    }
    g.textAlign = "center"; g.fillText(xlabel, margin.l + pw / 2, height - 3);
    g.strokeStyle = "#8a93a3"; g.strokeRect(margin.l, margin.t, pw, ph);
    g.save();
    g.beginPath(); g.rect(margin.l, margin.t, pw, ph); g.clip();
    lines.forEach((line, i) => {
      g.strokeStyle = COLOURS[i % COLOURS.length]; g.lineWidth = 1.4;
      g.beginPath();
      let open = false;
      for (let k = 0; k < line.t.length; k++) {
        const v = line.v[k];
        if (v === null || line.t[k] === null) { open = false; continue; }
        if (open) g.lineTo(X(line.t[k]), Y(v)); else { g.moveTo(X(line.t[k]), Y(v)); open = true; }
      }
      g.stroke();
    });
    if (cursor) {
      g.strokeStyle = "#555"; g.setLineDash([3, 3]); g.lineWidth = 1;
      g.beginPath(); g.moveTo(X(cursor.x), margin.t); g.lineTo(X(cursor.x), margin.t + ph); g.stroke();
      g.setLineDash([]);
      if (cursor.band) {
        g.fillStyle = "rgba(45,108,223,0.12)";
        g.fillRect(Math.min(X(cursor.band[0]), X(cursor.band[1])), margin.t, Math.abs(X(cursor.band[1]) - X(cursor.band[0])), ph);
      }
    }
    g.restore();
    g.textAlign = "left";
    lines.slice(0, 14).forEach((line, i) => {
      const ly = margin.t + 10 + 14 * i, lx = margin.l + pw + 10;
      g.strokeStyle = COLOURS[i % COLOURS.length]; g.lineWidth = 2;
      g.beginPath(); g.moveTo(lx, ly - 4); g.lineTo(lx + 14, ly - 4); g.stroke();
      g.fillStyle = "#1d2430"; g.fillText(line.name, lx + 18, ly);
    });
    if (lines.length > 14) { g.fillStyle = "#6b7585"; g.fillText(`+${lines.length - 14} more`, margin.l + pw + 10, margin.t + 10 + 14 * 14); }
  }
  const unX = px => { const w = canvas.clientWidth - margin.l - margin.r; return range.x0 + (px - margin.l) / w * (range.x1 - range.x0); };
  let band = null;
  canvas.addEventListener("pointerdown", e => { band = [unX(e.offsetX)]; });
  canvas.addEventListener("pointermove", e => {
    const x = unX(e.offsetX);
    if (band) band[1] = x;
    paint({ x, band: band && band.length === 2 ? band : null });
    readout.hidden = false;
    readout.replaceChildren();
    readout.append(el("div", { text: `${xlabel.replace(" (s)", "")} = ${fmt(x, 6)}` }));
    lines.forEach((l, i) => {
      const dot = el("span", { text: "\u25cf " });
      dot.style.color = COLOURS[i % COLOURS.length];
      readout.append(el("div", {}, dot, `${l.name} = ${fmt(valueAt(l, x), 6)}`));
    });
    const left = Math.min(e.offsetX + 14, canvas.clientWidth - readout.offsetWidth - 4);
    readout.style.left = `${Math.max(left, 0)}px`;
    readout.style.top = `${margin.t + 4}px`;
  });
  canvas.addEventListener("pointerup", () => {
    if (band && band.length === 2 && Math.abs(band[1] - band[0]) > (range.x1 - range.x0) / 200) {
      const [a, b] = [Math.min(...band), Math.max(...band)];
      range = { ...range, x0: a, x1: b, ...yRange(lines, a, b) };
    }
    band = null;
    paint();
  });
  canvas.addEventListener("pointerleave", () => { readout.hidden = true; band = null; paint(); });
  canvas.addEventListener("dblclick", () => { range = { ...home }; paint(); });
  canvas.addEventListener("wheel", e => {
    e.preventDefault();
    const x = unX(e.offsetX), f = e.deltaY > 0 ? 1.25 : 0.8;
    const a = x - (x - range.x0) * f, b = x + (range.x1 - x) * f;
    range = { ...range, x0: Math.max(a, home.x0), x1: Math.min(b, home.x1), ...yRange(lines, Math.max(a, home.x0), Math.min(b, home.x1)) };
    paint();
  }, { passive: false });
  requestAnimationFrame(() => paint());
  return wrap;
}

function yRange(lines, a, b) {
  let lo = Infinity, hi = -Infinity;
  for (const l of lines) for (let k = 0; k < l.t.length; k++) {
    if (l.t[k] >= a && l.t[k] <= b && l.v[k] !== null) { lo = Math.min(lo, l.v[k]); hi = Math.max(hi, l.v[k]); }
  }
  if (!Number.isFinite(lo)) return {};
  if (lo === hi) { lo -= 1; hi += 1; }
  const pad = (hi - lo) * 0.05;
  return { y0: lo - pad, y1: hi + pad };
}

function valueAt(line, x) {
  const t = line.t;
  if (!t.length) return null;
  let lo = 0, hi = t.length - 1;
  if (x <= t[0]) return line.v[0];
  if (x >= t[hi]) return line.v[hi];
  while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (t[mid] <= x) lo = mid; else hi = mid; }
  const a = line.v[lo], b = line.v[hi];
  if (a === null || b === null || t[hi] === t[lo]) return a;
  return a + (b - a) * (x - t[lo]) / (t[hi] - t[lo]);
}

function ticks(a, b, n) {
  const span = b - a;
  if (!(span > 0)) return [a];
  const raw = span / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw);
  const out = [];
  for (let v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

function fmt(v, digits) {
  if (v === null || v === undefined || !Number.isFinite(v)) return "\u2014";
  return Number(v.toPrecision(digits || 4)).toString();
}

// ---- start ---------------------------------------------------------------------------------
function wire() {
  const canvas = $("#canvas");
  canvas.addEventListener("pointerdown", onCanvasDown);
  canvas.addEventListener("dblclick", onCanvasDouble);
  canvas.addEventListener("wheel", e => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    if (e.ctrlKey || e.metaKey || !e.shiftKey) zoom(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
    else { state.world.x -= e.deltaY; applyWorld(); }
  }, { passive: false });
  document.addEventListener("keydown", onKey);
  document.addEventListener("keyup", e => { if (e.key === " ") state.space = false; });
  $("#families").addEventListener("pointerdown", e => {
    const entry = e.target.closest(".entry");
    if (entry && e.button === 0) startPaletteDrag(e, entry.dataset.palette);
  });
  $("#families").addEventListener("keydown", e => {
    const entry = e.target.closest(".entry");
    if (entry && e.key === "Enter") addAtCentre(entry.dataset.palette);
  });
  $("#search").addEventListener("input", e => filterPalette(e.target.value));
  const actions = {
    undo: () => history("undo"), redo: () => history("redo"), save, run,
    stop: async () => { try { state.run = await api("POST", "stop"); progress(); } catch (e) { toast(e.message, true); } },
    "zoom-in": () => zoom(1.25), "zoom-out": () => zoom(0.8), fit,
  };
  document.addEventListener("click", e => {
    const b = e.target.closest("[data-action]");
    if (b && actions[b.dataset.action]) actions[b.dataset.action]();
    const t = e.target.closest("[data-tab]");
    if (t) tab(t.dataset.tab);
  });
  window.addEventListener("beforeunload", e => { if (state.view && state.view.dirty) { e.preventDefault(); e.returnValue = ""; } });
  window.addEventListener("resize", () => { if ($("#results").hidden === false) drawPlots(); });
  // the bottom panel's height follows a drag of its top edge
  $("#panel").addEventListener("pointerdown", e => {
    const r = $("#panel").getBoundingClientRect();
    if (e.clientY > r.top + 4) return;
    const move = m => document.body.style.setProperty("--panel", `${Math.max(60, Math.min(window.innerHeight - 160, window.innerHeight - m.clientY))}px`);
    const up = () => { window.removeEventListener("pointermove", move); window.removeEventListener("pointerup", up); };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  });
}

async function start() {
  wire();
  tab("problems");
  try {
    state.catalogue = await api("GET", "catalogue");
    palette();
    await load([]);
  } catch (e) {
    toast(e.message === "forbidden" ? "this address lacks the session key: open the address blocksim edit printed" : e.message, true);
  }
}

// what tests and scripts may ask of the page
window.blocksimEditor = {
  state,
  // after two frames (input events queued before the call are handled by then), once every
  // request is answered
  idle: async () => {
    const frame = () => new Promise(done => requestAnimationFrame(() => done()));
    await frame();
    await frame();
    while (state.pending) await new Promise(done => setTimeout(done, 20));
    await frame();
    return true;
  },
  fit,
};

start();
