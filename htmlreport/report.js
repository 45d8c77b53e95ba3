// Glue between the report's data and uPlot: decode, lay out, zoom.
"use strict";
(function () {
  const RED = "#d62728", ORANGE = "#ff9f1c", LIMIT = "#555";
  // A zoomed range switches to the exact data when it holds at most this
  // many steps of a rule.
  const DETAIL_STEPS = 20000;

  async function load() {
    const b64 = document.getElementById("data").textContent.trim();
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function undelta(d) {
    const out = new Array(d.length);
    let v = 0;
    for (let i = 0; i < d.length; i++) { v += d[i]; out[i] = v; }
    return out;
  }

  // A series as absolute arrays: step x (ns offsets), y, marker x and y.
  function decode(s) {
    return { x: undelta(s.xd), y: undelta(s.yd), mx: undelta(s.mxd), my: s.my };
  }

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    for (const k of kids) e.append(k);
    return e;
  }

  const fmt = (n) => Number(n).toLocaleString("en-US");

  // Names an instant: time of day to the nanosecond for logs, seconds from
  // the first send otherwise. Offsets stay exact: they are below 2^53.
  function instant(p, off) {
    if (!p.wall) {
      const s = (p.fromNs + off) / 1e9;
      return s.toFixed(9) + " s";
    }
    const total = p.fromFrac + off;
    const sec = p.fromSec + Math.floor(total / 1e9);
    const frac = String(total % 1e9).padStart(9, "0");
    return new Date(sec * 1000).toISOString().replace(/\.000Z$/, "." + frac + "Z");
  }

  const mod = (a, b) => ((a % b) + b) % b;

  // Tick steps in ns: round instants from a microsecond to two centuries.
  const STEPS = [].concat(
    [1, 2, 5, 10, 20, 50, 100, 200, 500].map((k) => k * 1e3),
    [1, 2, 5, 10, 20, 50, 100, 200, 500].map((k) => k * 1e6),
    [1, 2, 5, 10, 15, 30].map((k) => k * 1e9),
    [1, 2, 5, 10, 15, 30].map((k) => k * 6e10),
    [1, 2, 3, 6, 12].map((k) => k * 3.6e12),
    [1, 2, 7, 14, 28, 91, 182, 365, 730, 1825, 3650, 7300, 18250, 36500, 73000].map((k) => k * 8.64e13));
  const MAX_TICKS = 50;

  // The x axis' ticks between min and max (seconds from the panel's first
  // send): on round instants of the wall clock in UTC for logs, of the
  // run's clock for simulations; at most MAX_TICKS, whatever the range.
  // Each tick has its value x and its label.
  function axisTicks(p, min, max) {
    const lo = p.fromFrac + min * 1e9, hi = p.fromFrac + max * 1e9; // ns from second fromSec
    const out = [];
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) return out;
    let step = STEPS[STEPS.length - 1];
    for (const s of STEPS) if ((hi - lo) / s <= 8) { step = s; break; }
    // Multiples of the step from the epoch (logs: UTC midnight for days)
    // or from the run's start.
    const phase = step >= 1e9 ? mod(p.fromSec, step / 1e9) * 1e9 : 0;
    let prevDay = "";
    for (let r = Math.ceil((lo + phase) / step) * step - phase; r <= hi && out.length < MAX_TICKS; r += step) {
      const sec = p.fromSec + Math.floor(r / 1e9), ns = Math.round(r - Math.floor(r / 1e9) * 1e9);
      let label;
      if (!p.wall) {
        const dec = step >= 1e9 ? 0 : Math.ceil(-Math.log10(step / 1e9) - 1e-9);
        label = (sec + ns / 1e9).toFixed(dec);
      } else {
        const iso = new Date(sec * 1000).toISOString(), day = iso.slice(0, 10);
        if (step >= 8.64e13) {
          label = day;
        } else {
          label = step >= 6e10 ? iso.slice(11, 16) : iso.slice(11, 19);
          if (step < 1e9) label += "." + String(ns).padStart(9, "0").slice(0, step < 1e6 ? 6 : 3);
          if (day !== prevDay) label += "\n" + day; // the date under the first tick of each day
          prevDay = day;
        }
      }
      out.push({ x: (r - p.fromFrac) / 1e9, label });
    }
    return out;
  }

  // The x axis of panel p: its name, and uPlot's splits and values.
  function xAxis(p) {
    let shown = [];
    return {
      label: p.wall ? "time of day (UTC), from " + instant(p, 0).replace("T", " ").replace("Z", " UTC")
        : "seconds since the run's start",
      size: p.wall ? 56 : 44,
      splits: (u, ai, min, max) => { shown = axisTicks(p, min, max); return shown.map((t) => t.x); },
      values: (u, splits) => splits.map((x, i) => (shown[i] && shown[i].x === x ? shown[i].label : "")),
    };
  }

  // The y axis of a window's count or units: wide enough for its longest
  // tick label ("100,000"), so that the axis title never overlaps them.
  function yAxis(label) {
    return {
      label,
      size: (u, values, ai, cycle) => {
        const axis = u.axes[ai];
        if (cycle > 1) return axis._size;
        const longest = (values || []).reduce((a, v) => (String(v).length > a.length ? String(v) : a), "");
        u.ctx.font = axis.font[0];
        return Math.ceil(axis.ticks.size + axis.gap + u.ctx.measureText(longest).width / devicePixelRatio) + 4;
      },
    };
  }

  // Aligns step lines and markers on one x array, as uPlot wants.
  function align(layers) {
    const xs = new Set();
    for (const l of layers) for (const x of l.x) xs.add(x);
    const x = Array.from(xs).sort((a, b) => a - b);
    const at = new Map(x.map((v, i) => [v, i]));
    const cols = layers.map((l) => {
      const col = new Array(x.length).fill(null);
      for (let i = 0; i < l.x.length; i++) col[at.get(l.x[i])] = l.y[i];
      return col;
    });
    return [x, cols];
  }

  // uPlot data for one rule from its layers (overview or a chunk).
  function chartData(rule, main, rec, lo, hi) {
    const clip = (x, y) => {
      if (lo === undefined) return { x, y };
      let a = 0, b = x.length;
      while (a < b && x[a] < lo) a++;
      while (b > a && x[b - 1] > hi) b--;
      // keep the step in force at lo
      a = Math.max(0, a - 1);
      return { x: x.slice(a, b + 1), y: y.slice(a, b + 1) };
    };
    const layers = [clip(main.x, main.y), clip(main.mx, main.my)];
    if (rec) layers.push(clip(rec.x, rec.y), clip(rec.mx, rec.my));
    const [x, cols] = align(layers);
    const data = [x.map((v) => v / 1e9), cols[0], new Array(x.length).fill(rule.limit), cols[1]];
    if (rec) data.push(cols[2], cols[3]);
    return data;
  }

  function countIn(x, lo, hi) {
    let n = 0;
    for (const v of x) if (v >= lo && v <= hi) n++;
    return n;
  }

  function drawPanel(p, idx, root) {
    // JSON numbers lose the nanoseconds of Unix time; fromStr keeps them.
    const from = BigInt(p.fromStr);
    let whole = from / 1000000000n, frac = from % 1000000000n;
    if (frac < 0n) { whole -= 1n; frac += 1000000000n; }
    p.fromSec = Number(whole);
    p.fromFrac = Number(frac);
    p.fromNs = p.from;
    p.ticks = (min, max) => axisTicks(p, min, max);
    const sec = el("section", { class: "panel", id: "panel-" + idx });
    sec.append(el("h2", {}, p.name + " — " + fmt(p.sends) + " sends"));
    root.append(sec);
    const charts = [];
    let syncing = false;
    const width = Math.min(1200, document.body.clientWidth - 40);
    p.rules.forEach((r, ri) => {
      r.main = decode(r.over);
      r.rec = r.recOver ? decode(r.recOver) : null;
      r.chunks = p.chunks.map((c) => ({ a: c.a, b: c.b, main: decode(c.rule[ri]), rec: c.rec ? decode(c.rec[ri]) : null }));
      const box = el("div", { class: "rule", id: `rule-${idx}-${ri}` });
      const head = el("h3", {}, `rule ${r.rule}: `);
      const v = el("span", { class: r.violations ? "bad viol" : "ok viol", "data-violations": r.violations },
        r.violations === 1 ? "1 violation" : fmt(r.violations) + " violations");
      head.append(v, r.bucket ? `, at most ${fmt(r.peak)} ${r.line}` : `, peak ${fmt(r.peak)} ${r.what} in one window`);
      if (p.records) {
        head.append("; among the limiter's records: ",
          el("span", { class: "recviol", "data-violations": r.recordViolations }, fmt(r.recordViolations) + " violations"));
      }
      box.append(head);
      sec.append(box);
      const series = [
        { label: p.wall ? "time (UTC)" : "seconds since the run's start", value: (u, v) => (v == null ? "" : instant(p, Math.round(v * 1e9))) },
        { label: r.line, stroke: p.color || "#1f77b4", width: 1.3, spanGaps: true, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } },
        { label: r.cap + " " + fmt(r.limit), stroke: LIMIT, dash: [6, 4], width: 1, points: { show: false } },
        { label: "violations", stroke: RED, fill: RED, paths: () => null, points: { show: true, size: 6, fill: RED, stroke: RED } },
      ];
      if (r.rec) {
        series.push(
          { label: "in window among records", stroke: "#999", width: 1, dash: [2, 2], spanGaps: true, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } },
          { label: "violations among records", stroke: ORANGE, fill: ORANGE, paths: () => null, points: { show: true, size: 5, fill: ORANGE, stroke: ORANGE } });
      }
      const chartBox = el("div", { class: "chart", "data-mode": "overview" });
      box.append(chartBox);
      const opts = {
        width, height: 220, series,
        scales: { x: { time: false }, y: { range: (u, lo, hi) => [0, Math.max(hi, r.limit) * 1.15 + 1] } },
        cursor: { drag: { x: true, y: false } },
        axes: [xAxis(p), yAxis(r.line)],
        hooks: {
          setScale: [(u, key) => {
            if (key !== "x" || syncing) return;
            syncing = true;
            const { min, max } = u.scales.x;
            for (const c of charts) {
              if (c !== u) c.setScale("x", { min, max });
            }
            syncing = false;
            // Data swapped inside uPlot's own scale change keeps the index
            // range of the data before, and a detail with more points than
            // the overview would be drawn only up to the overview's last
            // index: swap it once the change is done.
            queueMicrotask(() => {
              syncing = true;
              for (const c of charts) refresh(c, min, max);
              syncing = false;
            });
          }],
        },
      };
      const u = new uPlot(opts, chartData(r, r.main, r.rec), chartBox);
      u.rule = r;
      u.box = chartBox;
      u.full = [r.main.x[0] / 1e9, r.main.x[r.main.x.length - 1] / 1e9];
      // uPlot zooms out to the data shown, which may be a detail excerpt.
      chartBox.addEventListener("dblclick", () => u.setScale("x", { min: u.full[0], max: u.full[1] }));
      charts.push(u);
      box.append(violationTable(p, idx, r, ri, charts));
    });
    p.charts = charts;
  }

  // refresh swaps a chart to the exact data of a chunk when the zoomed
  // range lies inside one and holds few enough steps, else the overview.
  function refresh(u, min, max) {
    // Clamp to the sends: a window at the log's start pads before it.
    const r = u.rule, lo = Math.max(min * 1e9, 0), hi = Math.min(max * 1e9, r.main.x[r.main.x.length - 1]);
    let data = null, mode = "overview";
    for (const c of r.chunks) {
      if (c.a <= lo && hi <= c.b && countIn(c.main.x, lo, hi) <= DETAIL_STEPS) {
        data = chartData(r, c.main, c.rec, lo, hi);
        mode = "detail";
        break;
      }
    }
    if (!data) data = chartData(r, r.main, r.rec);
    if (u.box.dataset.mode === "overview" && mode === "overview") return;
    u.box.dataset.mode = mode;
    u.setData(data, false);
    u.setScale("x", { min, max }); // uPlot takes the new data's index range from a scale change
  }

  function violationTable(p, idx, r, ri, charts) {
    const wrap = el("div", {});
    if (!r.rows.length) return wrap;
    const more = r.violations > r.rows.length ? ` (the first ${r.rows.length} of ${fmt(r.violations)})` : "";
    wrap.append(el("div", {}, "Violations" + more + ": click one to zoom to its window and list its sends."));
    const tb = el("tbody", {});
    const t = el("table", { class: "viol", id: `viol-${idx}-${ri}` },
      el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", { class: "l" }, "send"), el("th", { class: "l" }, "at"),
        el("th", {}, r.what + (r.bucket ? " since full" : " in window")), el("th", { class: "l" }, r.bucket ? "first send since full" : "window from"))), tb);
    const list = el("div", { class: "sends", id: `sends-${idx}-${ri}` });
    r.rows.forEach((row, i) => {
      const tr = el("tr", { "data-row": i }, el("td", {}, String(i + 1)), el("td", { class: "l" }, row.where),
        el("td", { class: "l" }, instant(p, row.at)), el("td", {}, fmt(r.what === "sends" ? row.count : row.units) + (row.sat ? "+" : "")),
        el("td", { class: "l" }, instant(p, row.start)));
      tr.addEventListener("click", () => {
        for (const s of tb.querySelectorAll("tr.sel")) s.classList.remove("sel");
        tr.classList.add("sel");
        const pad = Math.max((row.at - row.start) * 0.1, 1e6);
        charts[0].setScale("x", { min: (row.start - pad) / 1e9, max: (row.at + pad) / 1e9 });
        const head = row.shown < row.count ? `the newest ${row.shown} of the ${fmt(row.count)} sends` : `the ${row.shown} sends`;
        list.replaceChildren(el("div", {}, `Violation ${i + 1} of rule ${r.rule}: ${head} in its window, the offending send last:`));
        const ol = el("ol", { start: row.count - row.shown + 1 });
        for (const s of row.window) ol.append(el("li", {}, instant(p, s.at) + "  " + s.where));
        list.append(ol);
      });
      tb.append(tr);
    });
    wrap.append(el("div", { class: "scroll" }, t), list);
    return wrap;
  }

  function summary(d, root) {
    if (d.kind === "check" || !d.panels.length) return;
    const rules = d.panels[0].rules.map((r) => r.rule);
    const head = el("tr", {}, el("th", { class: "l" }, "strategy"), ...rules.map((r) => el("th", {}, r)));
    const t = el("table", { id: "comparison" }, el("thead", {}, head));
    const rec = d.panels.some((p) => p.records);
    for (const p of d.panels) {
      t.append(el("tr", {}, el("td", { class: "l" }, p.name), ...p.rules.map((r) =>
        el("td", {}, fmt(r.violations) + (rec ? " (" + fmt(r.recordViolations) + ")" : "")))));
    }
    root.append(el("h2", {}, "Violations per strategy and rule"),
      el("div", {}, rec ? "at the provider (among the limiter's records)" : "at the provider"), t);
    if (!d.dist || !d.dist.length || d.dist[0].perRun.length < 2) return;
    // One chart per strategy, each on its own y scale: a strategy whose
    // runs are all clean would flatten another's spread on a shared one.
    let top = 0;
    for (const s of d.dist) for (const n of s.perRun) top = Math.max(top, n);
    const x = Array.from({ length: top + 1 }, (_, i) => i);
    const box = el("div", { id: "distribution" });
    root.append(el("h2", {}, `Violations per run over ${d.dist[0].perRun.length} seeds`),
      el("div", {}, "one chart per strategy, each on its own scale of runs; the violations per run share one scale"), box);
    d.distCharts = [];
    for (const s of d.dist) {
      const h = new Array(top + 1).fill(0);
      let bad = 0, worst = 0;
      for (const n of s.perRun) { h[n]++; if (n > 0) bad++; worst = Math.max(worst, n); }
      const color = (d.panels.find((p) => p.name === s.name) || {}).color || "#333";
      const chart = el("div", { class: "dist", "data-strategy": s.name });
      box.append(el("h3", {}, `${s.name}: violations in ${fmt(bad)} of ${fmt(s.perRun.length)} runs, worst ${fmt(worst)}`), chart);
      const u = new uPlot({ width: Math.min(1200, document.body.clientWidth - 40), height: 150,
        series: [{ label: "violations in a run" }, { label: s.name, stroke: color, fill: color + "55", width: 1.5, paths: uPlot.paths.bars({ size: [0.8, 40] }) }],
        scales: { x: { time: false, range: [-0.5, top + 0.5] }, y: { range: (u, lo, hi) => [0, Math.max(hi, 1) * 1.1] } },
        axes: [{ label: "violations in a run" }, { label: "runs" }], legend: { show: false } }, [x, h], chart);
      d.distCharts.push(u);
    }
  }

  load().then((d) => {
    summary(d, document.getElementById("summary"));
    const root = document.getElementById("panels");
    d.panels.forEach((p, i) => drawPanel(p, i, root));
    window.rlcheckReport = d;
    document.getElementById("status").textContent = "";
    document.body.dataset.ready = "1";
  }).catch((e) => {
    document.getElementById("status").textContent = "could not read the report's data: " + e;
    console.error(e);
  });
})();
