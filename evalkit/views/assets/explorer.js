// evalkit explorer: the page's one script (plain DOM, no library; docs/EXPLORER.md says why).
// Every piece of journal text reaches the page through textContent or a data attribute, never
// as HTML; the state of a view lives in the URL fragment, so a view can be shared and reopened.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("explorer-data").textContent);
  if (D.format !== 1) {
    document.getElementById("app").textContent =
      "This page's data has format " + D.format + "; this script reads format 1 only.";
    return;
  }
  const S = D.strings;
  const STATUSES = D.statuses;
  const PAGE = 100;
  // The normal quantile evalkit.stats.wilson_interval uses at level 0.95: scipy's
  // norm.isf(0.025). A test compares this port with the Python helper on a grid of (k, n).
  const Z95 = 1.959963984540054;
  const SHORT = { pass: "pass", fail: "fail", "not-applicable": "n/a", "cannot-determine": "c-d" };
  const KEYS = ["rubric", "dimension", "status", "from", "to", "q", "flag", "source", "sort", "page", "run", "line"];
  const FLAG_KINDS = ["unmeasured", "contaminated"];
  const MULTI = D.sources.length > 1;

  // ---------------------------------------------------------------- records, decoded once
  const R = D.records.map(function (r, i) {
    const dims = new Map();
    for (const d of r[5]) {
      dims.set(d[0], { status: d[1], evidence: S[d[2]], extra: d.length > 3 ? D.values[d[3]] : null });
    }
    return {
      i: i, run: r[0], session: S[r[1]], rubric: r[2], start: r[3], source: r[4], dims: dims,
      order: r[5].map(function (d) { return d[0]; }),
      kpis: D.values[r[6]], facts: D.values[r[7]],
      flags: r[8].map(function (f) { return { kind: S[f[0]], reason: S[f[1]], dim: f[2], signal: f[3] < 0 ? null : S[f[3]] }; }),
      verify: r[9] === null ? null : { outcome: S[r[9][0]], summary: S[r[9][1]] },
      fields: D.values[r[10]], line: r[11], command: r[12], latest: r[13] === 1,
      lower: S[r[1]].toLowerCase(),
    };
  });
  const byRun = new Map();
  for (const rec of R) {
    if (!byRun.has(rec.run)) byRun.set(rec.run, []);
    byRun.get(rec.run).push(rec);
  }
  const bySession = new Map(); // source + session -> records, file order
  for (const rec of R) {
    const key = rec.source + "\u0000" + rec.session;
    if (!bySession.has(key)) bySession.set(key, []);
    bySession.get(key).push(rec);
  }

  // ---------------------------------------------------------------- small DOM helpers
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        if (k === "text") node.textContent = attrs[k];
        else if (k === "cls") node.className = attrs[k];
        else node.setAttribute(k, attrs[k]);
      }
    }
    for (const c of children || []) {
      if (c === null || c === undefined) continue;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }
  function svg(tag, attrs) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const k of Object.keys(attrs || {})) node.setAttribute(k, String(attrs[k]));
    return node;
  }
  function pct(x) { return (100 * x).toFixed(1) + "%"; }
  function wilson(k, n) {
    if (n < 2) return null; // one session is a case, not a rate (as evalkit's studies)
    const z2 = Z95 * Z95, p = k / n, denom = 1 + z2 / n;
    const centre = (p + z2 / (2 * n)) / denom;
    const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
    return [Math.min(1, Math.max(0, centre - half)), Math.min(1, Math.max(0, centre + half))];
  }
  function estimate(k, n) {
    if (n === 0) return "no measured record";
    if (n === 1) return k + "/1 (n = 1, no CI)";
    const ci = wilson(k, n);
    return k + "/" + n + " = " + pct(k / n) + " [" + pct(ci[0]) + ", " + pct(ci[1]) + "]";
  }
  function day(ms) { return ms === null ? "unknown" : new Date(ms).toISOString().slice(0, 10); }
  function when(ms) { return ms === null ? "unknown" : new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC"; }
  function dimName(d) { return D.dims[d].id; }
  function unmeasured(rec, d) {
    return rec.flags.some(function (f) { return f.kind === "unmeasured" && f.dim === d; });
  }

  // ---------------------------------------------------------------- state in the fragment
  function readState() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const st = {};
    for (const k of KEYS) st[k] = params.get(k) || "";
    return st;
  }
  function fragment(st) {
    const params = new URLSearchParams();
    for (const k of KEYS) if (st[k]) params.set(k, st[k]);
    return "#" + params.toString();
  }
  function go(changes, keepPage) {
    const st = Object.assign(readState(), changes);
    if (!keepPage) st.page = "";
    location.hash = fragment(st);
  }
  function rubricIndex(name) { return D.rubrics.indexOf(name); }
  function dimIndex(id) { return D.dims.findIndex(function (d) { return d.id === id; }); }

  // ---------------------------------------------------------------- filtering
  function bounds(st) {
    const from = st.from ? Date.parse(st.from + "T00:00:00Z") : null;
    const to = st.to ? Date.parse(st.to + "T00:00:00Z") + 86400000 : null;
    return [isNaN(from) ? null : from, isNaN(to) ? null : to];
  }
  // every filter but status (the rates' denominator), then status on top
  function filtered(st) {
    const rub = st.rubric ? rubricIndex(st.rubric) : -1;
    const dim = st.dimension ? dimIndex(st.dimension) : -1;
    const src = st.source ? Number(st.source) : -1;
    const q = st.q.toLowerCase();
    const [from, to] = bounds(st);
    const base = R.filter(function (rec) {
      if (st.rubric && rec.rubric !== rub) return false;
      if (st.dimension && !rec.dims.has(dim)) return false;
      if (st.source && rec.source !== src) return false;
      if (q && rec.lower.indexOf(q) < 0 && rec.run.toLowerCase().indexOf(q) < 0) return false;
      if (from !== null && (rec.start === null || rec.start < from)) return false;
      if (to !== null && (rec.start === null || rec.start >= to)) return false;
      if (st.flag === "none" && rec.flags.length) return false;
      if (st.flag && st.flag !== "none" && !rec.flags.some(function (f) {
        // with a dimension chosen, "unmeasured" is that dimension's status
        return f.kind === st.flag && (dim < 0 || f.kind !== "unmeasured" || f.dim === dim);
      })) return false;
      return true;
    });
    const code = STATUSES.indexOf(st.status);
    const shown = st.status ? base.filter(function (rec) {
      if (dim >= 0) return rec.dims.get(dim).status === code;
      for (const d of rec.dims.values()) if (d.status === code) return true;
      return false;
    }) : base;
    return { base: base, shown: shown, dim: dim, code: code };
  }

  // ---------------------------------------------------------------- the records view
  function controls(st) {
    function select(key, label, options) {
      const s = el("select", { id: "f-" + key, "aria-label": label });
      for (const o of options) {
        const opt = el("option", { value: o[0], text: o[1] });
        if (o[0] === st[key]) opt.selected = true;
        s.appendChild(opt);
      }
      s.addEventListener("change", function () { const c = {}; c[key] = s.value; go(c); });
      return el("label", null, [label + " ", s]);
    }
    function dateInput(key, label) {
      const i = el("input", { type: "date", id: "f-" + key, value: st[key] });
      i.addEventListener("change", function () { const c = {}; c[key] = i.value; go(c); });
      return el("label", null, [label + " ", i]);
    }
    const search = el("input", { type: "search", id: "f-q", placeholder: "session or run id", value: st.q });
    let timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { go({ q: search.value }); }, 250);
    });
    const parts = [
      select("rubric", "rubric", [["", "every rubric"]].concat(D.rubrics.map(function (r) { return [r, r]; }))),
      select("dimension", "dimension", [["", "any dimension"]].concat(D.dims.map(function (d) { return [d.id, d.id]; }))),
      select("status", "status", [["", "any status"]].concat(STATUSES.map(function (s) { return [s, s]; }))),
      dateInput("from", "from"),
      dateInput("to", "to"),
      el("label", null, ["session ", search]),
      select("flag", "flag", [["", "any flags"], ["unmeasured", "unmeasured"], ["contaminated", "contaminated"], ["none", "no flag"]]),
    ];
    if (MULTI) {
      parts.push(select("source", "repository", [["", "every repository"]].concat(
        D.sources.map(function (s, i) { return [String(i), s.label]; }))));
    }
    parts.push(select("sort", "order", [["", "newest session first"], ["start", "oldest session first"], ["session", "session id"]]));
    const reset = el("a", { href: "#", text: "clear filters", cls: "reset" });
    parts.push(reset);
    return el("div", { cls: "filters", id: "filters", role: "search" }, parts);
  }

  function rateTable(st, f) {
    // per rubric x dimension; each session counted once per rubric (its latest record),
    // unmeasured signals apart (never in n)
    const latest = f.base.filter(function (r) { return r.latest; });
    const dims = f.dim >= 0 ? [f.dim] : D.dims.map(function (_, i) { return i; });
    const head = el("tr", null, [el("th", { text: "rubric" }), el("th", { text: "dimension" })].concat(
      STATUSES.map(function (s) { return el("th", { text: s }); })));
    const body = el("tbody");
    let anyUnmeasured = false;
    D.rubrics.forEach(function (rubric, rub) {
      for (const d of dims) {
        const counts = [0, 0, 0, 0];
        const why = new Map(); // reason -> how many records it left out
        let n = 0, un = 0;
        for (const rec of latest) {
          if (rec.rubric !== rub) continue;
          const got = rec.dims.get(d);
          if (!got) continue;
          const left = rec.flags.find(function (f) { return f.kind === "unmeasured" && f.dim === d; });
          if (left) { un++; why.set(left.reason, (why.get(left.reason) || 0) + 1); continue; }
          n++;
          counts[got.status]++;
        }
        const reasons = Array.from(why.entries()).sort(function (a, b) { return b[1] - a[1]; })
          .map(function (e) { return e[1] + ": " + e[0]; }).join("; ");
        if (!n && !un) continue;
        const row = el("tr", null, [el("td", { text: rubric }), el("td", { cls: "dim" }, [el("code", { text: dimName(d) }),
          D.dims[d].reported_only ? el("div", { cls: "note", text: "reported, not graded" }) : null,
          D.dims[d].method === "judge" ? el("div", { cls: "note", text: "judge, advisory" }) : null])]);
        if (n) {
          STATUSES.forEach(function (s, code) {
            const cell = el("td", { cls: "rate" + (f.dim === d && f.code === code ? " chosen" : "") });
            cell.appendChild(el("a", { href: fragment(Object.assign(readState(), { rubric: rubric, dimension: D.dims[d].id, status: s, page: "", run: "", line: "" })),
              text: estimate(counts[code], n) }));
            row.appendChild(cell);
          });
        } else { // no rate at all, never 0/0: say why in one line
          row.appendChild(el("td", { cls: "unmeasured-all", colspan: String(STATUSES.length),
            text: "no measured record: " + un + " of " + un + " unmeasured (" + reasons + ")" }));
        }
        const unCell = el("td", { cls: "unmeasured", text: un ? un + " (not in n)" : "0" });
        if (un) unCell.setAttribute("title", reasons);
        row.appendChild(unCell);
        if (un) anyUnmeasured = true;
        row.dataset.rubric = rubric;
        row.dataset.dimension = dimName(d);
        body.appendChild(row);
      }
    });
    // the unmeasured column only when some signal was unmeasured (its note says so otherwise)
    if (anyUnmeasured) head.appendChild(el("th", { text: "unmeasured" }));
    else for (const td of body.querySelectorAll("td.unmeasured")) td.remove();
    const note = anyUnmeasured ? null : el("p", { cls: "note", text: "No dimension status of the selected records was unmeasured." });
    return el("div", { cls: "scroll" }, [el("table", { cls: "rates", id: "rates" }, [el("thead", null, [head]), body]), note]);
  }

  function statusChip(code, title) {
    const s = STATUSES[code];
    return el("span", { cls: "chip st-" + s, title: title, text: SHORT[s] });
  }

  function recordRow(rec, dims, st, dim) {
    const link = el("a", { href: runLink(rec) }, [el("code", { text: rec.session })]);
    const cells = [el("td", null, [link]), el("td", { text: D.rubrics[rec.rubric] }), el("td", { text: when(rec.start) })];
    if (MULTI) cells.push(el("td", { text: D.sources[rec.source].label }));
    for (const d of dims) {
      const got = rec.dims.get(d);
      const td = el("td", { cls: "c" + (d === dim ? " chosen" : "") });
      td.appendChild(got ? statusChip(got.status, dimName(d) + ": " + STATUSES[got.status]) : el("span", { cls: "absent", text: "—" }));
      cells.push(td);
    }
    if (dim >= 0) {
      const got = rec.dims.get(dim);
      cells.push(el("td", { cls: "evidence short", text: got ? got.evidence : "" }));
    }
    cells.push(el("td", { text: flagSummary(rec, dim) }));
    cells.push(el("td", { cls: rec.verify ? "verify-" + rec.verify.outcome : "", text: rec.verify ? rec.verify.outcome : "not verified" }));
    const tr = el("tr", null, cells);
    tr.dataset.runId = rec.run;
    if (!rec.latest) tr.className = "older";
    return tr;
  }

  // "unmeasured: process-safety, 3 facts; contaminated" (with a dimension chosen: its flags)
  function flagSummary(rec, dim) {
    const dims = [], facts = [];
    let contaminated = false, judge = false;
    for (const f of rec.flags) {
      if (f.kind === "contaminated") contaminated = true;
      else if (f.dim >= 0) { if (dim < 0 || f.dim === dim) dims.push(dimName(f.dim)); }
      else if (f.signal === "rule-judge") judge = true;
      else facts.push(f.signal);
    }
    const parts = [];
    const un = dims.slice();
    if (dim < 0 && facts.length) un.push(facts.length + " fact" + (facts.length > 1 ? "s" : ""));
    if (dim < 0 && judge) un.push("rule judge");
    if (un.length) parts.push("unmeasured: " + un.join(", "));
    if (contaminated) parts.push("contaminated");
    return parts.join("; ");
  }

  function sorted(list, st) {
    const out = list.slice();
    if (st.sort === "session") out.sort(function (a, b) { return a.session < b.session ? -1 : a.session > b.session ? 1 : a.i - b.i; });
    else {
      const sign = st.sort === "start" ? 1 : -1;
      out.sort(function (a, b) {
        if (a.start === b.start) return a.i - b.i;
        if (a.start === null) return 1;
        if (b.start === null) return -1;
        return sign * (a.start - b.start);
      });
    }
    return out;
  }

  function recordsView(st) {
    const f = filtered(st);
    const rows = sorted(f.shown, st);
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    const page = Math.min(pages, Math.max(1, parseInt(st.page || "1", 10) || 1));
    const shownDims = [];
    for (const rec of f.shown) for (const d of rec.order) if (shownDims.indexOf(d) < 0) shownDims.push(d);
    shownDims.sort(function (a, b) { return a - b; });
    const sessions = new Set(f.shown.map(function (r) { return r.source + "\u0000" + r.session; }));
    const older = f.shown.filter(function (r) { return !r.latest; }).length;
    const undated = f.base.filter(function (r) { return r.start === null; }).length;
    const summary = el("p", { cls: "summary", id: "summary" }, [
      el("strong", { text: f.shown.length + " of " + R.length + " records" }),
      " · " + sessions.size + " sessions",
      older ? " · " + older + " older records of a session re-scored under the same rubric (listed, not counted in rates)" : "",
      (st.from || st.to) ? "" : (undated ? " · " + undated + " without a session start (outside any date range)" : ""),
    ]);
    const main = el("section", { id: "records" }, [controls(st), summary]);
    if (f.dim >= 0 && f.code >= 0) {
      const latest = f.base.filter(function (r) { return r.latest && !unmeasured(r, f.dim); });
      const k = latest.filter(function (r) { return r.dims.get(f.dim).status === f.code; }).length;
      main.appendChild(el("p", { cls: "headline", id: "headline" }, [
        el("code", { text: D.dims[f.dim].id }), " is ", el("strong", { text: st.status }),
        " on " + estimate(k, latest.length) + " of the sessions these filters select (Wilson 95%, fixed n)"]));
    }
    main.appendChild(el("h2", { text: "Status rates of the selected records" }));
    main.appendChild(el("p", { cls: "note", text: "k/n = rate [Wilson 95% interval]: n counts each session once per rubric (its latest record) and leaves out records whose signal was unmeasured; the status filter does not change n. Click a cell to list those records." }));
    main.appendChild(rateTable(st, f));
    main.appendChild(ratesView(st));
    main.appendChild(el("h2", { text: "Records" }));
    const head = [el("th", { text: "session" }), el("th", { text: "rubric" }), el("th", { text: "session start" })];
    if (MULTI) head.push(el("th", { text: "repository" }));
    for (const d of shownDims) head.push(el("th", { cls: "c", title: dimName(d), text: abbreviation(dimName(d)) }));
    if (f.dim >= 0) head.push(el("th", { text: D.dims[f.dim].id + " evidence" }));
    head.push(el("th", { text: "flags" }), el("th", { text: "verify" }));
    const body = el("tbody");
    for (const rec of rows.slice((page - 1) * PAGE, page * PAGE)) body.appendChild(recordRow(rec, shownDims, st, f.dim));
    main.appendChild(el("div", { cls: "scroll" }, [el("table", { cls: "records", id: "record-table" }, [el("thead", null, [el("tr", null, head)]), body])]));
    main.appendChild(pager(page, pages, rows.length));
    return main;
  }

  function abbreviation(id) {
    return id.split("-").map(function (w) { return w.charAt(0).toUpperCase(); }).join("");
  }

  function pager(page, pages, total) {
    const nav = el("nav", { cls: "pager", id: "pager" });
    function to(p, label) {
      if (p < 1 || p > pages || p === page) return el("span", { cls: "off", text: label });
      return el("a", { href: fragment(Object.assign(readState(), { page: String(p) })), text: label });
    }
    nav.appendChild(to(page - 1, "← previous"));
    nav.appendChild(el("span", { text: " page " + page + " of " + pages + " (" + total + " records, " + PAGE + " a page) " }));
    nav.appendChild(to(page + 1, "next →"));
    return nav;
  }

  // ---------------------------------------------------------------- one record
  // #run=RUN_ID opens its record; a run id on several journal lines also names the line
  function runLink(rec) {
    const many = byRun.get(rec.run).length > 1;
    return fragment(Object.assign(readState(), { run: rec.run, line: many ? String(rec.line) : "" }));
  }

  function recordView(st) {
    const found = byRun.get(st.run) || [];
    const back = el("a", { href: fragment(Object.assign(readState(), { run: "", line: "" })), text: "← back to the records", cls: "back" });
    if (!found.length) {
      return el("section", { id: "record" }, [back, el("h1", { text: "No record has this run id" }),
        el("p", null, ["run id ", el("code", { text: st.run })])]);
    }
    const chosen = found.filter(function (r) { return String(r.line) === st.line; });
    const rec = chosen.length ? chosen[0] : found[found.length - 1];
    const sec = el("section", { id: "record" }, [back]);
    sec.dataset.runId = rec.run;
    sec.dataset.line = String(rec.line);
    sec.appendChild(el("h1", null, ["Session evaluation: ", el("code", { text: rec.session })]));
    sec.appendChild(el("p", { cls: "sub" }, ["run ", el("code", { text: rec.run }), " · " + D.rubrics[rec.rubric] +
      " · session start " + when(rec.start) + (MULTI ? " · " + D.sources[rec.source].label : "") + " · self-evaluation"]));
    if (found.length > 1) {
      sec.appendChild(el("p", { cls: "warn" }, ["This run id is on " + found.length + " lines of the journal; shown: line " + rec.line + ". Others: "].concat(
        found.filter(function (r) { return r !== rec; }).map(function (r) {
          return el("a", { href: fragment(Object.assign(readState(), { run: r.run, line: String(r.line) })), text: "line " + r.line + " (" + D.rubrics[r.rubric] + ") " });
        }))));
    }
    if (rec.flags.length) {
      sec.appendChild(el("h2", { text: "Flags: what was not measured, and why" }));
      sec.appendChild(el("ul", { cls: "flags", id: "flags" }, rec.flags.map(function (f) {
        const li = el("li", null, [el("strong", { text: f.kind }), f.signal ? " " : "",
          f.signal ? el("code", { text: f.signal }) : null, ": " + f.reason]);
        li.dataset.signal = f.signal || f.kind;
        return li;
      })));
    }
    sec.appendChild(compare(rec));
    const judges = rec.order.filter(function (d) { return D.dims[d].method === "judge"; });
    const judge = el("section", { cls: "judge", id: "judge" }, [el("h2", { text: "Judge dimensions (advisory)" })]);
    if (judges.length) {
      judge.appendChild(el("p", { text: D.judge_advisory }));
      for (const d of judges) {
        const got = rec.dims.get(d);
        const rows = [["status", STATUSES[got.status]], ["evidence", got.evidence]].concat(got.extra || []);
        judge.appendChild(el("h3", null, [el("code", { text: dimName(d) })]));
        judge.appendChild(pairs(rows));
      }
    } else {
      judge.appendChild(el("p", { text: "This record carries no judge dimension." }));
    }
    sec.appendChild(judge);
    sec.appendChild(el("h2", { text: "KPIs (reported, not graded)" }));
    sec.appendChild(pairs(D.kpi_keys.map(function (k, i) { return [k, rec.kpis[i]]; }), "kpis"));
    sec.appendChild(el("h2", { text: "Facts (what the judge is given, computed from the evidence)" }));
    sec.appendChild(pairs(D.fact_keys.map(function (k, i) {
      const un = rec.flags.filter(function (f) { return f.signal === "fact:" + k; });
      return [k, rec.facts[i] + (un.length ? " (unmeasured: " + un[0].reason + ")" : "")];
    }), "facts"));
    sec.appendChild(el("h2", { text: "Re-verify" }));
    const src = D.sources[rec.source];
    const state = rec.verify ? rec.verify.outcome + (rec.verify.summary ? ": " + rec.verify.summary : "") :
      src.verify === "not requested" ? "not verified: this page was built with --no-verify" :
      "not verified: no ledger (sessions.jsonl) beside the journal to re-score from";
    sec.appendChild(el("p", { id: "verify-state" }, [el("strong", { text: "When this page was built: " }), state]));
    sec.appendChild(el("pre", { text: rec.command }));
    sec.appendChild(el("h2", { text: "Provenance" }));
    sec.appendChild(pairs([["run_id", rec.run], ["session_id", rec.session]].concat(
      D.record_fields.map(function (k, i) { return [k, rec.fields[i]]; }),
      [["journal", src.journal + ", line " + rec.line]]), "provenance"));
    const same = (bySession.get(rec.source + "\u0000" + rec.session) || []).filter(function (r) { return r.rubric === rec.rubric && r.run !== rec.run; });
    if (same.length) {
      sec.appendChild(el("h2", { text: "Other records of this session under " + D.rubrics[rec.rubric] }));
      sec.appendChild(el("ul", null, same.map(function (r) {
        return el("li", null, [el("a", { href: runLink(r) }, [el("code", { text: r.run })]), " (line " + r.line + ")"]);
      })));
    }
    return sec;
  }

  function pairs(rows, id) {
    const body = el("tbody", null, rows.map(function (r) {
      return el("tr", null, [el("td", { cls: "key", text: r[0] }), el("td", { cls: "evidence", text: r[1] })]);
    }));
    const t = el("table", { cls: "pairs" }, [body]);
    if (id) t.id = id;
    return t;
  }

  function latestOf(source, session, rubric) {
    const all = (bySession.get(source + "\u0000" + session) || []).filter(function (r) { return r.rubric === rubric; });
    const latest = all.filter(function (r) { return r.latest; });
    return latest.length ? latest[latest.length - 1] : all[all.length - 1];
  }

  function compare(rec) {
    const others = [];
    D.rubrics.forEach(function (_, rub) {
      if (rub === rec.rubric) return;
      const o = latestOf(rec.source, rec.session, rub);
      if (o) others.push(o);
    });
    const wrap = el("section", { id: "dimensions" }, [el("h2", { text: others.length ?
      "Dimensions, beside the same session under " + others.map(function (o) { return D.rubrics[o.rubric]; }).join(", ") :
      "Dimensions" })]);
    if (!others.length) wrap.appendChild(el("p", { cls: "note", text: "This session has no record under another rubric version in this journal." }));
    const head = [el("th", { text: "dimension" }), el("th", { text: D.rubrics[rec.rubric] + " (this record)" })];
    for (const o of others) {
      head.push(el("th", null, [D.rubrics[o.rubric] + " (", el("a", { href: runLink(o), text: "open" }), ")"]));
    }
    const order = rec.order.slice();
    for (const o of others) for (const d of o.order) if (order.indexOf(d) < 0) order.push(d);
    const body = el("tbody");
    let flips = 0;
    for (const d of order) {
      const mine = rec.dims.get(d);
      const changed = others.filter(function (o) { const g = o.dims.get(d); return mine && g && g.status !== mine.status; });
      const flipped = changed.length > 0;
      if (flipped) flips++;
      const row = el("tr", { cls: flipped ? "flip" : "" }, [el("td", null, [el("code", { text: dimName(d) }),
        flipped ? el("div", { cls: "flipmark", text: "flipped: " + changed.map(function (o) {
          return STATUSES[mine.status] + " → " + STATUSES[o.dims.get(d).status] + " (" + D.rubrics[o.rubric] + ")"; }).join(", ") }) : null,
        D.dims[d].method === "judge" ? el("span", { cls: "note", text: " judge, advisory" }) : null])]);
      for (const r of [rec].concat(others)) row.appendChild(dimCell(r.dims.get(d)));
      row.dataset.dimension = dimName(d);
      body.appendChild(row);
    }
    if (others.length) wrap.appendChild(el("p", { cls: "summary", id: "flips", text: flips + " dimension(s) flipped between the versions (highlighted)." }));
    wrap.appendChild(el("div", { cls: "scroll" }, [el("table", { cls: "compare" }, [el("thead", null, [el("tr", null, head)]), body])]));
    return wrap;
  }

  function dimCell(got) {
    if (!got) return el("td", null, [el("span", { cls: "absent", text: "(absent in this version)" })]);
    const score = (got.extra || []).filter(function (p) { return p[0] === "score"; });
    return el("td", null, [el("span", { cls: "chip st-" + STATUSES[got.status], text: STATUSES[got.status] }),
      score.length ? el("span", { cls: "note", text: " score " + score[0][1] }) : null,
      el("div", { cls: "evidence", text: got.evidence })]);
  }

  // ---------------------------------------------------------------- fire rates over time
  function ratesView(st) {
    const wrap = el("section", { id: "fire-rates" }, [el("h2", { text: "Fire rates over time" })]);
    const rub = st.rubric ? rubricIndex(st.rubric) : -1;
    const dim = st.dimension ? dimIndex(st.dimension) : -1;
    const series = D.series.filter(function (s) {
      return (rub < 0 || s.rubric === rub) && (dim < 0 || s.dim === dim) && !D.dims[s.dim].reported_only;
    });
    if (!series.length) {
      wrap.appendChild(el("p", { text: "No dated record to draw (session starts come from sessions.jsonl beside the journal)." }));
      return wrap;
    }
    const kinds = new Set(series.map(function (s) { return s.caption; }));
    wrap.appendChild(el("p", { cls: "note", text: "Running rate of fail (red) and cannot-determine (amber) per dimension over the whole journal (only the rubric and dimension filters apply), sessions in order of their start, each session's latest record, unmeasured signals left out; dashed: the ~" + pct(D.ceiling).replace(".0%", "%") + " fire-rate ceiling. Band: " + Array.from(kinds).join("; ") + "." }));
    const grid = el("div", { cls: "grid" });
    const groups = new Map();
    for (const s of series) {
      const key = s.rubric + ":" + s.dim;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(s);
    }
    for (const group of groups.values()) grid.appendChild(chart(group));
    wrap.appendChild(grid);
    return wrap;
  }

  function chart(group) {
    const W = 340, H = 150, L = 38, B = 22, T = 8, Rm = 8;
    const xs = group.flatMap(function (s) { return s.x; });
    const x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    let top = D.ceiling * 1.5;
    for (const s of group) for (const v of s.hi) if (v !== null && v > top) top = v;
    top = Math.min(1, Math.ceil(top * 10) / 10);
    function X(v) { return L + (x1 === x0 ? (W - L - Rm) / 2 : ((v - x0) / (x1 - x0)) * (W - L - Rm)); }
    function Y(v) { return T + (1 - v / top) * (H - T - B); }
    const g = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img" });
    g.appendChild(svg("line", { x1: L, x2: W - Rm, y1: Y(0), y2: Y(0), stroke: "#8a94a6" }));
    for (const v of [top / 2, top]) {
      g.appendChild(svg("line", { x1: L, x2: W - Rm, y1: Y(v), y2: Y(v), stroke: "#e2e8f0" }));
      const t = svg("text", { x: L - 4, y: Y(v) + 4, "text-anchor": "end", "font-size": 10, fill: "#4a5568" });
      t.textContent = pct(v).replace(".0%", "%");
      g.appendChild(t);
    }
    const ceiling = svg("line", { x1: L, x2: W - Rm, y1: Y(D.ceiling), y2: Y(D.ceiling), stroke: "#4a5568", "stroke-dasharray": "4 3" });
    g.appendChild(ceiling);
    const colours = { 1: ["#c53030", "#feb2b2"], 3: ["#b7791f", "#faf089"] };
    // cannot-determine first, so the fail series (the fire that matters most) is drawn on top
    for (const s of group.slice().reverse()) {
      const c = colours[s.status] || ["#2b6cb0", "#bee3f8"];
      const up = [], down = [];
      for (let i = 0; i < s.x.length; i++) {
        if (s.lo[i] === null) continue;
        up.push(X(s.x[i]).toFixed(1) + "," + Y(s.hi[i]).toFixed(1));
        down.unshift(X(s.x[i]).toFixed(1) + "," + Y(s.lo[i]).toFixed(1));
      }
      if (up.length) g.appendChild(svg("polygon", { points: up.concat(down).join(" "), fill: c[1], "fill-opacity": 0.35, stroke: "none" }));
      const line = s.x.map(function (x, i) { return X(x).toFixed(1) + "," + Y(s.k[i] / s.n[i]).toFixed(1); });
      g.appendChild(svg("polyline", { points: line.join(" "), fill: "none", stroke: c[0], "stroke-width": 1.5 }));
    }
    for (const [v, anchor] of [[x0, "start"], [x1, "end"]]) {
      const t = svg("text", { x: anchor === "start" ? L : W - Rm, y: H - 6, "text-anchor": anchor, "font-size": 10, fill: "#4a5568" });
      t.textContent = day(v);
      g.appendChild(t);
    }
    const s0 = group[0];
    const last = [];
    for (const s of group) {
      const i = s.x.length - 1;
      const ci = s.lo[i] === null ? "" : " [" + pct(s.lo[i]) + ", " + pct(s.hi[i]) + "]";
      last.push(el("br"), el("span", { cls: "fire st-" + STATUSES[s.status], text: STATUSES[s.status] }),
        " " + s.k[i] + "/" + s.n[i] + " = " + pct(s.k[i] / s.n[i]) + ci);
    }
    const fig = el("figure", { cls: "chart" }, [g, el("figcaption", null, [el("code", { text: dimName(s0.dim) }), " · " + D.rubrics[s0.rubric]].concat(last))]);
    fig.dataset.dimension = dimName(s0.dim);
    fig.dataset.rubric = D.rubrics[s0.rubric];
    return fig;
  }

  // ---------------------------------------------------------------- the page
  function header() {
    const items = D.sources.map(function (s) {
      const bits = [s.records + " records"];
      if (s.skipped.length) bits.push(s.skipped.length + " journal line(s) skipped");
      if (s.duplicates) bits.push(s.duplicates + " run id(s) on more than one line");
      bits.push(s.dates ? "session starts from sessions.jsonl" : "no sessions.jsonl: no session dates");
      if (s.ledger) {
        bits.push("ledger: " + s.ledger.sessions + " sessions" + (s.ledger.first_start ? " from " +
          s.ledger.first_start.slice(0, 10) + " to " + (s.ledger.last_end || "?").slice(0, 10) : "") +
          "; " + s.ledger.events);
      }
      bits.push(s.verify === "verified" ? "every record re-verified from the ledger when built" : s.verify === "not requested" ? "not re-verified (--no-verify)" : "not re-verified: no ledger");
      return el("li", null, [el("code", { text: s.journal }), ": " + bits.join(", ")]);
    });
    const skipped = [];
    for (const s of D.sources) for (const line of s.skipped) skipped.push(el("li", null, [el("code", { text: s.journal }), " " + line]));
    return el("header", null, [
      el("h1", { text: "evalkit explorer" }),
      el("ul", { cls: "sources" }, items),
      skipped.length ? el("details", null, [el("summary", { text: "skipped journal lines" }), el("ul", null, skipped)]) : null,
    ]);
  }

  function render() {
    const st = readState();
    const app = document.getElementById("app");
    const focused = document.activeElement && document.activeElement.id;
    app.replaceChildren();
    app.appendChild(header());
    if (st.run) {
      app.appendChild(recordView(st));
    } else {
      app.appendChild(recordsView(st));
    }
    document.title = st.run ? "evalkit explorer: " + st.run : "evalkit explorer";
    if (st.run) window.scrollTo(0, 0);
    // typing in the search box re-renders the page: keep the caret where it was
    const again = focused ? document.getElementById(focused) : null;
    if (again) {
      again.focus();
      if (again.type === "search") again.setSelectionRange(again.value.length, again.value.length);
    }
  }

  window.addEventListener("hashchange", render);
  render();
})();
