// The web game's page: asks the server (allfives_env/serve/app.py) for everything and draws its frames with
// the viewer's drawing code (draw.js). It decides no rule: the legal moves, the other seats' moves, the
// scores and the analysis all come from the engine on the server. The game's id lives in the URL
// (#game=ID), so a reload or a second tab finds its own game; the last one is remembered in localStorage.
(function () {
  "use strict";
  var A = AllFivesDraw, html = A.html, COLORS = A.COLORS;
  var LAST_GAME = "allfives-last-game", PACE = "allfives-pace", RETRY_MS = 600;
  var G = null;          // the game: id, seat, names, sides, side_of, pairs, agents, rules
  var frames = [];       // every frame received, as the person's seat sees it
  var shown = -1;        // the frame on screen
  var state = null;      // the latest answer: turn, legal moves, result
  var selected = null;   // the tile chosen, waiting for an end
  var logged = 0;        // frames written to the log
  var waiting = false;   // a request or the agents' moves are under way
  var CATALOG = null;
  function $(id) { return document.getElementById(id); }

  function api(method, path, body) {
    var opts = {method: method, headers: {}};
    if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
    return fetch(path, opts).then(function (r) {
      return r.json().catch(function () { return {error: "the server answered " + r.status}; }).then(function (d) {
        if (!r.ok) { var e = new Error(d.error || "the server answered " + r.status); e.status = r.status; throw e; }
        return d;
      });
    });
  }
  // An answer carries at most a page of frames (from since to next; the server bounds it): fetch the pages
  // after it until total, then hand on one answer holding every frame from since on.
  function whole(st) {
    if (st.next >= st.total) { return Promise.resolve(st); }
    var path = "/api/games/" + encodeURIComponent(st.id) + "?since=" + st.next;
    return api("GET", path).then(function (more) {
      more.frames = st.frames.concat(more.frames); more.since = st.since;
      return whole(more);
    }, function (err) {
      if (err.status !== 409) { throw err; }  // another request of this game is running: ask again shortly
      return new Promise(function (ok) { setTimeout(ok, RETRY_MS); }).then(function () { return whole(st); });
    });
  }
  function say(text, ok) { $("message").textContent = text || ""; $("message").className = ok ? "ok" : ""; }
  function pace() { return parseInt($("pace").value, 10) || 0; }
  function gamePath(tail) { return "/api/games/" + encodeURIComponent(G.id) + (tail || ""); }

  // ---------------------------------------------------------------- a game arrives
  function start(st) {
    G = {id: st.id, seat: st.seat, names: st.names, sides: st.sides, side_of: st.side_of, pairs: st.pairs,
         agents: st.agents, rules: st.rules, seed: st.seed};
    frames = st.frames.slice(); shown = -1; logged = 0; selected = null; state = st;
    A.clear($("log")); A.clear($("scores")); $("hint-box").hidden = true; $("game-over").hidden = true;
    try { history.replaceState(null, "", "#game=" + encodeURIComponent(st.id)); } catch (err) { location.hash = "game=" + st.id; }
    try { localStorage.setItem(LAST_GAME, st.id); } catch (err) { /* private mode: the URL still holds it */ }
    buildScores(); buildMeta(); fillAnalysts(st.rules.players);
    show(frames.length - 1);
    after(st);
  }
  function buildMeta() {
    var r = G.rules, who = G.agents.map(function (a, s) { return "P" + s + " " + a; }).join(", ");
    $("meta").textContent = [r.players + " players" + (r.partnership ? " (teams " + G.sides.join(" vs ") + ")" : ""),
      "double-" + ({6: "six", 9: "nine", 12: "twelve"}[r.max_pip]), "target " + r.target, who].concat(G.seed === null ? [] : ["seed " + G.seed]).join(" \u00b7 ");
    $("target").textContent = "(target " + r.target + ")";
    document.title = "All Fives: you are P" + G.seat;
  }
  function buildScores() {
    for (var s = 0; s < G.sides.length; s++) {
      var span = html("span", "side", null, $("scores"));
      html("span", "swatch", null, span).style.background = COLORS[s % 4];
      span.appendChild(document.createTextNode(G.sides[s] + " "));
      html("b", null, "0", span).id = "score-" + s;
    }
  }
  // new frames: shown one at a time at the chosen pace, then what comes next
  function receive(st) {
    if (st.id !== G.id) { return; }  // an answer about a game this tab has left
    state = st;
    var fresh = st.frames, i = 0;
    frames = frames.slice(0, st.since).concat(fresh);
    (function next() {
      if (G.id !== st.id) { return; }
      if (i < fresh.length) {
        show(st.since + i);
        i += 1;
        var wait = fresh[i - 1].seat === G.seat && fresh[i - 1].kind === "play" ? 0 : pace();
        if (i < fresh.length) { setTimeout(next, wait); return; }
      }
      after(st);
    })();
  }
  // what the game needs now: the person's move, the next agent's move, or nothing (it is over)
  function after(st) {
    waiting = false;
    drawMoves();
    if (st.over) { gameOver(st); return; }
    if (st.your_turn) { say("Your turn: choose a tile, then an end.", true); return; }
    waiting = true;
    say(G.names[st.turn] + " (" + G.agents[st.turn] + ") is thinking\u2026", true);
    var id = G.id;
    setTimeout(function () { if (G.id === id) { agentMove(); } }, pace());  // unless a new game came meanwhile
  }
  function agentMove() {
    var id = G.id;
    api("POST", gamePath("/ai"), {since: frames.length}).then(whole).then(function (st) { if (G.id === id) { receive(st); } },
      function (err) { if (G.id === id) { retry(err, agentMove); } });
  }
  function retry(err, again) {
    if (err.status === 409 && /still running/.test(err.message)) { setTimeout(again, RETRY_MS); return; }
    waiting = false;
    say(err.message + " (reload the page to try again)");
  }

  // ---------------------------------------------------------------- one frame on screen
  function show(i) {
    if (i < 0 || i >= frames.length) { return; }
    shown = i;
    var f = frames[i];
    $("event").textContent = f.text;
    A.frameHeader(f, G.names);
    drawTable(f);
    drawHands(f);
    while (logged <= i) { writeLog(frames[logged]); logged += 1; }
  }
  function writeLog(f) {
    var li = html("li", f.kind === "hand_start" ? "hs" : f.kind === "settlement" || f.kind === "game_over" ? "end" :
                  f.kind === "play" && /scores \d/.test(f.text) ? "sc" : null, null, $("log"));
    html("span", "n", f.step, li);
    html("span", "t", f.text, li);
    li.setAttribute("data-step", String(f.step));
    $("log").scrollTop = $("log").scrollHeight;
  }
  function myTurnNow() { return state && state.your_turn && !waiting && shown === frames.length - 1; }
  function drawTable(f) {
    var drawn = A.board($("board"), f.tiles, f.ends, {
      pairs: G.pairs, spinner: f.spinner, last: f.kind === "play" ? f.tile : -1,
      note: f.placed ? "" : "Hand " + f.hand + ": the table is empty"
    });
    Object.keys(drawn.ends).forEach(function (slot) {
      var g = drawn.ends[slot], move = movesOf(selected).filter(function (m) { return m.end === slot; })[0];
      if (move && myTurnNow()) { g.classList.add("target"); }
      g.addEventListener("click", function () { chooseEnd(slot); });
    });
  }
  function drawHands(f) {
    var box = $("hands");
    A.clear(box);
    for (var s = 0; s < f.sizes.length; s++) {
      var mine = s === G.seat, row = html("div", "hand" + (f.turn === s ? " turn" : "") + (mine ? " mine" : ""), null, box);
      row.id = "hand-" + s;
      var who = html("div", "who", null, row), name = html("b", null, G.names[s] + (mine ? " (you)" : ""), who);
      name.style.color = COLORS[(G.names.length > G.sides.length ? G.side_of[s] : s) % 4];
      if (f.turn === s) { html("span", mine ? "badge" : "thinking", mine ? "to play" : "next", name); }
      html("small", null, (mine ? "" : G.agents[s] + ", ") + f.sizes[s] + (f.sizes[s] === 1 ? " tile" : " tiles"), who);
      var sv = A.hand(row, f.hands[s], f.sizes[s], G.pairs, mine ? tileClass : null);
      if (mine) { sv.addEventListener("click", clickHand); }
    }
  }
  function tileClass(id) {
    if (!myTurnNow()) { return ""; }
    return id === selected ? "playable selected" : movesOf(id).length ? "playable" : "unplayable";
  }

  // ---------------------------------------------------------------- the person's move
  function movesOf(tile) {
    if (tile === null || !state) { return []; }
    return state.legal.filter(function (m) { return m.tile === tile; });
  }
  function tileText(id) { return A.tileName(G.pairs, id); }
  function clickHand(e) {
    var g = e.target.closest ? e.target.closest("g.tile") : null;
    if (!g || !g.hasAttribute("data-tile")) { return; }
    var id = parseInt(g.getAttribute("data-tile"), 10);
    if (!myTurnNow()) { say("Wait for your turn."); return; }
    var moves = movesOf(id);
    if (!moves.length) { say(tileText(id) + " cannot be played now: it matches no open end."); return; }
    if (moves.length === 1 && moves[0].end === null) { play(moves[0]); return; }  // a lead: the table is empty
    selected = id;
    say(tileText(id) + ": now click a blue end (" + moves.map(function (m) { return m.end; }).join(", ") + ").", true);
    show(shown);
  }
  function chooseEnd(slot) {
    if (!myTurnNow()) { return; }
    if (selected === null) { say("Choose a tile from your hand first."); return; }
    var move = movesOf(selected).filter(function (m) { return m.end === slot; })[0];
    if (!move) {
      say(tileText(selected) + " cannot go on the " + slot + " end; it can go on " +
          movesOf(selected).map(function (m) { return m.end; }).join(", ") + ".");
      return;
    }
    play(move);
  }
  function play(move) {
    if (!myTurnNow()) { return; }
    waiting = true; selected = null; $("hint-box").hidden = true; drawMoves();
    api("POST", gamePath("/move"), {action: move.action, since: frames.length}).then(whole).then(receive, function (err) {
      waiting = false; say(err.message); show(shown); drawMoves();
    });
  }
  function drawMoves() {
    var box = $("moves"), mine = myTurnNow();
    A.clear(box);
    $("hint").disabled = !mine;
    var draw = mine ? state.legal.filter(function (m) { return m.tile === null; })[0] : null;
    $("draw-button").hidden = !draw;
    if (!mine) { return; }
    html("span", "label", "Your moves:", box);
    state.legal.forEach(function (m) {
      var b = html("button", "move", m.name + (m.points ? " (+" + m.points + ")" : ""), box);
      b.type = "button"; b.setAttribute("data-action", String(m.action));
      b.title = m.tile === null ? "draw a tile" : "count " + m.count + (m.points ? ", scores " + m.points : "");
      b.addEventListener("click", function () { play(m); });
    });
    show(shown);
  }
  $("draw-button").addEventListener("click", function () {
    var draw = state && state.legal.filter(function (m) { return m.tile === null; })[0];
    if (draw) { play(draw); }
  });

  // ---------------------------------------------------------------- analysis
  $("hint").addEventListener("click", function () {
    if (!myTurnNow()) { return; }
    var agent = $("analyst").value, id = G.id;
    $("hint").disabled = true;
    say(agent + " is analysing\u2026", true);
    api("POST", gamePath("/hint"), {agent: agent}).then(function (h) {
      if (G.id !== id) { return; }
      var body = $("hint-table").tBodies[0];
      A.clear(body);
      $("hint-title").textContent = h.agent + " would play " + h.best_name +
        " (values: its mean rollout points plus its prior; \u2014 = dropped early as clearly worse)";
      h.moves.forEach(function (m) {
        var tr = html("tr", m.action === h.best ? "best" : null, null, body);
        html("td", null, m.name, tr);
        html("td", null, m.value === null ? "\u2014" : m.value.toFixed(2), tr);
        html("td", null, m.action === h.best ? "\u2605 would play" : "", tr);
      });
      $("hint-box").hidden = false;
      say("", true);
      $("hint").disabled = !myTurnNow();
    }, function (err) { say(err.message); $("hint").disabled = !myTurnNow(); });
  });

  // ---------------------------------------------------------------- the end
  function gameOver(st) {
    if (G.seed === null && st.seed !== null) { G.seed = st.seed; buildMeta(); }  // the seed is told at the end
    $("result").textContent = "Game over: " + st.result + " \u00b7 " +
      G.sides.map(function (side, s) { return side + " " + st.scores[s]; }).join(", ");
    $("open-viewer").href = gamePath("/viewer");
    $("download-replay").href = gamePath("/replay.json");
    $("download-replay").setAttribute("download", "allfives-" + G.id + ".json");
    $("game-over").hidden = false;
    say("Game over: " + st.result + ".", true);
  }

  // ---------------------------------------------------------------- the new-game dialog
  function option(select, value, text, chosen) {
    var o = html("option", null, text, select); o.value = String(value); if (chosen) { o.selected = true; }
  }
  function buildDialog() {
    [2, 3, 4].forEach(function (n) { option($("players"), n, String(n), n === 2); });
    CATALOG.rules.forEach(function (r) {
      var label = html("label", null, r.name.replace(/_/g, " "), $("rules-options")), input;
      label.title = r.doc + (r.none_means ? " (default: " + r.none_means + ")" : "");
      if (r.kind === "count") {
        input = html("input", null, null, label); input.type = "number"; input.min = String(r.low);
        input.placeholder = r.default === null ? "default" : String(r.default);
      } else {
        input = html("select", null, null, label);
        (r.kind === "switch" ? [true, false] : r.choices).forEach(function (c) { option(input, JSON.stringify(c), String(c), c === r.default); });
      }
      input.id = "rule-" + r.name; input.setAttribute("data-option", r.name);
    });
    $("players").addEventListener("change", seatsChanged);
    $("seat").addEventListener("change", function () { opponentsChanged(); });
    seatsChanged();
    fillAnalysts(2);
  }
  // the search agents that can analyse a game of n players (pimc-net's policy plays 2)
  function fillAnalysts(n) {
    var keep = $("analyst").value || CATALOG.default_analyst;
    A.clear($("analyst"));
    CATALOG.agents.forEach(function (a) {
      if (a.analyst && a.players.indexOf(n) >= 0) { option($("analyst"), a.name, a.name, a.name === keep); }
    });
  }
  function seatsChanged() {
    var n = parseInt($("players").value, 10);
    A.clear($("seat"));
    for (var s = 0; s < n; s++) { option($("seat"), s, "P" + s, s === 0); }
    $("partnership").disabled = n !== 4;
    opponentsChanged();
  }
  function opponentsChanged() {
    var n = parseInt($("players").value, 10), me = parseInt($("seat").value, 10), box = $("opponents");
    A.clear(box);
    var usable = CATALOG.agents.filter(function (a) { return a.players.indexOf(n) >= 0; });
    var best = usable.some(function (a) { return a.name === "greedy"; }) ? "greedy" : usable[0].name;
    for (var s = 0; s < n; s++) {
      if (s === me) { continue; }
      var label = html("label", null, "P" + s + " ", box), sel = html("select", null, null, label);
      sel.id = "opponent-" + s;
      usable.forEach(function (a) { option(sel, a.name, a.name, a.name === best); sel.lastChild.title = a.description; });
    }
  }
  function newGameBody() {
    var n = parseInt($("players").value, 10), me = parseInt($("seat").value, 10), rules = {}, opponents = [];
    for (var s = 0; s < n; s++) { if (s !== me) { opponents.push($("opponent-" + s).value); } }
    CATALOG.rules.forEach(function (r) {
      var input = $("rule-" + r.name), value = input.value;
      if (r.kind === "count") { if (value !== "") { rules[r.name] = parseInt(value, 10); } }
      else if (JSON.parse(value) !== r.default) { rules[r.name] = JSON.parse(value); }
    });
    var body = {players: n, seat: me, opponents: opponents, rules: rules};
    if (n === 4 && $("partnership").value !== "auto") { body.partnership = $("partnership").value === "true"; }
    if ($("seed").value !== "") { body.seed = parseInt($("seed").value, 10); }
    return body;
  }
  $("new-game-form").addEventListener("submit", function (e) {
    e.preventDefault();
    $("dialog-error").textContent = "";
    $("start").disabled = true;
    api("POST", "/api/games", newGameBody()).then(whole).then(function (st) {
      $("start").disabled = false; $("new-game").close(); start(st);
    }, function (err) { $("start").disabled = false; $("dialog-error").textContent = err.message; });
  });
  $("cancel").addEventListener("click", function () { $("new-game").close(); });
  $("new-game-button").addEventListener("click", openDialog);
  $("resume").addEventListener("click", function () { $("new-game").close(); load(localStorage.getItem(LAST_GAME)); });
  function openDialog() {
    var last = null;
    try { last = localStorage.getItem(LAST_GAME); } catch (err) { last = null; }
    $("resume").hidden = !last || (G !== null && G.id === last);
    if (!$("new-game").open) { $("new-game").showModal(); }
  }
  function load(id) {
    api("GET", "/api/games/" + encodeURIComponent(id) + "?since=0").then(whole).then(start, function (err) {
      if (err.status === 409) { setTimeout(function () { load(id); }, RETRY_MS); return; }
      say(err.message); openDialog();
    });
  }

  // the pace is the person's taste: kept across reloads and games
  try { if (localStorage.getItem(PACE)) { $("pace").value = localStorage.getItem(PACE); } } catch (err) { /* none kept */ }
  $("pace").addEventListener("change", function () {
    try { localStorage.setItem(PACE, $("pace").value); } catch (err) { /* not kept */ }
  });

  api("GET", "/api/options").then(function (c) {
    CATALOG = c;
    buildDialog();
    var m = /game=([A-Za-z0-9_-]+)/.exec(location.hash);
    if (m) { load(m[1]); } else { openDialog(); }
    document.body.setAttribute("data-ready", "1");
  }, function (err) { say("cannot reach the server: " + err.message); });
})();
