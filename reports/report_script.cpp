// The stylesheet and the charting script inlined into report.html. Written
// for this page (no library); plain ES5 so it runs in any browser.
#include "reports/report_script.h"

#include <string>

namespace faultline::reports {

std::string_view ReportCss() {
  return R"CSS(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1400px;padding:0 16px 32px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:17px;margin:22px 0 6px;border-bottom:1px solid #dde;padding-bottom:3px}h3{font-size:15px;margin:10px 0 4px}
.verdict{display:inline-block;padding:1px 10px;border-radius:4px;color:#fff;font-weight:600}
.verdict.valid{background:#2e8b42}.verdict.invalid{background:#c9302c}.verdict.unknown{background:#b07800}
.expect.met{color:#2e8b42;font-weight:600}.expect.unmet{color:#c9302c;font-weight:600}
p.interrupted{margin:4px 0;padding:4px 10px;border-left:4px solid #c9302c;background:#fdf0ef}
.facts{color:#4a5365}.checker{border-left:4px solid #ccd;padding:2px 10px;margin:8px 0}
.checker.invalid{border-color:#c9302c}.checker.unknown{border-color:#b07800}.checker.valid{border-color:#2e8b42}
.checker .summary{margin:2px 0;font-weight:500}
pre{background:#f6f7f9;border:1px solid #e2e4ea;padding:8px;overflow:auto;max-height:480px;white-space:pre-wrap;word-break:break-word;font-size:12.5px}
table.facts th{text-align:left;padding-right:14px;font-weight:500;vertical-align:top}
.chart{width:100%;overflow:hidden;user-select:none;position:relative}
.chart svg{display:block;font:11px system-ui,sans-serif}
.chart .lane-label{fill:#4a5365}.chart .axis{stroke:#99a;stroke-width:1}.chart .tick{fill:#667}
.chart .fault-label{fill:#333;font-weight:600}.chart .empty{fill:#889;font-size:13px}
.controls button{font:inherit;padding:1px 8px}.hint{color:#889;font-size:12px;margin-left:10px}
#timeline{cursor:grab}.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
ul.why li{margin:2px 0}p.vkind{font-weight:600;color:#c9302c;margin:4px 0}p.vcontext{margin:4px 0 8px;padding:4px 10px;border-left:4px solid #c9302c;background:#fdf0ef}
.chart .vtime{fill:#4a5365;font-size:10.5px}table.terms{border-collapse:collapse;margin:6px 0}table.terms td,table.terms th{padding:1px 10px 1px 0;text-align:left}
table.terms tr.conflict-term td{color:#c9302c;font-weight:600}
#txn svg{display:block;font:12px system-ui,sans-serif}#txn .txn-nlabel{font-weight:600;fill:#1d2330}
#txn .txn-elabel{font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:3px}p.txn-title{margin:10px 0 2px}
ul.txn-steps{margin:2px 0;font-family:ui-monospace,monospace;font-size:12.5px}.txn-kind{font-weight:600}
footer{margin-top:30px;color:#99a;font-size:12px}
)CSS";
}

namespace {

constexpr char kScriptHead[] = R"JS(
(function () {
  'use strict';
  var SVGNS = 'http://www.w3.org/2000/svg';
  var D = JSON.parse(document.getElementById('faultline-data').textContent);
  var OPS = D.ops, N = OPS.s.length;
  var US = D.unit === 'us';
  var TCOL = ['#3a9a4a', '#d9534f', '#f0ad4e', '#f0ad4e'];
  var TNAME = ['ok', 'fail', 'info', 'never completed'];
  var FCOL = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b',
              '#e377c2', '#17becf', '#bcbd22', '#7f7f7f', '#d62728'];
  var FAULTCOL = {partition: '#6c8ebf', kill: '#c9302c', pause: '#9467bd',
                  clock: '#17becf', loss: '#8c564b'};
  var FULL = {lo: 0, hi: Math.max(1, D.end)};
  var view = {lo: FULL.lo, hi: FULL.hi};
  var LEFT = 96, RIGHT = 12;

  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (attrs.hasOwnProperty(k)) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function txt(parent, x, y, s, cls, anchor) {
    var t = el('text', {x: x, y: y}, parent);
    if (cls) t.setAttribute('class', cls);
    if (anchor) t.setAttribute('text-anchor', anchor);
    t.textContent = s;
    return t;
  }
  function tip(e, s) {
    var t = document.createElementNS(SVGNS, 'title');
    t.textContent = s;
    e.appendChild(t);
  }
  function html(tag, parent, s, cls) {
    var e = document.createElement(tag);
    if (s !== undefined && s !== null) e.textContent = s;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function widthOf(div) { return Math.max(480, div.clientWidth || 1000); }
  function fmtX(x) {
    if (!US) return 'event ' + Math.round(x);
    var s = x / 1e6, span = (view.hi - view.lo) / 1e6;
    var d = span < 0.01 ? 5 : span < 0.1 ? 4 : span < 1 ? 3 : span < 20 ? 2 : 1;
    return s.toFixed(d) + ' s';
  }
  function fmtDur(us) {
    if (!US) return Math.round(us) + ' events';
    if (us < 1000) return us.toFixed(0) + ' µs';
    if (us < 1e6) return (us / 1000).toFixed(us < 1e4 ? 2 : 1) + ' ms';
    return (us / 1e6).toFixed(2) + ' s';
  }
  function niceStep(span, count) {
    var raw = span / Math.max(1, count), p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function colorOf(map, palette, key, idx) {
    return map[key] || palette[idx % palette.length];
  }
  function faultColor(f) {
    for (var k in FAULTCOL) if (f.indexOf(k) >= 0) return FAULTCOL[k];
    return '#888';
  }

  // A horizontal time axis at y; sx maps x to pixels.
  function xAxis(svg, sx, y, W) {
    el('line', {x1: LEFT, x2: W - RIGHT, y1: y, y2: y, 'class': 'axis'}, svg);
    var step = niceStep(view.hi - view.lo, Math.floor((W - LEFT) / 110));
    for (var t = Math.ceil(view.lo / step) * step; t <= view.hi; t += step) {
      var x = sx(t);
      el('line', {x1: x, x2: x, y1: y, y2: y + 4, 'class': 'axis'}, svg);
      txt(svg, x, y + 15, fmtX(t), 'tick', 'middle');
    }
  }

  // Fault windows as shaded bands from y0 to y1, labelled when labels.
  function faults(svg, sx, y0, y1, labels) {
    var rows = [];  // label rows, so overlapping labels do not collide
    for (var i = 0; i < D.faults.length; i++) {
      var w = D.faults[i];
      if (w.e < view.lo || w.s > view.hi) continue;
      var a = sx(Math.max(w.s, view.lo)), b = sx(Math.min(w.e, view.hi));
      var r = el('rect', {x: a, y: y0, width: Math.max(1, b - a), height: y1 - y0,
        fill: faultColor(w.f), 'fill-opacity': 0.13, 'class': 'fault'}, svg);
      tip(r, w.f + (w.detail ? ' ' + w.detail : '') + '\n' + fmtX(w.s) + ' – ' +
          (w.open ? 'end' : fmtX(w.e)));
      if (labels) {
        var row = 0;
        while (rows[row] !== undefined && rows[row] > a) row++;
        rows[row] = a + 7 * w.f.length + 8;
        if (row < 2) txt(svg, a + 2, y0 + 10 + 11 * row, w.f, 'fault-label');
      }
    }
  }

  function legend(parent, items) {
    var p = html('div', parent, null, 'legend');
    items.forEach(function (it) {
      var s = html('span', p);
      var i = html('i', s);
      i.style.background = it[1];
      s.appendChild(document.createTextNode(it[0]));
    });
  }

  function emptyNote(div, W, s) {
    var svg = el('svg', {width: W, height: 40}, div);
    txt(svg, LEFT, 24, s, 'empty');
  }

  // --- timeline ---------------------------------------------------------------
  var LANE_H = 16, TL_TOP = 28;
  function drawTimeline() {
    var div = document.getElementById('timeline');
    clear(div);
    var W = widthOf(div), lanes = D.lanes.length;
    var range = document.getElementById('view-range');
    range.textContent = fmtX(view.lo) + ' – ' + fmtX(view.hi);
    if (N === 0) { emptyNote(div, W, 'No client operations in the history.'); return; }
    var H = TL_TOP + lanes * LANE_H + 28, plotW = W - LEFT - RIGHT;
    var svg = el('svg', {width: W, height: H, 'class': 'timeline'}, div);
    var k = plotW / (view.hi - view.lo);
    var sx = function (x) { return LEFT + (x - view.lo) * k; };
    for (var l = 0; l < lanes; l++) {
      var y = TL_TOP + l * LANE_H;
      if (l % 2 === 0) el('rect', {x: LEFT, y: y, width: plotW, height: LANE_H, fill: '#f4f5f8'}, svg);
      txt(svg, LEFT - 6, y + LANE_H - 4, D.lanes[l], 'lane-label', 'end');
    }
    faults(svg, sx, 2, TL_TOP + lanes * LANE_H, true);
    var vis = [];
    for (var i = 0; i < N; i++) if (OPS.s[i] <= view.hi && OPS.e[i] >= view.lo) vis.push(i);
    var g = el('g', {}, svg);
    if (vis.length <= 2500) {
      vis.forEach(function (i) {
        var a = sx(Math.max(OPS.s[i], view.lo)), b = sx(Math.min(OPS.e[i], view.hi));
        var r = el('rect', {x: a, y: TL_TOP + OPS.lane[i] * LANE_H + 2,
          width: Math.max(1.5, b - a), height: LANE_H - 4, fill: TCOL[OPS.t[i]],
          'class': 'op t' + OPS.t[i]}, g);
        if (OPS.t[i] === 3) r.setAttribute('fill-opacity', 0.5);
        tip(r, D.lanes[OPS.lane[i]] + ': ' + OPS.d[i] + '\n' + TNAME[OPS.t[i]] + ', ' +
            fmtX(OPS.s[i]) + ' – ' + fmtX(OPS.e[i]) + ' (' + fmtDur(OPS.e[i] - OPS.s[i]) + ')');
      });
    } else {
      // Pixel buckets: per lane and bucket, counts of ok / fail / info;
      // drawn as runs of equal "worst outcome".
      var BW = 2, B = Math.ceil(plotW / BW), cnt = new Int32Array(lanes * B * 3);
      vis.forEach(function (i) {
        var b0 = Math.max(0, Math.floor((sx(OPS.s[i]) - LEFT) / BW));
        var b1 = Math.min(B - 1, Math.floor((sx(OPS.e[i]) - LEFT) / BW));
        var t = Math.min(2, OPS.t[i]), base = OPS.lane[i] * B * 3;
        for (var b = b0; b <= b1; b++) cnt[base + b * 3 + t]++;
      });
      for (var ln = 0; ln < lanes; ln++) {
        var base = ln * B * 3, run = -1, code = 0, c = [0, 0, 0];
        for (var b = 0; b <= B; b++) {
          var cc = 0;
          if (b < B) {
            var o = cnt[base + b * 3], f = cnt[base + b * 3 + 1], n = cnt[base + b * 3 + 2];
            cc = n > 0 ? 3 : f > 0 ? 2 : o > 0 ? 1 : 0;
          }
          if (b === B || cc !== code) {
            if (code > 0) {
              var r = el('rect', {x: LEFT + run * BW, y: TL_TOP + ln * LANE_H + 2,
                width: (b - run) * BW, height: LANE_H - 4, fill: TCOL[code - 1],
                'class': 'bucket'}, g);
              tip(r, D.lanes[ln] + ': ' + c[0] + ' ok, ' + c[1] + ' fail, ' + c[2] +
                  ' info (op-buckets), ' + fmtX(view.lo + run * BW / k) + ' – ' +
                  fmtX(view.lo + b * BW / k) + '; zoom in for single operations');
            }
            run = b; code = cc; c = [0, 0, 0];
          }
          if (b < B) { c[0] += cnt[base + b * 3]; c[1] += cnt[base + b * 3 + 1]; c[2] += cnt[base + b * 3 + 2]; }
        }
      }
    }
    if (D.violation && D.violation.ops.length) {
      var vr = violationRange();
      if (vr.hi >= view.lo && vr.lo <= view.hi) {
        var a = sx(Math.max(vr.lo, view.lo)), b = sx(Math.min(vr.hi, view.hi));
        var r = el('rect', {x: a - 1, y: TL_TOP - 2, width: Math.max(3, b - a + 2),
          height: lanes * LANE_H + 4, fill: 'none', stroke: '#c9302c', 'stroke-width': 2,
          'class': 'violation-mark'}, svg);
        tip(r, 'linearizability violation (see above)');
      }
    }
    xAxis(svg, sx, TL_TOP + lanes * LANE_H + 2, W);
  }

  // --- clock offsets (clock and strobe faults) -------------------------------
  // Each node's fake - real in ms (D.clocks, reports/report_clocks.h); a step
  // is two points at the same x.
  function drawClocks() {
    var C = D.clocks;
    if (!C) return;
    document.getElementById('clocks-section').hidden = false;
    var div = document.getElementById('clocks');
    clear(div);
    var W = widthOf(div), H = 200, top = 12, bottom = H - 28;
    var k = (W - LEFT - RIGHT) / (view.hi - view.lo);
    var sx = function (x) { return LEFT + (x - view.lo) * k; };
    var M = Math.max(1, C.max_abs);
    var sy = function (v) { return top + (M - v) / (2 * M) * (bottom - top); };
    var svg = el('svg', {width: W, height: H, 'class': 'clocks'}, div);
    faults(svg, sx, top, bottom, false);
    var step = niceStep(M, 2);
    for (var t = -Math.floor(M / step) * step; t <= M; t += step) {
      el('line', {x1: LEFT, x2: W - RIGHT, y1: sy(t), y2: sy(t),
        stroke: t === 0 ? '#9aa0ad' : '#e6e8ee'}, svg);
      txt(svg, LEFT - 6, sy(t) + 4, (t > 0 ? '+' : '') + (Math.abs(t) >= 1000 ?
        +(t / 1000).toPrecision(4) + ' s' : +t.toPrecision(4) + ' ms'), 'tick', 'end');
    }
    C.series.forEach(function (pts, n) {
      var out = [];
      pts.forEach(function (p) {
        var x = Math.max(view.lo, Math.min(view.hi, p[0]));
        out.push(sx(x).toFixed(1) + ',' + sy(p[1]).toFixed(1));
      });
      var pl = el('polyline', {points: out.join(' '), fill: 'none',
        stroke: FCOL[n % FCOL.length], 'stroke-width': 1.6, 'class': 'clock'}, svg);
      tip(pl, C.nodes[n] + ': clock offset (fake - real)');
    });
    xAxis(svg, sx, bottom, W);
    legend(div, C.nodes.map(function (name, i) { return [name, FCOL[i % FCOL.length]]; }));
  }

  // --- latency ----------------------------------------------------------------
  var LAT = null;  // global latency range, fixed across zooms
  function drawLatency() {
    var div = document.getElementById('latency');
    clear(div);
    var W = widthOf(div), H = 280, top = 10, bottom = H - 28, plotW = W - LEFT - RIGHT;
    var vis = [];
    for (var i = 0; i < N; i++) {
      if (OPS.t[i] !== 3 && OPS.s[i] >= view.lo && OPS.s[i] <= view.hi) vis.push(i);
    }
    if (!LAT) {
      var lo = Infinity, hi = 0;
      for (var j = 0; j < N; j++) {
        if (OPS.t[j] === 3) continue;
        var v = Math.max(1, OPS.e[j] - OPS.s[j]);
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      if (hi === 0) { lo = 1; hi = 10; }
      LAT = {lo: Math.log10(lo), hi: Math.max(Math.log10(hi), Math.log10(lo) + 1)};
    }
    if (N === 0) { emptyNote(div, W, 'No completed operations.'); return; }
    var svg = el('svg', {width: W, height: H, 'class': 'latency'}, div);
    var k = plotW / (view.hi - view.lo);
    var sx = function (x) { return LEFT + (x - view.lo) * k; };
    var sy = function (v) {
      return bottom - (Math.log10(Math.max(1, v)) - LAT.lo) / (LAT.hi - LAT.lo) * (bottom - top);
    };
    faults(svg, sx, top, bottom, true);
    for (var d = Math.floor(LAT.lo); d <= Math.ceil(LAT.hi); d++) {
      var yy = sy(Math.pow(10, d));
      if (yy < top - 1 || yy > bottom + 1) continue;
      el('line', {x1: LEFT, x2: W - RIGHT, y1: yy, y2: yy, stroke: '#e6e8ee'}, svg);
      txt(svg, LEFT - 6, yy + 4, fmtDur(Math.pow(10, d)), 'tick', 'end');
    }
    var g = el('g', {}, svg);
    if (vis.length <= 4000) {
      vis.forEach(function (i) {
        var c = el('circle', {cx: sx(OPS.s[i]), cy: sy(OPS.e[i] - OPS.s[i]), r: 1.8,
          fill: FCOL[OPS.f[i] % FCOL.length], 'fill-opacity': OPS.t[i] === 0 ? 0.7 : 0.35,
          'class': 'pt'}, g);
        tip(c, OPS.d[i] + '\n' + TNAME[OPS.t[i]] + ', ' + fmtDur(OPS.e[i] - OPS.s[i]) + ' at ' + fmtX(OPS.s[i]));
      });
    } else {
      var C = 4, CX = Math.ceil(plotW / C) + 1, CY = Math.ceil(H / C) + 1;
      var seen = new Uint8Array(D.fs.length * CX * CY);
      vis.forEach(function (i) {
        var cx = Math.floor((sx(OPS.s[i]) - LEFT) / C), cy = Math.floor(sy(OPS.e[i] - OPS.s[i]) / C);
        if (cx < 0 || cx >= CX || cy < 0 || cy >= CY) return;
        var key = (OPS.f[i] * CX + cx) * CY + cy;
        if (seen[key]) return;
        seen[key] = 1;
        el('rect', {x: LEFT + cx * C, y: cy * C, width: C - 1, height: C - 1,
          fill: FCOL[OPS.f[i] % FCOL.length], 'fill-opacity': 0.55, 'class': 'cell'}, g);
      });
    }
    // Quantile lines over all fs: p50, p95, p99 per x bucket.
    var NB = 60, buckets = [];
    for (var b = 0; b < NB; b++) buckets.push([]);
    vis.forEach(function (i) {
      var b = Math.min(NB - 1, Math.floor((OPS.s[i] - view.lo) / (view.hi - view.lo) * NB));
      buckets[b].push(OPS.e[i] - OPS.s[i]);
    });
    var qs = [[0.5, '#222', ''], [0.95, '#555', '5,3'], [0.99, '#c9302c', '2,2']];
    qs.forEach(function (q) {
      var pts = [];
      buckets.forEach(function (arr, b) {
        if (!arr.length) return;
        arr.sort(function (x, y) { return x - y; });
        var v = arr[Math.min(arr.length - 1, Math.ceil(q[0] * arr.length) - 1)];
        pts.push((LEFT + (b + 0.5) * plotW / NB).toFixed(1) + ',' + sy(v).toFixed(1));
      });
      if (pts.length) {
        var pl = el('polyline', {points: pts.join(' '), fill: 'none', stroke: q[1],
          'stroke-width': 1.6, 'stroke-dasharray': q[2], 'class': 'quantile'}, svg);
        tip(pl, 'p' + Math.round(q[0] * 100) + ' latency (all f)');
      }
    });
    xAxis(svg, sx, bottom, W);
    var items = D.fs.map(function (f, i) { return [f, FCOL[i % FCOL.length]]; });
    items.push(['p50', '#222'], ['p95', '#555'], ['p99', '#c9302c']);
    legend(div, items);
  }

  // --- throughput -------------------------------------------------------------
  function drawThroughput() {
    var div = document.getElementById('throughput');
    clear(div);
    var W = widthOf(div), H = 220, top = 10, bottom = H - 28, plotW = W - LEFT - RIGHT;
    if (N === 0) { emptyNote(div, W, 'No completed operations.'); return; }
    var NB = Math.max(10, Math.min(120, Math.floor(plotW / 8)));
    var span = view.hi - view.lo, per = US ? span / NB / 1e6 : 1;
    var counts = D.fs.map(function () { return new Float64Array(NB); });
    for (var i = 0; i < N; i++) {
      if (OPS.t[i] !== 0 || OPS.e[i] < view.lo || OPS.e[i] > view.hi) continue;
      var b = Math.min(NB - 1, Math.floor((OPS.e[i] - view.lo) / span * NB));
      counts[OPS.f[i]][b] += 1 / per;
    }
    var max = 1;
    counts.forEach(function (c) { for (var b = 0; b < NB; b++) max = Math.max(max, c[b]); });
    var svg = el('svg', {width: W, height: H, 'class': 'throughput'}, div);
    var k = plotW / span;
    var sx = function (x) { return LEFT + (x - view.lo) * k; };
    var sy = function (v) { return bottom - v / max * (bottom - top); };
    faults(svg, sx, top, bottom, true);
    var step = niceStep(max, 4);
    for (var t = 0; t <= max; t += step) {
      el('line', {x1: LEFT, x2: W - RIGHT, y1: sy(t), y2: sy(t), stroke: '#e6e8ee'}, svg);
      txt(svg, LEFT - 6, sy(t) + 4, (t >= 100 ? t.toFixed(0) : String(+t.toPrecision(3))) +
          (US ? '/s' : ''), 'tick', 'end');
    }
    counts.forEach(function (c, f) {
      var pts = [];
      for (var b = 0; b < NB; b++) {
        pts.push((LEFT + (b + 0.5) * plotW / NB).toFixed(1) + ',' + sy(c[b]).toFixed(1));
      }
      var pl = el('polyline', {points: pts.join(' '), fill: 'none',
        stroke: FCOL[f % FCOL.length], 'stroke-width': 1.6, 'class': 'rate'}, svg);
      tip(pl, D.fs[f] + ': ok completions per ' + (US ? 'second' : 'bucket'));
    });
    xAxis(svg, sx, bottom, W);
    legend(div, D.fs.map(function (f, i) { return [f + ' ok/s', FCOL[i % FCOL.length]]; }));
  }

)JS";

constexpr char kScriptTail[] = R"JS(
  // --- view and interaction -----------------------------------------------
  var pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      drawTimeline(); drawHolds(); drawLeaders(); drawClocks(); drawLatency();
      drawThroughput();
    });
  }
  function setView(lo, hi) {
    var span = Math.max(hi - lo, US ? 10 : 2);
    span = Math.min(span, FULL.hi - FULL.lo);
    lo = Math.max(FULL.lo, Math.min(lo, FULL.hi - span));
    view.lo = lo; view.hi = lo + span;
    redraw();
  }
  function zoom(factor, at) {
    if (at === undefined) at = (view.lo + view.hi) / 2;
    setView(at - (at - view.lo) * factor, at + (view.hi - at) * factor);
  }
  function dataX(div, clientX) {
    var rect = div.getBoundingClientRect(), plotW = widthOf(div) - LEFT - RIGHT;
    var px = Math.max(0, Math.min(plotW, clientX - rect.left - LEFT));
    return view.lo + px / plotW * (view.hi - view.lo);
  }
  ['timeline', 'holds', 'leaders', 'clocks', 'latency', 'throughput'].forEach(function (id) {
    var div = document.getElementById(id);
    div.addEventListener('wheel', function (e) {
      e.preventDefault();
      zoom(e.deltaY > 0 ? 1.25 : 0.8, dataX(div, e.clientX));
    }, {passive: false});
    var drag = null;
    div.addEventListener('mousedown', function (e) {
      drag = {x: e.clientX, lo: view.lo, hi: view.hi};
      e.preventDefault();
    });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var plotW = widthOf(div) - LEFT - RIGHT;
      var shift = (drag.x - e.clientX) / plotW * (drag.hi - drag.lo);
      setView(drag.lo + shift, drag.hi + shift);
    });
    window.addEventListener('mouseup', function () { drag = null; });
  });
  document.getElementById('zoom-in').addEventListener('click', function () { zoom(0.5); });
  document.getElementById('zoom-out').addEventListener('click', function () { zoom(2); });
  document.getElementById('zoom-reset').addEventListener('click', function () {
    setView(FULL.lo, FULL.hi);
  });
  window.addEventListener('resize', redraw);

  drawViolation();
  drawTxn();
  drawTimeline(); drawHolds(); drawLeaders(); drawClocks(); drawLatency();
  drawThroughput();
  document.body.setAttribute('data-rendered', 'yes');
  // Milliseconds from navigation start to the first complete drawing.
  if (window.performance && performance.now) {
    document.body.setAttribute('data-render-ms', String(Math.round(performance.now())));
  }
})();
)JS";

}  // namespace

std::string_view ReportScript() {
  static const std::string script =
      std::string(kScriptHead) + std::string(ReportPanelsScript()) +
      std::string(ReportTxnScript()) + kScriptTail;
  return script;
}

}  // namespace faultline::reports
