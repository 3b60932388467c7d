(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("replay-data").textContent);
  var F = D.frames, TOTAL = F.length, SVGNS = "http://www.w3.org/2000/svg";
  var COLORS = ["#d9480f", "#1971c2", "#2f9e44", "#9c36b5"];
  var cur = -1, view = "all";
  function $(id) { return document.getElementById(id); }
  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, attrs[k]); } }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function html(tag, cls, text, parent) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function clear(e) { while (e.firstChild) { e.removeChild(e.firstChild); } }

  // pip spots in a 1 x 1 half, for a half of a vertical tile (transposed on horizontal tiles); built once
  var SPOTS = (function () {
    var a = 0.26, m = 0.5, b = 0.74, rows = [0.2, 0.4, 0.6, 0.8], out = [
      [], [[m, m]], [[a, a], [b, b]], [[a, a], [m, m], [b, b]],
      [[a, a], [b, a], [a, b], [b, b]], [[a, a], [b, a], [m, m], [a, b], [b, b]],
      [[a, a], [b, a], [a, m], [b, m], [a, b], [b, b]],
      [[a, a], [b, a], [a, m], [m, m], [b, m], [a, b], [b, b]],
      [[a, a], [m, a], [b, a], [a, m], [b, m], [a, b], [m, b], [b, b]],
      [[a, a], [m, a], [b, a], [a, m], [m, m], [b, m], [a, b], [m, b], [b, b]]
    ];
    for (var v = 10; v <= 12; v++) {
      var s = [], i;
      for (i = 0; i < 4; i++) { s.push([0.22, rows[i]]); s.push([0.78, rows[i]]); }
      var mid = v === 10 ? [0.35, 0.65] : v === 11 ? [0.2, 0.5, 0.8] : rows;
      for (i = 0; i < mid.length; i++) { s.push([0.5, mid[i]]); }
      out.push(s);
    }
    return out;
  })();
  function drawHalf(g, x, y, v, horizontal) {
    var r = v > 9 ? 0.068 : v > 6 ? 0.082 : 0.092, pts = SPOTS[v];
    for (var i = 0; i < pts.length; i++) {
      var px = horizontal ? pts[i][1] : pts[i][0], py = horizontal ? pts[i][0] : pts[i][1];
      svg("circle", {cx: x + px, cy: y + py, r: r}, g);
    }
  }
  function drawTile(parent, x, y, w, h, p1, p2, cls, label) {
    var g = svg("g", {"class": "tile" + (cls ? " " + cls : "")}, parent);
    if (label) { svg("title", {}, g).textContent = label; }
    svg("rect", {"class": "face", x: x + 0.02, y: y + 0.02, width: w - 0.04, height: h - 0.04, rx: 0.13}, g);
    if (p1 === null) { svg("circle", {cx: x + w / 2, cy: y + h / 2, r: 0.16}, g); return g; }
    var horizontal = w > h;
    if (horizontal) {
      svg("line", {x1: x + 1, y1: y + 0.14, x2: x + 1, y2: y + h - 0.14}, g);
      drawHalf(g, x, y, p1, true); drawHalf(g, x + 1, y, p2, true);
    } else {
      svg("line", {x1: x + 0.14, y1: y + 1, x2: x + w - 0.14, y2: y + 1}, g);
      drawHalf(g, x, y, p1, false); drawHalf(g, x, y + 1, p2, false);
    }
    return g;
  }
  function tileName(id) { var p = D.pairs[id]; return p[1] + "-" + p[0]; }
  function seatVisible(seat) { return view === "all" || String(seat) === view; }
  function eventText(f) { return f.hidden !== null && !seatVisible(f.seat) ? f.hidden : f.text; }

  // ---------------------------------------------------------------- static parts
  function buildMeta() {
    var m = D.meta, parts = [];
    parts.push(m.players + " players" + (m.partnership ? " (teams " + D.sides.join(" vs ") + ")" : ""));
    parts.push(m.max_pip === 6 ? "double-six" : "double-" + (m.max_pip === 9 ? "nine" : "twelve"));
    parts.push("target " + m.target);
    if (m.agents) { parts.push(m.agents.map(function (a, s) { return "P" + s + " " + a; }).join(", ")); }
    if (m.seed !== null && m.seed !== undefined) { parts.push("seed " + m.seed); }
    parts.push(m.hands + (m.hands === 1 ? " hand" : " hands"));
    parts.push(m.events + " events");
    parts.push("result: " + m.result);
    var rules = [];
    for (var k in m.rules) { if (Object.prototype.hasOwnProperty.call(m.rules, k)) { rules.push(k + "=" + m.rules[k]); } }
    if (rules.length) { parts.push("rules: " + rules.join(", ")); }
    $("meta").textContent = parts.join(" \u00b7 ");
    $("target").textContent = "(target " + m.target + ")";
    document.title = m.title;
  }
  function buildSelects() {
    var hs = $("hand-select");
    for (var h = 0; h < D.hand_steps.length; h++) {
      var o = html("option", null, "Hand " + (h + 1), hs); o.value = String(h + 1);
    }
    var vs = $("view-select");
    var all = html("option", null, "All hands face up", vs); all.value = "all";
    for (var s = 0; s < D.names.length; s++) {
      var o2 = html("option", null, D.names[s] + "'s view", vs); o2.value = String(s);
    }
    hs.addEventListener("change", function () { go(D.hand_steps[parseInt(hs.value, 10) - 1] - 1); });
    vs.addEventListener("change", function () { view = vs.value; fillLog(); var c = cur; cur = -1; go(c); });
    var sl = $("slider"); sl.max = String(TOTAL);
    sl.addEventListener("input", function () { go(parseInt(sl.value, 10) - 1); });
  }
  var logItems = [];
  function buildLog() {
    var log = $("log");
    for (var k = 0; k < TOTAL; k++) {
      var f = F[k], li = html("li", null, null, log);
      if (f.kind === "hand_start") { li.className = "hs"; }
      else if (f.kind === "play" && k > 0 && sum(f.scores) !== sum(F[k - 1].scores)) { li.className = "sc"; }
      else if (f.kind === "settlement" || f.kind === "game_over") { li.className = "end"; }
      html("span", "n", f.step, li);
      html("span", "t", "", li);
      li.setAttribute("data-step", String(f.step));
      li.addEventListener("click", (function (i) { return function () { go(i); }; })(k));
      logItems.push(li);
    }
    fillLog();
  }
  function sum(a) { var t = 0; for (var i = 0; i < a.length; i++) { t += a[i]; } return t; }
  function fillLog() {
    for (var k = 0; k < TOTAL; k++) { logItems[k].lastChild.textContent = eventText(F[k]); }
  }

  // ---------------------------------------------------------------- score chart
  var chartX = function () { return 0; }, chartCursor = null;
  function buildChart() {
    var c = $("chart"), W = 320, H = 130, L = 34, R = 8, T = 10, B = 18;
    var lo = 0, hi = D.meta.target, k, s;
    for (k = 0; k < TOTAL; k++) {
      for (s = 0; s < F[k].scores.length; s++) { lo = Math.min(lo, F[k].scores[s]); hi = Math.max(hi, F[k].scores[s]); }
    }
    if (hi === lo) { hi = lo + 1; }
    var sx = function (i) { return L + (W - L - R) * (TOTAL > 1 ? i / (TOTAL - 1) : 0); };
    var sy = function (v) { return T + (H - T - B) * (hi - v) / (hi - lo); };
    chartX = sx;
    svg("line", {x1: L, x2: W - R, y1: sy(0), y2: sy(0), stroke: "#c5ccd6", "stroke-width": 1}, c);
    svg("line", {x1: L, x2: W - R, y1: sy(D.meta.target), y2: sy(D.meta.target), stroke: "#e8590c",
                 "stroke-width": 1, "stroke-dasharray": "4 3"}, c);
    svg("text", {x: L - 4, y: sy(D.meta.target) + 3, "text-anchor": "end"}, c).textContent = String(D.meta.target);
    svg("text", {x: L - 4, y: sy(0) + 3, "text-anchor": "end"}, c).textContent = "0";
    if (lo < 0 && sy(lo) - sy(0) > 10) { svg("text", {x: L - 4, y: sy(lo) + 3, "text-anchor": "end"}, c).textContent = String(lo); }
    svg("text", {x: L, y: H - 4}, c).textContent = "step 1";
    svg("text", {x: W - R, y: H - 4, "text-anchor": "end"}, c).textContent = "step " + TOTAL;
    for (s = 0; s < D.sides.length; s++) {
      var pts = [], prev = null;
      for (k = 0; k < TOTAL; k++) {
        var v = F[k].scores[s];
        if (prev !== null && v !== prev) { pts.push(sx(k).toFixed(1) + "," + sy(prev).toFixed(1)); }
        if (prev === null || v !== prev || k === TOTAL - 1) { pts.push(sx(k).toFixed(1) + "," + sy(v).toFixed(1)); }
        prev = v;
      }
      svg("polyline", {points: pts.join(" "), fill: "none", stroke: COLORS[s % 4], "stroke-width": 1.6,
                       "stroke-linejoin": "round", "class": "series", id: "series-" + s}, c);
    }
    chartCursor = svg("line", {y1: T - 4, y2: H - B + 2, stroke: "#1d2330", "stroke-width": 1, id: "chart-cursor"}, c);
    c.addEventListener("click", function (e) {
      var r = c.getBoundingClientRect(), x = (e.clientX - r.left) * W / r.width;
      var i = Math.round((x - L) / (W - L - R) * (TOTAL - 1));
      go(Math.max(0, Math.min(TOTAL - 1, i)));
    });
  }

  // ---------------------------------------------------------------- board
  function drawBoard(f) {
    var b = $("board");
    clear(b);
    var minX = -12, maxX = 12, minY = -6.5, maxY = 6.5, i;
    var tiles = f.layout >= 0 ? D.layouts[f.layout].tiles.slice(0, f.placed) : [];
    var spinner = f.layout >= 0 ? D.layouts[f.layout].spinner : -1;
    for (i = 0; i < tiles.length; i++) {
      var t = tiles[i];
      minX = Math.min(minX, t[1] - 1); minY = Math.min(minY, t[2] - 1);
      maxX = Math.max(maxX, t[1] + t[3] + 1); maxY = Math.max(maxY, t[2] + t[4] + 1);
    }
    for (i = 0; i < f.ends.length; i++) {
      minX = Math.min(minX, f.ends[i][3] - 1.2); maxX = Math.max(maxX, f.ends[i][3] + 1.2);
      minY = Math.min(minY, f.ends[i][4] - 1.2); maxY = Math.max(maxY, f.ends[i][4] + 1.2);
    }
    b.setAttribute("viewBox", [minX, minY, maxX - minX, maxY - minY].join(" "));
    b.setAttribute("preserveAspectRatio", "xMidYMid meet");
    var g = svg("g", {}, b);
    for (i = 0; i < tiles.length; i++) {
      var u = tiles[i], cls = [];
      if (u[0] === spinner) { cls.push("spinner"); }
      if (f.kind === "play" && u[0] === f.tile) { cls.push("last"); }
      drawTile(g, u[1], u[2], u[3], u[4], u[5], u[6], cls.join(" "),
               tileName(u[0]) + (u[0] === spinner ? " (spinner)" : ""));
    }
    for (i = 0; i < f.ends.length; i++) {
      var e = f.ends[i], counted = e[2] !== null;
      var eg = svg("g", {"class": "end " + (counted ? "counted" : "uncounted")}, g);
      svg("title", {}, eg).textContent = e[0] + " end: " + e[1] + (counted ? " (counts " + e[2] + ")" : " (open, not counted yet)");
      svg("circle", {cx: e[3], cy: e[4], r: 0.42}, eg);
      svg("text", {x: e[3], y: e[4] + 0.02}, eg).textContent = counted ? String(e[2]) : String(e[1]);
    }
    if (!tiles.length) {
      var note = svg("text", {x: 0, y: 0, "class": "board-note"}, g);
      note.textContent = f.kind === "hand_start" || f.kind === "draw" ? "Hand " + f.hand + ": the table is empty" : "";
    }
  }
  function describeEnds(f) {
    if (!f.placed) { return "No tiles down yet: any tile may lead."; }
    var parts = [], i;
    for (i = 0; i < f.ends.length; i++) {
      var e = f.ends[i];
      if (e[2] === null) { parts.push(e[0] + " " + e[1] + " (not counted yet)"); }
      else if (e[2] !== e[1]) { parts.push(e[0] + " " + e[1] + "-" + e[1] + " = " + e[2]); }
      else { parts.push(e[0] + " " + e[2]); }
    }
    if (f.spinner_points) { parts.push("spinner " + f.spinner_points); }
    return "Open ends: " + parts.join(" \u00b7 ") + "  \u2192 count " + f.count +
           (f.count && f.count % 5 === 0 ? " (a multiple of 5)" : "");
  }

  // ---------------------------------------------------------------- hands
  function drawHands(f) {
    var box = $("hands");
    clear(box);
    for (var s = 0; s < f.hands.length; s++) {
      var row = html("div", "hand" + (f.turn === s ? " turn" : ""), null, box);
      row.id = "hand-" + s;
      var who = html("div", "who", null, row);
      var name = html("b", null, D.names[s], who);
      if (D.names.length > D.sides.length) { name.style.color = COLORS[D.side_of[s] % 4]; }
      else { name.style.color = COLORS[s % 4]; }
      if (f.turn === s) { html("span", "badge", "to play", name); }
      html("small", null, f.sizes[s] + (f.sizes[s] === 1 ? " tile" : " tiles"), who);
      var n = f.hands[s].length, W = Math.max(1, n * 1.15), up = seatVisible(s);
      var sv = svg("svg", {viewBox: "-0.05 -0.05 " + (W + 0.1) + " 2.1", width: (W + 0.1) * 21, height: 44}, row);
      for (var i = 0; i < n; i++) {
        var id = f.hands[s][i], p = D.pairs[id];
        var cls = up ? "" : "back";
        if (up && f.kind === "draw" && f.seat === s && f.tile === id) { cls = "new"; }
        drawTile(sv, i * 1.15, 0, 1, 2, up ? p[1] : null, up ? p[0] : null, cls, up ? tileName(id) : "hidden tile");
      }
    }
  }

  // ---------------------------------------------------------------- stepping
  function go(i) {
    i = Math.max(0, Math.min(TOTAL - 1, i | 0));
    if (i === cur) { return; }
    var old = cur;
    cur = i;
    var f = F[i];
    $("step").textContent = f.step + " / " + TOTAL;
    $("event").textContent = eventText(f);
    $("event-hand").textContent = "Hand " + f.hand;
    $("count").textContent = String(f.count);
    $("count").className = f.count && f.count % 5 === 0 ? "scores" : "";
    for (var s = 0; s < f.scores.length; s++) { $("score-" + s).textContent = String(f.scores[s]); }
    var status = [];
    if (f.turn !== null) { status.push(D.names[f.turn] + " to play"); }
    status.push("boneyard " + f.boneyard);
    $("status").textContent = status.join(" \u00b7 ");
    $("ends").textContent = describeEnds(f);
    drawBoard(f);
    drawHands(f);
    $("hand-select").value = String(f.hand);
    $("slider").value = String(f.step);
    $("first").disabled = $("prev").disabled = $("prev-hand").disabled = i === 0;
    $("last").disabled = $("next").disabled = i === TOTAL - 1;
    $("next-hand").disabled = f.hand >= D.hand_steps.length;
    if (old >= 0) { logItems[old].classList.remove("current"); }
    var li = logItems[i], log = $("log");
    li.classList.add("current");
    if (li.offsetTop < log.scrollTop || li.offsetTop + li.offsetHeight > log.scrollTop + log.clientHeight) {
      log.scrollTop = li.offsetTop - log.clientHeight / 2;
    }
    if (chartCursor) { chartCursor.setAttribute("x1", chartX(i)); chartCursor.setAttribute("x2", chartX(i)); }
    var hash = "#step=" + f.step + (view === "all" ? "" : "&view=" + view);
    if (location.hash !== hash) {
      try { history.replaceState(null, "", hash); } catch (err) { /* some file:// setups refuse: ignore */ }
    }
  }
  function handJump(delta) {
    var h = F[cur].hand + delta;
    if (delta < 0 && F[cur].step !== D.hand_steps[F[cur].hand - 1]) { h = F[cur].hand; }
    h = Math.max(1, Math.min(D.hand_steps.length, h));
    go(D.hand_steps[h - 1] - 1);
  }
  function fromHash() {
    var h = location.hash || "", m = /step=(\d+)/.exec(h), v = /view=(all|\d+)/.exec(h);
    if (v && (v[1] === "all" || parseInt(v[1], 10) < D.names.length) && v[1] !== view) {
      view = v[1]; $("view-select").value = view; fillLog(); cur = -1;
    }
    return m ? parseInt(m[1], 10) - 1 : (cur < 0 ? 0 : cur);
  }
  function buildScores() {
    var box = $("scores");
    for (var s = 0; s < D.sides.length; s++) {
      var span = html("span", "side", null, box);
      var sw = html("span", "swatch", null, span); sw.style.background = COLORS[s % 4];
      span.appendChild(document.createTextNode(D.sides[s] + " "));
      var b = html("b", null, "0", span); b.id = "score-" + s;
      if (s < D.sides.length - 1) { span.appendChild(document.createTextNode(" ")); }
    }
  }

  buildMeta(); buildSelects(); buildScores(); buildLog(); buildChart();
  $("first").addEventListener("click", function () { go(0); });
  $("prev").addEventListener("click", function () { go(cur - 1); });
  $("next").addEventListener("click", function () { go(cur + 1); });
  $("last").addEventListener("click", function () { go(TOTAL - 1); });
  $("prev-hand").addEventListener("click", function () { handJump(-1); });
  $("next-hand").addEventListener("click", function () { handJump(1); });
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) { return; }
    var moves = {ArrowLeft: function () { go(cur - 1); }, ArrowRight: function () { go(cur + 1); },
                 Home: function () { go(0); }, End: function () { go(TOTAL - 1); },
                 PageUp: function () { handJump(-1); }, PageDown: function () { handJump(1); }};
    if (moves[e.key]) { e.preventDefault(); moves[e.key](); }
  });
  window.addEventListener("hashchange", function () { go(fromHash()); });
  go(fromHash());
  document.body.setAttribute("data-ready", "1");
})();
