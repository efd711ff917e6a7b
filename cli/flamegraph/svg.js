/* perfmark flame graph, SVG form.  perfmark writes each frame's label cut
 * to its box, so the SVG reads without scripts; this adds click to zoom
 * (the frame fills the width, its ancestors stay, labels recut),
 * double-click to reset, and a search that marks matching frames and sums
 * their share.  Names are only ever set as textContent. */
var pmFrames = [];
function pmName(g) { var t = g.querySelector('title').textContent; return t.slice(0, t.lastIndexOf(' (')); }
function pmLabel(g, x, w) {
  var r = g.querySelector('rect'), t = g.querySelector('text'), name = pmName(g);
  r.setAttribute('x', x); r.setAttribute('width', Math.max(w - 0.5, 0.1));
  t.setAttribute('x', x + 3);
  var n = Math.floor((w - 6) / 6.5);   /* as flamegraph.c's svg_label() */
  t.textContent = w < 30 ? '' : (name.length <= n ? name : name.slice(0, Math.max(n - 2, 0)) + '..');
}
function pmInit() {
  var gs = document.querySelectorAll('g.f');
  for (var i = 0; i < gs.length; i++) {
    var r = gs[i].querySelector('rect');
    var f = { g: gs[i], x: +r.getAttribute('x'), w: +r.getAttribute('width') + 0.5, y: +r.getAttribute('y') };
    pmFrames.push(f);
    (function (f) {
      f.g.addEventListener('click', function () { pmZoom(f); });
      f.g.addEventListener('dblclick', function () { pmZoom(null); });
    })(f);
  }
  document.getElementById('search').addEventListener('click', pmSearch);
}
function pmZoom(z) {
  var W = document.documentElement.getAttribute('width');
  for (var i = 0; i < pmFrames.length; i++) {
    var f = pmFrames[i];
    if (!z) { f.g.classList.remove('out'); pmLabel(f.g, f.x, f.w); continue; }
    var inside = f.x >= z.x - 0.01 && f.x + f.w <= z.x + z.w + 0.01 && f.y <= z.y;
    var below = f.y > z.y && f.x <= z.x + 0.01 && f.x + f.w >= z.x + z.w - 0.01;
    if (!inside && !below) { f.g.classList.add('out'); continue; }
    f.g.classList.remove('out');
    if (below) pmLabel(f.g, 0, W);
    else pmLabel(f.g, (f.x - z.x) / z.w * W, f.w / z.w * W);
  }
}
function pmSearch() {
  var q = prompt('Search (regular expression)', ''), re, total = 0, hit = 0;
  try { re = q ? new RegExp(q) : null; } catch (e) { re = null; }
  for (var i = 0; i < pmFrames.length; i++) {
    var f = pmFrames[i], m = re && re.test(pmName(f.g));
    f.g.classList.toggle('hit', !!m);
    if (f.y === pmFrames[0].y) total += f.w;
    var covered = false;
    for (var j = 0; m && j < pmFrames.length; j++) {
      var o = pmFrames[j];
      if (o !== f && o.y > f.y && o.x <= f.x && o.x + o.w >= f.x + f.w && re.test(pmName(o.g))) covered = true;
    }
    if (m && !covered) hit += f.w;
  }
  document.getElementById('matched').textContent = re ? 'matched: ' + (100 * hit / total).toFixed(2) + '%' : '';
}
