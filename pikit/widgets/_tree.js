// pikit tree view: a virtualized list of /tree rows (only the rows in view are in the DOM).
//
// Model state (from Python):
//   rows_data:   UTF-8 JSON bytes of [[id, indent, parentRow, kindClass, badge, label, text, children], ...]
//                (parentRow: the nearest shown ancestor's row, -1 = none)
//   anchor_row:  row of the leaf, or of its nearest visible ancestor (-1: reset leaf / none)
//   leaf_row:    row of the leaf itself (-1 when it is not shown)
//   selected_row: the row last clicked or revealed (-1: none); scrolled into view when it changes
//   row_height, height: pixels
// Custom messages to Python: {event: "select", id, row} (a click, or a press and release on one row
// with a repaint in between)
// Keys: ↑/↓ move the focus, ← to the parent row, → to the first child row, PageUp/PageDown/Home/End
// jump, Enter or Space selects (as a click), "/" focuses the explorer's search box.
// Timing written back: render_ms (view creation to first paint), paint_epoch_ms (Date.now() then).
//
// Session text only ever reaches the DOM through textContent / setAttribute, never innerHTML.

function render({ model, el }) {
  const t0 = performance.now();
  const root = document.createElement("div");
  root.className = "pikit-tree";
  const viewport = document.createElement("div");
  viewport.className = "pikit-tree-viewport";
  viewport.setAttribute("role", "tree");
  viewport.setAttribute("aria-label", "Session tree");
  viewport.tabIndex = 0;
  // Keys typed in the tree are the tree's: JupyterLab's notebook shortcuts stay out of it.
  viewport.setAttribute("data-lm-suppress-shortcuts", "true");
  viewport.title = "↑↓ move · ← parent · → child · Enter select · / search";
  const spacer = document.createElement("div");
  spacer.className = "pikit-tree-spacer";
  const layer = document.createElement("div");
  layer.className = "pikit-tree-layer";
  spacer.appendChild(layer);
  viewport.appendChild(spacer);
  const empty = document.createElement("div");
  empty.className = "pikit-tree-empty";
  empty.textContent = "No entries match.";
  root.appendChild(viewport);
  root.appendChild(empty);
  el.appendChild(root);

  const decoder = new TextDecoder();
  const number = (n) => Number(n).toLocaleString("en-US");  // 1,234: the thousands separator of pikit's numbers
  const readRows = () => {
    const data = model.get("rows_data");
    if (!data) return [];
    try { return JSON.parse(typeof data === "string" ? data : decoder.decode(data)); } catch (e) { return []; }
  };
  let rows = readRows();
  let active = new Set();
  let focusRow = -1;
  let scheduled = false;
  let revealRow = -1;  // a selected row to scroll into view at the next paint (read no layout before then)
  const rowH = () => model.get("row_height") || 24;

  function computeActive() {
    active = new Set();
    let i = model.get("anchor_row");
    let guard = 0;
    while (i >= 0 && i < rows.length && !active.has(i) && guard++ <= rows.length) {
      active.add(i);
      i = rows[i][2];
    }
  }

  function makeRow(i) {
    const r = rows[i];
    const div = document.createElement("div");
    const leafRow = model.get("leaf_row");
    let cls = "pikit-tree-row";
    if (active.has(i)) cls += " pikit-active";
    else cls += " pikit-off-path";
    const hiddenLeaf = leafRow < 0 && i === model.get("anchor_row");
    if (i === leafRow) cls += " pikit-leaf";
    if (hiddenLeaf) cls += " pikit-leaf-hidden";
    if (i === model.get("selected_row")) cls += " pikit-selected";
    if (i === focusRow) cls += " pikit-focus";
    if (r[5]) cls += " pikit-labeled";
    div.className = cls;
    div.style.top = i * rowH() + "px";
    div.style.height = rowH() + "px";
    div.dataset.entryId = String(r[0]);
    div.dataset.row = String(i);
    div.setAttribute("role", "treeitem");
    div.setAttribute("aria-level", String(r[1] + 1));
    div.setAttribute("aria-selected", i === leafRow ? "true" : "false");

    const gutter = document.createElement("span");
    gutter.className = "pikit-tree-gutter";
    gutter.textContent = i === leafRow ? "●" : hiddenLeaf ? "◌" : active.has(i) ? "│" : "";
    if (hiddenLeaf) gutter.title = "the leaf is an entry below this row that the filter hides";
    div.appendChild(gutter);
    const indent = document.createElement("span");
    indent.className = "pikit-tree-indent";
    // Deep trees: 14px a level up to 10 levels, then 3px a level, never more than a fifth of the
    // width, so the text of a deep row stays readable; past 10 levels the depth is written out.
    const level = r[1];
    const cap = Math.max(42, Math.floor((viewport.clientWidth || 400) * 0.2));
    indent.style.width = Math.min(cap, Math.min(level, 10) * 14 + Math.max(0, level - 10) * 3) + "px";
    div.appendChild(indent);
    if (level > 10) {
      const depth = document.createElement("span");
      depth.className = "pikit-tree-depth";
      depth.textContent = "↳" + number(level);
      depth.title = "indent level " + number(level);
      div.appendChild(depth);
    }
    const kind = document.createElement("span");
    kind.className = "pikit-badge pikit-kind-" + r[3];
    kind.textContent = r[4];
    div.appendChild(kind);
    if (r[5]) {
      const label = document.createElement("span");
      label.className = "pikit-label";
      label.textContent = r[5];
      div.appendChild(label);
    }
    const text = document.createElement("span");
    text.className = "pikit-tree-text";
    text.textContent = r[6];
    div.appendChild(text);
    if (r[7] > 1) {
      const fork = document.createElement("span");
      fork.className = "pikit-tree-fork";
      fork.textContent = number(r[7]) + " branches";
      fork.title = "the tree forks here: " + number(r[7]) + " branches start at this entry";
      div.appendChild(fork);
    }
    div.title = r[0] + (r[5] ? " [" + r[5] + "]" : "") + "\n" + r[6];
    return div;
  }

  function paint() {
    scheduled = false;
    // Hidden (e.g. while JupyterLab re-lays the page out): the scroll position reads 0 then, so
    // wait for the next resize instead of drawing the wrong slice.
    if (viewport.isConnected && viewport.clientHeight === 0 && viewport.offsetParent === null) return;
    if (revealRow >= 0) {
      const row = revealRow;
      revealRow = -1;
      ensureVisible(row);
    }
    const h = rowH();
    spacer.style.height = rows.length * h + "px";
    empty.style.display = rows.length ? "none" : "block";
    const viewH = viewport.clientHeight || model.get("height") || 480;
    const first = Math.max(0, Math.floor(viewport.scrollTop / h) - 8);
    const last = Math.min(rows.length, Math.ceil((viewport.scrollTop + viewH) / h) + 8);
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) frag.appendChild(makeRow(i));
    layer.replaceChildren(frag);
  }

  function schedule() {
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(paint);
    }
  }

  function ensureVisible(i) {
    if (i < 0 || i >= rows.length) return;
    const h = rowH();
    const viewH = viewport.clientHeight || model.get("height") || 480;
    const top = i * h;
    if (top < viewport.scrollTop || top + h > viewport.scrollTop + viewH) {
      viewport.scrollTop = Math.max(0, top - viewH / 3);
    }
  }

  function select(i) {
    if (i < 0 || i >= rows.length) return;
    focusRow = i;
    root.dataset.focusRow = String(i);
    model.send({ event: "select", id: rows[i][0], row: i });
  }

  viewport.addEventListener("scroll", schedule);
  viewport.addEventListener("click", (event) => {
    const target = event.target.closest(".pikit-tree-row");
    if (target) select(Number(target.dataset.row));
  });
  // A paint replaces the row elements in view. When one comes between the press and the release
  // (a resize, a scroll, a model change, a busy page), the element pressed is gone and the browser
  // fires no click: a release on the row pressed (same row, same entry) selects it then.
  let pressed = null;
  viewport.addEventListener("mousedown", (event) => {
    const row = event.button === 0 ? event.target.closest(".pikit-tree-row") : null;
    pressed = row ? { node: event.target, row: row.dataset.row, id: row.dataset.entryId } : null;
  });
  viewport.addEventListener("mouseup", (event) => {
    const press = pressed;
    pressed = null;
    const row = event.button === 0 ? event.target.closest(".pikit-tree-row") : null;
    if (press && row && !press.node.isConnected && row.dataset.row === press.row && row.dataset.entryId === press.id) {
      select(Number(press.row));
    }
  });
  // Keyboard: arrows move the focus (left: to the parent row, right: to the first child row),
  // Page/Home/End jump, Enter or Space selects, "/" jumps to the explorer's search box.
  function searchBox() {
    const explorer = el.closest(".pikit-explorer");
    return explorer ? explorer.querySelector(".pikit-search input") : null;
  }

  function target(key, from) {
    const page = Math.max(1, Math.floor((viewport.clientHeight || 480) / rowH()) - 1);
    switch (key) {
      case "ArrowDown": return from + 1;
      case "ArrowUp": return from - 1;
      case "ArrowLeft": return rows[from] && rows[from][2] >= 0 ? rows[from][2] : from;
      case "ArrowRight": return from + 1 < rows.length && rows[from + 1][2] === from ? from + 1 : from;
      case "PageDown": return from + page;
      case "PageUp": return from - page;
      case "Home": return 0;
      case "End": return rows.length - 1;
      default: return null;
    }
  }

  viewport.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/") {
      const box = searchBox();
      if (box) { box.focus(); box.select(); event.preventDefault(); event.stopPropagation(); }
      return;
    }
    if (!rows.length) return;
    const from = focusRow < 0 ? Math.max(0, model.get("anchor_row")) : focusRow;
    if (event.key === "Enter" || event.key === " ") {
      select(from);
      event.preventDefault();
      event.stopPropagation();
      return;
    }
    const next = target(event.key, from);
    if (next === null) return;
    event.preventDefault();
    event.stopPropagation();
    focusRow = Math.max(0, Math.min(rows.length - 1, next));
    root.dataset.focusRow = String(focusRow);
    ensureVisible(focusRow);
    schedule();
  });
  viewport.addEventListener("focus", () => {
    if (focusRow < 0 && rows.length) {
      focusRow = Math.max(0, model.get("anchor_row"));
      root.dataset.focusRow = String(focusRow);
      schedule();
    }
  });

  model.on("change:rows_data", () => {
    rows = readRows();
    focusRow = -1;
    computeActive();
    ensureVisible(model.get("anchor_row"));
    schedule();
  });
  model.on("change:anchor_row", () => {
    computeActive();
    ensureVisible(model.get("anchor_row"));
    schedule();
  });
  model.on("change:leaf_row", schedule);
  model.on("change:selected_row", () => { revealRow = model.get("selected_row"); schedule(); });
  model.on("change:height", () => { viewport.style.height = model.get("height") + "px"; schedule(); });

  viewport.style.height = (model.get("height") || 480) + "px";
  computeActive();
  paint();
  requestAnimationFrame(() => {
    ensureVisible(model.get("anchor_row"));
    paint();
    const ms = performance.now() - t0;
    root.dataset.renderMs = ms.toFixed(1);
    model.set("render_ms", ms);
    model.set("paint_epoch_ms", Date.now());
    model.save_changes();
  });
  // The browser may restore the scroll position after a re-layout without a scroll event:
  // repaint on resize and once more shortly after.
  let timers = [];
  const onResize = () => {
    schedule();
    timers.forEach(clearTimeout);
    timers = [setTimeout(schedule, 60), setTimeout(schedule, 300)];
  };
  let observer = null;
  if (typeof ResizeObserver !== "undefined") {
    observer = new ResizeObserver(onResize);
    observer.observe(viewport);
  }
  return () => {
    timers.forEach(clearTimeout);
    if (observer) observer.disconnect();
  };
}

export default { render };
