(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("replay-data").textContent);
  var F = D.frames, TOTAL = F.length;
  var A = AllFivesDraw, COLORS = A.COLORS, svg = A.svg, html = A.html;  // draw.js, shared with the web game
  var cur = -1, view = "all";
  function $(id) { return document.getElementById(id); }
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
    var layout = f.layout >= 0 ? D.layouts[f.layout] : null;
    A.board($("board"), layout ? layout.tiles.slice(0, f.placed) : [], f.ends, {
      pairs: D.pairs, spinner: layout ? layout.spinner : -1, last: f.kind === "play" ? f.tile : -1,
      note: f.kind === "hand_start" || f.kind === "draw" ? "Hand " + f.hand + ": the table is empty" : ""
    });
  }

  // ---------------------------------------------------------------- hands
  function drawHands(f) {
    var box = $("hands");
    A.clear(box);
    for (var s = 0; s < f.hands.length; s++) {
      var row = html("div", "hand" + (f.turn === s ? " turn" : ""), null, box);
      row.id = "hand-" + s;
      var who = html("div", "who", null, row);
      var name = html("b", null, D.names[s], who);
      if (D.names.length > D.sides.length) { name.style.color = COLORS[D.side_of[s] % 4]; }
      else { name.style.color = COLORS[s % 4]; }
      if (f.turn === s) { html("span", "badge", "to play", name); }
      html("small", null, f.sizes[s] + (f.sizes[s] === 1 ? " tile" : " tiles"), who);
      var drawn = f.kind === "draw" ? f.tile : -1, mine = f.seat === s;
      A.hand(row, seatVisible(s) ? f.hands[s] : null, f.hands[s].length, D.pairs,
             function (id) { return mine && id === drawn ? "new" : ""; });
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
    A.frameHeader(f, D.names);
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
