/* perfmark flame graph, SVG form.  perfmark writes each frame's label cut
 * to its box, so the SVG reads without scripts; this adds click to zoom
 * (the frame fills the width, its ancestors stay, labels recut),
 * double-click to reset, and a search that marks matching frames and sums
 * their share.  At most ROWS rows are drawn (the file's own height): frames
 * deeper are in the file, hidden ("deep"); zooming on a frame moves the
 * view up so its subtree shows, with a few of its ancestors (#zoom=NAME
 * in the address does it on load).  Names are only ever set as
 * textContent. */
var pmFrames = [], pmH = 0, pmRows = 0, PM_ROW = 17, PM_HEAD = 40, PM_CONTEXT = 3;
function pmName(g) { var t = g.querySelector('title').textContent; return t.slice(0, t.lastIndexOf(' (')); }
function pmLabel(g, x, w, y) {
  var r = g.querySelector('rect'), t = g.querySelector('text'), name = pmName(g);
  r.setAttribute('x', x); r.setAttribute('width', Math.max(w - 0.5, 0.1));
  r.setAttribute('y', y); t.setAttribute('y', y + PM_ROW - 5);
  t.setAttribute('x', x + 3);
  var n = Math.floor((w - 6) / 6.5);   /* as flamegraph.c's svg_label() */
  t.textContent = w < 30 ? '' : (name.length <= n ? name : name.slice(0, Math.max(n - 2, 0)) + '..');
}
function pmInit() {
  var gs = document.querySelectorAll('g.f');
  pmH = +document.documentElement.getAttribute('height');
  pmRows = Math.round((pmH - PM_HEAD) / PM_ROW);
  for (var i = 0; i < gs.length; i++) {
    var r = gs[i].querySelector('rect');
    var f = { g: gs[i], x: +r.getAttribute('x'), w: +r.getAttribute('width') + 0.5, y: +r.getAttribute('y') };
    f.d = Math.round((pmH - f.y) / PM_ROW) - 1;
    f.more = gs[i].classList.contains('more');
    pmFrames.push(f);
    (function (f) {
      f.g.addEventListener('click', function () { pmZoom(f); });
      f.g.addEventListener('dblclick', function () { pmZoom(null); });
    })(f);
  }
  document.getElementById('search').addEventListener('click', pmSearch);
  /* #zoom=NAME zooms on the widest frame of that name, as the HTML page does */
  var hz = /zoom=([^&]*)/.exec(location.hash), best = null;
  for (i = 0; hz && i < pmFrames.length; i++)
    if (pmName(pmFrames[i].g) === decodeURIComponent(hz[1]) && (!best || pmFrames[i].w > best.w))
      best = pmFrames[i];
  if (best) pmZoom(best);
}
function pmHasKids(p) {
  for (var i = 0; i < pmFrames.length; i++) {
    var f = pmFrames[i];
    if (f.d === p.d + 1 && f.x >= p.x - 0.01 && f.x + f.w <= p.x + p.w + 0.01) return true;
  }
  return false;
}
function pmYOf(d, base) { return pmH - (d - base + 1) * PM_ROW; }
function pmZoom(z) {
  var W = +document.documentElement.getAttribute('width'), i, f;
  if (!z) {
    for (i = 0; i < pmFrames.length; i++) {
      f = pmFrames[i];
      f.g.classList.remove('out');
      f.g.classList.toggle('deep', f.d >= pmRows);
      f.g.classList.toggle('more', f.more);
      pmLabel(f.g, f.x, f.w, f.y);
    }
    return;
  }
  function inside(f) { return f.d >= z.d && f.x >= z.x - 0.01 && f.x + f.w <= z.x + z.w + 0.01; }
  function below(f) { return f.d < z.d && f.x <= z.x + 0.01 && f.x + f.w >= z.x + z.w - 0.01; }
  /* the rows shown: z's subtree if it fits, else z and PM_CONTEXT ancestors at the bottom */
  var maxd = z.d;
  for (i = 0; i < pmFrames.length; i++)
    if (inside(pmFrames[i]) && pmFrames[i].d > maxd) maxd = pmFrames[i].d;
  var base = Math.max(0, Math.min(z.d - PM_CONTEXT, maxd - pmRows + 1));
  for (i = 0; i < pmFrames.length; i++) {
    f = pmFrames[i];
    var inz = inside(f), bel = below(f);
    if ((!inz && !bel) || f.d < base || f.d - base >= pmRows) { f.g.classList.add('out'); continue; }
    f.g.classList.remove('out');
    f.g.classList.remove('deep');
    f.g.classList.toggle('more', f.d - base === pmRows - 1 && pmHasKids(f));
    if (bel) pmLabel(f.g, 0, W, pmYOf(f.d, base));
    else pmLabel(f.g, (f.x - z.x) / z.w * W, f.w / z.w * W, pmYOf(f.d, base));
  }
}
function pmSearch() {
  var q = prompt('Search (regular expression)', ''), re, total = 0, hit = 0;
  try { re = q ? new RegExp(q) : null; } catch (e) { re = null; }
  for (var i = 0; i < pmFrames.length; i++) {
    var f = pmFrames[i], m = re && re.test(pmName(f.g));
    f.g.classList.toggle('hit', !!m);
    if (f.d === 0) total += f.w;
    var covered = false;
    for (var j = 0; m && j < pmFrames.length; j++) {
      var o = pmFrames[j];
      if (o !== f && o.d < f.d && o.x <= f.x && o.x + o.w >= f.x + f.w && re.test(pmName(o.g))) covered = true;
    }
    if (m && !covered) hit += f.w;
  }
  document.getElementById('matched').textContent = re ? 'matched: ' + (100 * hit / total).toFixed(2) + '%' : '';
}
