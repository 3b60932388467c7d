// The drawing shared by the replay viewer (viewer.js) and the web game (serve/assets/play.js): tiles, the
// table with its open ends, a row of hand tiles, the open ends in words. Everything it draws comes from the
// server's frames (allfives_env/replay_frames.py), computed by the engine: no rule is decided here.
var AllFivesDraw = (function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var COLORS = ["#d9480f", "#1971c2", "#2f9e44", "#9c36b5"];
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
  // one tile: p1 on the left (horizontal) or top half; p1 === null draws it face down
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
  function tileName(pairs, id) { var p = pairs[id]; return p[1] + "-" + p[0]; }

  // the table: tiles [tile, x, y, w, h, p1, p2], ends [slot, value, counted or null, x, y]; opts: pairs,
  // spinner (tile id or -1), last (tile id to mark or -1), note (text on an empty table). Each end's group
  // carries data-end="W" (its slot name), so a page can make it clickable. Returns {ends: {slot: group}}.
  function board(el, tiles, ends, opts) {
    clear(el);
    var minX = -12, maxX = 12, minY = -6.5, maxY = 6.5, i, found = {};
    for (i = 0; i < tiles.length; i++) {
      var t = tiles[i];
      minX = Math.min(minX, t[1] - 1); minY = Math.min(minY, t[2] - 1);
      maxX = Math.max(maxX, t[1] + t[3] + 1); maxY = Math.max(maxY, t[2] + t[4] + 1);
    }
    for (i = 0; i < ends.length; i++) {
      minX = Math.min(minX, ends[i][3] - 1.2); maxX = Math.max(maxX, ends[i][3] + 1.2);
      minY = Math.min(minY, ends[i][4] - 1.2); maxY = Math.max(maxY, ends[i][4] + 1.2);
    }
    el.setAttribute("viewBox", [minX, minY, maxX - minX, maxY - minY].join(" "));
    el.setAttribute("preserveAspectRatio", "xMidYMid meet");
    var g = svg("g", {}, el);
    for (i = 0; i < tiles.length; i++) {
      var u = tiles[i], cls = [];
      if (u[0] === opts.spinner) { cls.push("spinner"); }
      if (u[0] === opts.last) { cls.push("last"); }
      drawTile(g, u[1], u[2], u[3], u[4], u[5], u[6], cls.join(" "),
               tileName(opts.pairs, u[0]) + (u[0] === opts.spinner ? " (spinner)" : ""));
    }
    for (i = 0; i < ends.length; i++) {
      var e = ends[i], counted = e[2] !== null;
      var eg = svg("g", {"class": "end " + (counted ? "counted" : "uncounted"), "data-end": e[0]}, g);
      svg("title", {}, eg).textContent = e[0] + " end: " + e[1] + (counted ? " (counts " + e[2] + ")" : " (open, not counted yet)");
      svg("circle", {cx: e[3], cy: e[4], r: 0.42}, eg);
      svg("text", {x: e[3], y: e[4] + 0.02}, eg).textContent = counted ? String(e[2]) : String(e[1]);
      found[e[0]] = eg;
    }
    if (!tiles.length && opts.note) { svg("text", {x: 0, y: 0, "class": "board-note"}, g).textContent = opts.note; }
    return {ends: found};
  }

  // a frame's open ends and count in words
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

  // a row of upright hand tiles in a new <svg> under parent: ids face up, or `hidden` backs when ids is
  // null; cls(id) adds classes; each tile's group carries data-tile (its id)
  function hand(parent, ids, hidden, pairs, cls) {
    var n = ids === null ? hidden : ids.length, W = Math.max(1, n * 1.15);
    var sv = svg("svg", {viewBox: "-0.05 -0.05 " + (W + 0.1) + " 2.1", width: (W + 0.1) * 21, height: 44}, parent);
    for (var i = 0; i < n; i++) {
      if (ids === null) { drawTile(sv, i * 1.15, 0, 1, 2, null, null, "back", "hidden tile"); continue; }
      var id = ids[i], p = pairs[id];
      var g = drawTile(sv, i * 1.15, 0, 1, 2, p[1], p[0], cls ? cls(id) : "", tileName(pairs, id));
      g.setAttribute("data-tile", String(id));
    }
    return sv;
  }

  // the lines above and beside the table for frame f: its hand, the count (marked when it scores), each
  // side's score, whose turn it is, the boneyard and the open ends; names: the seats' names
  function frameHeader(f, names) {
    var $ = function (id) { return document.getElementById(id); };
    $("event-hand").textContent = "Hand " + f.hand;
    $("count").textContent = String(f.count);
    $("count").className = f.count && f.count % 5 === 0 ? "scores" : "";
    for (var s = 0; s < f.scores.length; s++) { $("score-" + s).textContent = String(f.scores[s]); }
    var status = [];
    if (f.turn !== null) { status.push(names[f.turn] + " to play"); }
    status.push("boneyard " + f.boneyard);
    $("status").textContent = status.join(" \u00b7 ");
    $("ends").textContent = describeEnds(f);
  }

  return {SVGNS: SVGNS, COLORS: COLORS, svg: svg, html: html, clear: clear, drawTile: drawTile, tileName: tileName,
          board: board, describeEnds: describeEnds, hand: hand, frameHeader: frameHeader};
})();
