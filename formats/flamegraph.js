'use strict';
var svg, frames, details, matched, searchButton, unzoomButton;
var total, width, pad, charWidth, zoomed = null, searching = null;
function num(g, name) { return +g.getAttribute('data-' + name); }
function label(g) { return g.querySelector('title').textContent.split('\n')[0]; }
function fit(g, pixels) {
  var t = g.querySelector('text'), l = label(g), n = Math.floor((pixels - 6) / charWidth);
  t.textContent = n < 3 ? '' : (l.length <= n ? l : l.substring(0, n - 2) + '..');
}
function place(g, x, w) {
  var r = g.querySelector('rect');
  r.setAttribute('x', x.toFixed(2));
  r.setAttribute('width', Math.max(w, 0).toFixed(2));
  g.querySelector('text').setAttribute('x', (x + 3).toFixed(2));
  fit(g, w);
}
function show(x0, w0, depth) {
  var scale = (width - 2 * pad) / w0;
  frames.forEach(function (g) {
    var x = num(g, 'x'), w = num(g, 'w'), d = num(g, 'd');
    var inside = d >= depth && x >= x0 && x + w <= x0 + w0 * (1 + 1e-9);
    var caller = d < depth && x <= x0 && x + w >= x0 + w0 * (1 - 1e-9);
    g.style.display = inside || caller ? '' : 'none';
    g.classList.toggle('parent', caller);
    if (inside) place(g, pad + (x - x0) * scale, w * scale);
    else if (caller) place(g, pad, width - 2 * pad);
  });
  if (searching !== null) search(searching);
}
function zoom(g) {
  zoomed = g;
  unzoomButton.classList.remove('hide');
  show(num(g, 'x'), num(g, 'w'), num(g, 'd'));
}
function unzoom() {
  zoomed = null;
  unzoomButton.classList.add('hide');
  show(0, total, 0);
}
function paint(g, on) {
  var r = g.querySelector('rect');
  if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));
  r.setAttribute('fill', on ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));
}
function search(term) {
  var re, hits = [], base, sum = 0, end = -Infinity;
  try { re = new RegExp(term); } catch (e) { alert('Not a regular expression: ' + e.message); return; }
  searching = term;
  base = zoomed ? [num(zoomed, 'x'), num(zoomed, 'w')] : [0, total];
  frames.forEach(function (g) {
    var hit = re.test(label(g));
    paint(g, hit);
    if (hit && g.style.display !== 'none') hits.push([num(g, 'x'), num(g, 'x') + num(g, 'w')]);
  });
  hits.sort(function (a, b) { return a[0] - b[0]; });
  hits.forEach(function (h) {
    var s = Math.max(h[0], base[0], end), e = Math.min(h[1], base[0] + base[1]);
    if (e > s) sum += e - s;
    if (e > end) end = e;
  });
  matched.textContent = 'Matched: ' + (100 * sum / base[1]).toFixed(1) + '%';
  matched.classList.remove('hide');
  searchButton.textContent = 'Reset search';
}
function resetSearch() {
  searching = null;
  frames.forEach(function (g) { paint(g, false); });
  matched.classList.add('hide');
  searchButton.textContent = 'Search';
}
function askSearch() {
  if (searching !== null) { resetSearch(); return; }
  var term = prompt('Search for frames matching a regular expression', '');
  if (term) search(term);
}
// A deep stack makes the page taller than the window, and the roots, where
// reading starts, are at the bottom (at the top when inverted): open there.
function showRoots() {
  var root = document.querySelector('g.f[data-d="0"] rect');
  if (root && root.getBoundingClientRect().bottom > window.innerHeight)
    window.scrollTo(0, +svg.getAttribute('height'));
}
function init() {
  svg = document.documentElement;
  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
  details = document.getElementById('details');
  matched = document.getElementById('matched');
  searchButton = document.getElementById('search');
  unzoomButton = document.getElementById('unzoom');
  total = +svg.getAttribute('data-total');
  width = +svg.getAttribute('width');
  pad = +svg.getAttribute('data-pad');
  charWidth = +svg.getAttribute('data-charwidth');
  frames.forEach(function (g) {
    g.addEventListener('click', function () { zoom(g); });
    g.addEventListener('mouseover', function () {
      details.textContent = g.querySelector('title').textContent.replace('\n', ': ');
    });
    g.addEventListener('mouseout', function () { details.textContent = ' '; });
  });
  unzoomButton.addEventListener('click', unzoom);
  searchButton.addEventListener('click', askSearch);
  window.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); askSearch(); }
    else if (e.key === 'Escape') { resetSearch(); unzoom(); }
  });
  showRoots();
}
window.addEventListener('load', init);
