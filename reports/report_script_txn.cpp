// The "Transaction cycles" panel of report.html's script (report_script.h):
// each cycle of a transactional checker (D.txn, reports/report_txn.h) as a
// ring of transactions with an arrow per dependency, coloured by kind, and
// under it the transactions and why each edge exists. A fragment of the
// script's one function: it uses el, txt, tip, html, clear and legend,
// which report_script.cpp defines before it. Every string from the data is
// set with textContent (through txt, tip and html), never parsed as markup.
#include "reports/report_script.h"

namespace faultline::reports {

std::string_view ReportTxnScript() {
  return R"JS(
  // --- transaction cycles -----------------------------------------------------
  var EDGECOL = {ww: '#1f77b4', wr: '#2ca02c', rw: '#d62728', realtime: '#9467bd',
                 process: '#8c564b'};
  var EDGEWHAT = {ww: 'ww: overwrote its write', wr: 'wr: read its write',
                  rw: 'rw: overwrote what it read (anti-dependency)',
                  realtime: 'realtime: completed before it began',
                  process: 'process: ran before it on the same process'};
  function edgeColor(k) { return EDGECOL[k] || '#888'; }
  function tname(id) { return 'T' + id; }
  function drawTxn() {
    var T = D.txn;
    if (!T || !T.length) return;
    document.getElementById('txn-section').hidden = false;
    var div = document.getElementById('txn');
    clear(div);
    legend(div, Object.keys(EDGECOL).map(function (k) { return [EDGEWHAT[k], EDGECOL[k]]; }));
    T.forEach(function (c) {
      html('h3', div, c.checker);
      html('p', div, c.summary, 'summary');
      c.cycles.forEach(function (cy, i) { drawTxnCycle(div, c, cy, i); });
      if (c.cycles_more > 0) {
        html('p', div, '… and ' + c.cycles_more + ' more cycles (see the explanation)', 'hint');
      }
    });
  }
  function drawTxnCycle(div, c, cy, index) {
    var steps = cy.steps, n = steps.length;
    var box = html('div', div, null, 'txn-cycle');
    var title = html('p', box, null, 'txn-title');
    html('b', title, (cy.type || 'cycle') + ' · ' + n + ' transaction' + (n === 1 ? '' : 's'));
    title.appendChild(document.createTextNode(
        ' · satisfies: ' + (c.satisfied.length ? c.satisfied.join(', ') : 'none of the models checked') +
        ' · violates: ' + (c.violated.length ? c.violated.join(', ') : 'none')));
    var NR = 20, R = n <= 2 ? 70 : Math.min(240, Math.max(80, n * 22)), M = 44;
    var S = 2 * (R + M), cx = S / 2, cy0 = S / 2;
    var svg = el('svg', {width: S, height: S, 'class': 'txn-ring'}, box);
    var pos = steps.map(function (s, i) {
      var a = -Math.PI / 2 + 2 * Math.PI * i / n;
      return {x: cx + R * Math.cos(a), y: cy0 + R * Math.sin(a)};
    });
    // The edges first, so the nodes sit on top of their ends.
    steps.forEach(function (s, i) {
      var p = pos[i], q = pos[(i + 1) % n], col = edgeColor(s.edge);
      var dx = q.x - p.x, dy = q.y - p.y, len = Math.sqrt(dx * dx + dy * dy) || 1;
      var nx = dy / len, ny = -dx / len, mx = (p.x + q.x) / 2, my = (p.y + q.y) / 2;
      // Bend outward (away from the centre); with two nodes the two
      // opposite edges bend to opposite sides by themselves.
      if (n >= 3 && nx * (mx - cx) + ny * (my - cy0) < 0) { nx = -nx; ny = -ny; }
      var bend = n === 1 ? 0 : n === 2 ? 32 : Math.max(18, len * 0.18);
      var kx = mx + nx * bend, ky = my + ny * bend;
      var g = el('g', {'class': 'txn-edge ' + s.edge}, svg);
      var path;
      if (n === 1) {  // a self-loop above the node
        path = 'M' + (p.x - 8) + ',' + (p.y - NR) + ' C' + (p.x - 30) + ',' + (p.y - 70) + ' ' +
            (p.x + 30) + ',' + (p.y - 70) + ' ' + (p.x + 8) + ',' + (p.y - NR - 4);
        kx = p.x; ky = p.y - 80;
        arrowHead(g, p.x + 8, p.y - NR - 2, 0.3, 1, col);
      } else {
        var u0 = unit(kx - p.x, ky - p.y), u1 = unit(q.x - kx, q.y - ky);
        var ax = p.x + u0.x * NR, ay = p.y + u0.y * NR;
        var bx = q.x - u1.x * (NR + 2), by = q.y - u1.y * (NR + 2);
        path = 'M' + ax.toFixed(1) + ',' + ay.toFixed(1) + ' Q' + kx.toFixed(1) + ',' +
            ky.toFixed(1) + ' ' + bx.toFixed(1) + ',' + by.toFixed(1);
        arrowHead(g, bx, by, u1.x, u1.y, col);
      }
      el('path', {d: path, fill: 'none', stroke: col, 'stroke-width': 2}, g);
      tip(g, tname(s.txn) + ' -' + s.edge + '-> ' + tname(s.to) + ': ' + s.why);
      // The label at the middle of the curve.
      var lx = n === 1 ? kx : 0.25 * p.x + 0.5 * kx + 0.25 * q.x;
      var ly = n === 1 ? ky : 0.25 * p.y + 0.5 * ky + 0.25 * q.y;
      var t = txt(g, lx, ly + 4, s.edge, 'txn-elabel', 'middle');
      t.setAttribute('fill', col);
    });
    steps.forEach(function (s, i) {
      var p = pos[i], g = el('g', {'class': 'txn-node'}, svg);
      el('circle', {cx: p.x, cy: p.y, r: NR, fill: '#fff', stroke: '#1d2330', 'stroke-width': 1.5}, g);
      txt(g, p.x, p.y + 4, tname(s.txn), 'txn-nlabel', 'middle');
      tip(g, tname(s.txn) + ' on process ' + s.process + ', events ' + s.invoke_index + '–' +
          s.complete_index + '\n' + s.ops);
    });
    var ul = html('ul', box, null, 'txn-steps');
    steps.forEach(function (s) {
      html('li', ul, tname(s.txn) + ' (process ' + s.process + ', events ' + s.invoke_index +
          '–' + s.complete_index + '): ' + s.ops);
    });
    var ol = html('ul', box, null, 'why txn-why');
    steps.forEach(function (s) {
      var li = html('li', ol);
      html('b', li, tname(s.txn) + ' ');
      var k = html('span', li, '-' + s.edge + '->', 'txn-kind');
      k.style.color = edgeColor(s.edge);
      html('b', li, ' ' + tname(s.to));
      li.appendChild(document.createTextNode(': ' + s.why));
    });
    if (cy.cut) html('p', box, '… the cycle is longer; the rest is in the explanation', 'hint');
  }
  function unit(x, y) {
    var l = Math.sqrt(x * x + y * y) || 1;
    return {x: x / l, y: y / l};
  }
  // A filled arrowhead with its tip at (x, y) pointing along (ux, uy).
  function arrowHead(parent, x, y, ux, uy, col) {
    var u = unit(ux, uy), L = 9, Wd = 4.5;
    var bx = x - u.x * L, by = y - u.y * L;
    var pts = [x, y, bx - u.y * Wd, by + u.x * Wd, bx + u.y * Wd, by - u.x * Wd];
    el('polygon', {points: pts.map(function (v) { return v.toFixed(1); }).join(' '), fill: col}, parent);
  }
)JS";
}

}  // namespace faultline::reports
