/* perfmark flame graph: timeline of marker ranges per thread above a flame
 * graph of the samples.  Data: the JSON in <script id="pm-data"> written by
 * `perfmark flamegraph` (see cli/flamegraph.c for its fields).  No network,
 * no libraries: plain DOM and SVG. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('pm-data').textContent);
  var SVGNS = 'http://www.w3.org/2000/svg';
  var ROW = 17, LANE_ROW = 14;
  var nNodes = D.nodes.length / 2;
  var parent = new Int32Array(nNodes), frame = new Int32Array(nNodes);
  for (var i = 0; i < nNodes; i++) { parent[i] = D.nodes[2 * i]; frame[i] = D.nodes[2 * i + 1]; }
  var nSamples = D.samples.length / 3;
  var nRanges = D.ranges.length / 6;
  var nStates = D.states ? D.states.length / 5 : 0;
  var STATE_ROW = 7;
  var state = { sel: null, zoom: 0, search: '' };

  function el(tag, attrs, parentEl) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parentEl) parentEl.appendChild(e);
    return e;
  }
  function h(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmtUs(us) {
    if (us < 1000) return us.toFixed(1) + ' \u00b5s';
    if (us < 1e6) return (us / 1000).toFixed(2) + ' ms';
    return (us / 1e6).toFixed(3) + ' s';
  }
  /* one clearly different colour per range name, in order of appearance */
  var PALETTE = [[66, 133, 244], [219, 68, 55], [15, 157, 88], [171, 71, 188], [0, 172, 193],
                 [255, 112, 67], [158, 157, 36], [92, 107, 192], [240, 98, 146], [0, 137, 123]];
  var rangeRank = {}, nRank = 0;
  function rangeColor(name, open) {
    if (!(name in rangeRank)) rangeRank[name] = nRank++;
    var c = PALETTE[rangeRank[name] % PALETTE.length], a = open ? 0.45 : 0.9;
    return 'rgba(' + c[0] + ',' + c[1] + ',' + c[2] + ',' + a + ')';
  }
  function pct(a, b) { return b ? (100 * a / b).toFixed(2) + '%' : '0%'; }
  function nameOf(n) { return D.names[D.frames[2 * frame[n]]]; }
  function kindOf(n) { return D.frames[2 * frame[n] + 1]; }
  function color(n) {
    var name = nameOf(n), kind = kindOf(n), hsh = 0;
    for (var i = 0; i < name.length; i++) hsh = (hsh * 31 + name.charCodeAt(i)) | 0;
    var v = (hsh >>> 0) % 1000 / 1000;
    if (kind === 0) return 'rgb(180,180,190)';                   /* command */
    if (kind === 1) return 'rgb(' + (200 + v * 55 | 0) + ',' + (110 + v * 60 | 0) + ',40)'; /* kernel */
    return 'rgb(' + (205 + v * 50 | 0) + ',' + (90 + v * 120 | 0) + ',' + (40 + v * 40 | 0) + ')';
  }

  /* ---- flame graph data: weights per node for the selected samples ---- */
  function weigh() {
    var w = new Float64Array(nNodes), s = state.sel;
    for (var i = 0; i < nSamples; i++) {
      var t = D.samples[3 * i], th = D.samples[3 * i + 1];
      if (s && (th !== s.thread || t < s.start || t > s.end)) continue;
      w[D.samples[3 * i + 2]] += D.weights ? D.weights[i] : 1;
    }
    var self = w.slice();
    for (var n = nNodes - 1; n > 0; n--) w[parent[n]] += w[n];   /* parents come first */
    return { total: w, self: self };
  }
  function children() {
    var kids = [];
    for (var n = 0; n < nNodes; n++) kids.push([]);
    for (var m = 1; m < nNodes; m++) kids[parent[m]].push(m);
    return kids;
  }
  var kids = children();

  /* ---- the page ---- */
  var app = document.getElementById('app');
  var header = h('header');
  header.appendChild(h('h1', {}, 'perfmark flame graph'));
  var info = h('span', { 'class': 'info' }, D.title);
  header.appendChild(info);
  var search = h('input', { type: 'search', id: 'search', placeholder: 'search (regex)' });
  header.appendChild(search);
  var reset = h('button', { id: 'reset' }, 'Reset zoom');
  header.appendChild(reset);
  app.appendChild(header);

  var tl = h('section', { id: 'timeline' });
  app.appendChild(tl);
  var fl = h('section', { id: 'flame' });
  var bar = h('div', { 'class': 'bar' });
  var what = h('span', { 'class': 'what', id: 'what' });
  var allBtn = h('button', { id: 'all' }, 'All samples');
  var match = h('span', { 'class': 'match', id: 'match' });
  bar.appendChild(what); bar.appendChild(allBtn); bar.appendChild(match);
  bar.appendChild(h('span', { 'class': 'help' },
    'click a frame to zoom, a range bar to see its samples; hover for counts'));
  fl.appendChild(bar);
  app.appendChild(fl);
  var tip = h('div', { id: 'tip' });
  document.body.appendChild(tip);

  function showTip(ev, text) {
    tip.textContent = text;
    tip.style.display = 'block';
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 320) + 'px';
    tip.style.top = (ev.clientY + 14) + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }

  /* a weight as the page shows it: samples, or time off the CPU (-e offcpu-time) */
  function fmtW(v) { return D.weights ? fmtUs(v) + ' off CPU' : v + ' samples'; }

  /* ---- timeline: one lane per thread, ranges as bars by nesting depth ---- */
  function drawTimeline() {
    tl.textContent = '';
    var lanes = [], laneOf = {}, maxDepth = {}, hasStates = {};
    for (var r = 0; r < nRanges; r++) {
      var th = D.ranges[6 * r], d = D.ranges[6 * r + 4];
      if (!(th in laneOf)) { laneOf[th] = lanes.length; lanes.push(th); maxDepth[th] = 0; }
      if (d > maxDepth[th]) maxDepth[th] = d;
    }
    for (var q = 0; q < nStates; q++) hasStates[D.states[5 * q]] = true;
    if (!lanes.length) {
      tl.appendChild(h('div', { 'class': 'help' }, 'no marker ranges in this recording'));
      return;
    }
    var width = tl.clientWidth - 20 || 1200, labelW = 150, plotW = width - labelW;
    var y = 18, laneY = {};
    for (var l = 0; l < lanes.length; l++) {
      laneY[lanes[l]] = y;
      y += (maxDepth[lanes[l]] + 1) * LANE_ROW + (hasStates[lanes[l]] ? STATE_ROW + 2 : 0) + 10;
    }
    var svg = el('svg', { width: width, height: y, viewBox: '0 0 ' + width + ' ' + y });
    var span = Math.max(D.end - D.start, 1);
    function x(t) { return labelW + (t - D.start) / span * plotW; }
    for (var k = 0; k <= 10; k++) {
      var tx = labelW + k * plotW / 10;
      el('rect', { x: tx, y: 12, width: 0.5, height: y - 12, 'class': 'tick' }, svg);
      el('text', { x: tx + 2, y: 10, 'class': 'lane-label' }, svg).textContent = fmtUs(k * span / 10);
    }
    for (l = 0; l < lanes.length; l++) {
      var t = D.threads[lanes[l]];
      el('text', { x: 4, y: laneY[lanes[l]] + 11, 'class': 'lane-label' }, svg).textContent =
        t.comm + ' ' + t.tid;
    }
    /* under a thread's ranges, its states: running where it was seen, blocked, runnable */
    function stateBar(th, s, e, cls, text) {
      var sy = laneY[th] + (maxDepth[th] + 1) * LANE_ROW;
      var rect = el('rect', { x: x(s), y: sy, width: Math.max(x(e) - x(s), 0.5), height: STATE_ROW,
                              'class': 'state ' + cls, 'data-state': cls }, svg);
      el('title', {}, rect).textContent = text + ': ' + fmtUs(e - s);
    }
    for (l = 0; l < lanes.length; l++)
      if (hasStates[lanes[l]])
        stateBar(lanes[l], D.threads[lanes[l]].first, D.threads[lanes[l]].last, 'running', 'running (or not seen)');
    for (q = 0; q < nStates; q++) {
      var qt = D.states[5 * q];
      if (!(qt in laneOf)) continue;
      var letter = String.fromCharCode(D.states[5 * q + 4]);
      if (D.states[5 * q + 2] > D.states[5 * q + 1])
        stateBar(qt, D.states[5 * q + 1], D.states[5 * q + 2], 'blocked', 'blocked (' + letter + ')');
      if (D.states[5 * q + 3] > D.states[5 * q + 2])
        stateBar(qt, D.states[5 * q + 2], D.states[5 * q + 3], 'runnable', 'runnable, waiting for a CPU');
    }
    for (r = 0; r < nRanges; r++) {
      var rth = D.ranges[6 * r], nm = D.names[D.ranges[6 * r + 1]];
      var s = D.ranges[6 * r + 2], e = D.ranges[6 * r + 3], dep = D.ranges[6 * r + 4];
      var open = D.ranges[6 * r + 5];
      var rect = el('rect', {
        x: x(s), y: laneY[rth] + dep * LANE_ROW, width: Math.max(x(e) - x(s), 1), height: LANE_ROW - 2,
        fill: rangeColor(D.ranges[6 * r + 1], open),
        'class': 'range' + (state.sel && state.sel.range === r ? ' sel' : ''), 'data-range': r
      }, svg);
      el('title', {}, rect).textContent = nm + (open ? ' (open)' : '') + ': ' + fmtUs(e - s);
      if (x(e) - x(s) > nm.length * 6.5 + 6)
        el('text', { x: x(s) + 3, y: laneY[rth] + dep * LANE_ROW + LANE_ROW - 4, 'class': 'range-label' },
          svg).textContent = nm;
      (function (r, rect) {
        rect.addEventListener('click', function () { selectRange(r); });
        rect.addEventListener('mousemove', function (ev) {
          showTip(ev, rangeText(r));
        });
        rect.addEventListener('mouseleave', hideTip);
      })(r, rect);
    }
    tl.appendChild(svg);
  }
  function rangeText(r) {
    var th = D.threads[D.ranges[6 * r]], s = D.ranges[6 * r + 2], e = D.ranges[6 * r + 3];
    var n = 0;
    for (var i = 0; i < nSamples; i++) {
      var t = D.samples[3 * i];
      if (D.samples[3 * i + 1] === D.ranges[6 * r] && t >= s && t <= e) n++;
    }
    return 'range ' + D.names[D.ranges[6 * r + 1]] + (D.ranges[6 * r + 5] ? ' (open)' : '') +
      ' on ' + th.comm + ' ' + th.tid + ': ' + fmtUs(e - s) + ', ' + n + ' samples' +
      (D.weights ? ' (off CPU)' : '');
  }
  function selectRange(r) {
    state.sel = { thread: D.ranges[6 * r], start: D.ranges[6 * r + 2], end: D.ranges[6 * r + 3], range: r };
    state.zoom = 0;
    drawTimeline();
    drawFlame();
  }

  /* ---- flame graph: root at the bottom, x by total samples ---- */
  var W, CONTEXT = 3;
  /* rows of the flame graph that fit below its bar in the window (at least 12) */
  function fitRows() {
    var y = fl.getBoundingClientRect().top + window.scrollY + bar.offsetHeight + 12;
    return Math.max(12, Math.floor((window.innerHeight - y - 8) / ROW));
  }
  function drawFlame() {
    var old = document.getElementById('flame-svg');
    if (old) old.remove();
    W = weigh();
    var total = W.total[0];
    what.textContent = state.sel ? rangeText(state.sel.range) :
      (D.range ? 'samples inside range ' + D.range : 'all samples') + ': ' + fmtW(total) + ' of ' + D.event;
    var width = fl.clientWidth - 20 || 1200;
    var zoom = state.zoom, zt = W.total[zoom] || 1;
    var anc = [];
    for (var a = zoom; a > 0; a = parent[a]) anc.unshift(a);
    /* depth of the deepest node drawn */
    var rows = [];
    function layout(n, x0, depth) {
      var w = W.total[n] / zt * width;
      if (w < 0.3) return;
      rows.push([n, x0, w, depth]);
      var x = x0;
      for (var c = 0; c < kids[n].length; c++) {
        var k = kids[n][c];
        if (!W.total[k]) continue;
        layout(k, x, depth + 1);
        x += W.total[k] / zt * width;
      }
    }
    for (var d = 0; d < anc.length - 1; d++) rows.push([anc[d], 0, width, d]);   /* ancestors: full width */
    if (zoom) layout(zoom, 0, anc.length - 1);
    else for (var c = 0, x = 0; c < kids[0].length; c++) {
      var k = kids[0][c];
      if (!W.total[k]) continue;
      layout(k, x, 0);
      x += W.total[k] / zt * width;
    }
    var maxD = 0, hasKid = {};
    for (var i = 0; i < rows.length; i++) {
      if (rows[i][3] > maxD) maxD = rows[i][3];
      if (rows[i][3] > 0) hasKid[parent[rows[i][0]]] = 1;
    }
    /* the rows that fit the window (the root's row included): deeper frames
     * are reached by zooming; zoomed, z's subtree if it fits, else z and
     * CONTEXT ancestors at the bottom, a bar below them to go back down */
    var fit = fitRows(), dz = anc.length - 1;
    var base = zoom ? Math.max(0, Math.min(dz - CONTEXT, maxD - fit + 1)) : 0;
    if (base > 0) {     /* the bar below takes a row */
      fit--;
      base = Math.max(0, Math.min(dz - CONTEXT, maxD - fit + 1));
    }
    var last = Math.min(maxD, base + fit - 1), below = base > 0 ? ROW : 0;
    var height = (last - base + 1) * ROW + 4 + below;
    var svg = el('svg', { id: 'flame-svg', width: width, height: height, viewBox: '0 0 ' + width + ' ' + height });
    if (below) {
      var bg = el('g', { 'class': 'frame below' }, svg);
      el('rect', { x: 0, y: height - ROW, width: width, height: ROW - 1, fill: 'rgb(210,210,220)' }, bg);
      el('text', { x: 3, y: height - 5 }, bg).textContent = '\u25bc ' + base + ' frames below, from ' +
        nameOf(anc[0]) + ': click to reset the zoom';
      bg.addEventListener('click', function () { state.zoom = 0; drawFlame(); });
    }
    var re = null;
    if (state.search) { try { re = new RegExp(state.search); } catch (e) { re = null; } }
    var matched = 0, counted = {};
    for (i = 0; i < rows.length; i++) {
      if (rows[i][3] < base || rows[i][3] > last) continue;
      var n = rows[i][0], rx = rows[i][1], rw = rows[i][2];
      var y = height - below - (rows[i][3] - base + 1) * ROW;
      var name = nameOf(n), more = rows[i][3] === last && hasKid[n];
      var g = el('g', { 'class': more ? 'frame more' : 'frame', 'data-node': n }, svg);
      var hit = re && re.test(name);
      if (hit) {
        g.setAttribute('class', 'frame hit');
        var covered = false;
        for (var up = parent[n]; up > 0; up = parent[up]) if (counted[up]) covered = true;
        if (!covered) { matched += W.total[n]; counted[n] = 1; }
      }
      if (zoom && rows[i][3] < anc.length - 1) g.setAttribute('class', 'frame dim');
      el('rect', { x: rx, y: y, width: Math.max(rw - 0.5, 0.1), height: ROW - 1, fill: color(n) }, g);
      el('title', {}, g).textContent = name + ': ' + fmtW(W.total[n]) +
        (more ? ' (deeper frames: click to see them)' : '');
      if (rw > 30) {
        var chars = Math.floor((rw - 6) / 6.5);
        el('text', { x: rx + 3, y: y + ROW - 5 }, g).textContent =
          name.length <= chars ? name : name.slice(0, Math.max(chars - 2, 0)) + '..';
      }
      (function (n) {
        g.addEventListener('click', function () { state.zoom = n; drawFlame(); });
        g.addEventListener('mousemove', function (ev) {
          showTip(ev, nameOf(n) + '\n' + fmtW(W.total[n]) + ' (' + pct(W.total[n], total) +
            ' of the view), ' + fmtW(W.self[n]) + ' self (' + pct(W.self[n], total) + ')');
        });
        g.addEventListener('mouseleave', hideTip);
      })(n);
    }
    match.textContent = re ? 'matched: ' + pct(matched, total) : '';
    fl.appendChild(svg);
  }

  search.addEventListener('input', function () { state.search = search.value; drawFlame(); });
  reset.addEventListener('click', function () { state.zoom = 0; drawFlame(); });
  allBtn.addEventListener('click', function () { state.sel = null; state.zoom = 0; drawTimeline(); drawFlame(); });
  window.addEventListener('resize', function () { drawTimeline(); drawFlame(); });
  /* #range=N selects range N, #search=RE searches, #zoom=NAME zooms on the
   * heaviest frame of that name: links can point at a view */
  var hm = /range=(\d+)/.exec(location.hash), hs = /search=([^&]*)/.exec(location.hash);
  var hz = /zoom=([^&]*)/.exec(location.hash);
  if (hs) { state.search = search.value = decodeURIComponent(hs[1]); }
  if (hm && +hm[1] < nRanges) {
    state.sel = { thread: D.ranges[6 * hm[1]], start: D.ranges[6 * hm[1] + 2],
                  end: D.ranges[6 * hm[1] + 3], range: +hm[1] };
  }
  if (hz) {
    var zw = weigh().total, best = 0, want = decodeURIComponent(hz[1]);
    for (var zn = 1; zn < nNodes; zn++)
      if (nameOf(zn) === want && (!best || zw[zn] > zw[best])) best = zn;
    state.zoom = best;
  }
  drawTimeline();
  drawFlame();
})();
