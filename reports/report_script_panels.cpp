// The panels of report.html's script (report_script.h): the violation in
// its context, the holders chart of lock and election runs and the leaders
// chart with its table of leaders per term. The text is a fragment of the
// script's one function: it uses the helpers (el, txt, tip, html, faults,
// xAxis, view, D, ...) that report_script.cpp defines before it.
#include "reports/report_script.h"

namespace faultline::reports {

std::string_view ReportPanelsScript() {
  return R"JS(
  // --- the violation ----------------------------------------------------------
  // D.violation: the checker's failure (reports/report_data.cpp) with its
  // context: kind, sentence, the ops it names (with their nodes) and the
  // faults in force, shaded behind the ops as on the timeline.
  // The window of the search's ops; the context's ops widen it by at most
  // its own span (those further off are drawn at its edge).
  function violationRange() {
    var v = D.violation, lo = Infinity, hi = -Infinity;
    v.ops.forEach(function (o) {
      if (o.role !== 'context') { lo = Math.min(lo, o.s); hi = Math.max(hi, o.e); }
    });
    if (lo === Infinity) {
      v.ops.forEach(function (o) { lo = Math.min(lo, o.s); hi = Math.max(hi, o.e); });
      return {lo: lo, hi: hi};
    }
    var span = Math.max(hi - lo, US ? 1000 : 1), a = lo - span, b = hi + span;
    v.ops.forEach(function (o) {
      if (o.role !== 'context') return;
      if (o.s >= a) lo = Math.min(lo, o.s);
      if (o.e <= b) hi = Math.max(hi, o.e);
    });
    return {lo: lo, hi: hi};
  }
  // Seconds with milliseconds in the panel (the ops of a violation are
  // often a few ms apart), events without times.
  function vsec(x) { return US ? (x / 1e6).toFixed(3) + ' s' : 'event ' + Math.round(x); }
  var ROLE = {rejected: ['#d9534f', 'cannot take effect here'],
              stuck: ['#f0ad4e', 'could not be placed next'],
              prefix: ['#8fb8de', 'linearized (end of the longest prefix)'],
              window: ['#c9ced8', 'concurrent'],
              context: ['#9fd3a8', 'named by the explanation']};
  var KIND = {'stale-read': 'Stale read',
              'lost-write': 'Lost write (an acknowledged write was lost)',
              'never-written': 'Read of a value never written',
              'no-consistent-order': 'No consistent order'};
  var PART = {written_by: 'wrote the value that was read',
              overwritten_by: 'first overwrote it',
              latest_write: 'newest write acknowledged before the read',
              later_read: 'a later read saw the newer value',
              lost: 'acknowledged, never read', failing: 'could not be ordered'};
  function partOf(v, o) {
    if (o.part !== 'read') return PART[o.part] || '';
    return v.kind === 'stale-read' ? 'served the stale value' :
        v.kind === 'lost-write' ? 'served an older value' : 'served a value never written';
  }
  function drawViolation() {
    var v = D.violation;
    if (!v) return;
    var sec = document.getElementById('violation');
    sec.hidden = false;
    var div = document.getElementById('violation-chart');
    clear(div);
    var saved = {lo: view.lo, hi: view.hi};
    var r = v.ops.length ? violationRange() : {lo: 0, hi: 1};
    var pad = Math.max(1, (r.hi - r.lo) * 0.04), lo = r.lo - pad, hi = r.hi + pad;
    view.lo = lo; view.hi = hi;  // fmtX picks its decimals from the view
    if (v.kind) {
      html('p', div, (KIND[v.kind] || v.kind) + ' on key ' + v.key +
          (v.at === null ? '' : ' at ' + vsec(v.at)), 'vkind');
    }
    if (v.sentence) html('p', div, v.sentence, 'vcontext');
    var p = html('p', div);
    html('b', p, 'key ' + v.key);
    p.appendChild(document.createTextNode(' · model ' + v.model +
        ' · state after the longest linearizable prefix: ' + v.state));
    html('p', div, v.summary, 'summary');
    var ul = html('ul', div, null, 'why');
    v.why.forEach(function (w) { html('li', ul, 'event ' + w.index + ': ' + w.why); });
    if (v.ops.length) drawViolationChart(v, div, lo, hi);
    view.lo = saved.lo; view.hi = saved.hi;
  }
  function drawViolationChart(v, div, lo, hi) {
    var procs = [];
    v.ops.forEach(function (o) { if (procs.indexOf(o.process) < 0) procs.push(o.process); });
    procs.sort(function (a, b) { return a - b; });
    var W = widthOf(div), LH = 46, top = 18, plotW = W - LEFT - RIGHT - 180;
    var H = top + procs.length * LH + 30;
    var svg = el('svg', {width: W, height: H, 'class': 'violation'}, div);
    var sx = function (x) { return LEFT + (x - lo) / (hi - lo) * plotW; };
    procs.forEach(function (pr, i) {
      var y = top + i * LH;
      if (i % 2 === 0) el('rect', {x: LEFT, y: y, width: plotW + 180, height: LH, fill: '#f4f5f8'}, svg);
      txt(svg, LEFT - 6, y + LH - 12, 'p' + pr, 'lane-label', 'end');
    });
    // The faults in force, behind the ops.
    var names = {};
    v.faults.forEach(function (f) {
      names[f.id] = f.kind;
      if (f.e < lo || f.s > hi) return;
      var a = sx(Math.max(f.s, lo)), b = sx(Math.min(f.e, hi));
      var band = el('rect', {x: a, y: top, width: Math.max(2, b - a), height: procs.length * LH,
        fill: faultColor(f.kind), 'fill-opacity': 0.16, 'class': 'fault vfault'}, svg);
      tip(band, f.kind + ': ' + f.effect + '\n' + vsec(f.s) + ' – ' + (f.open ? 'end' : vsec(f.e)));
      txt(svg, a + 2, top - 5, f.kind + ' from ' + vsec(f.s), 'fault-label');
    });
    var labelEnd = {};  // per lane: where the last label ends
    var order = v.ops.slice().sort(function (x, y) { return x.s - y.s; });
    order.forEach(function (o) {
      var lane = procs.indexOf(o.process), y = top + lane * LH;
      var off = o.e < lo ? '← ' : o.s > hi ? '→ ' : '';  // beyond the window
      var a = sx(Math.max(lo, Math.min(hi, o.s))), b = sx(Math.max(lo, Math.min(hi, o.e)));
      var bar = el('rect', {x: a, y: y + LH - 14, width: Math.max(3, b - a), height: 10,
        fill: ROLE[o.role][0], stroke: o.role === 'rejected' ? '#7a1512' : 'none',
        'stroke-width': 1.5, 'class': 'vop ' + o.role}, svg);
      var under = (o.faults || []).map(function (id) { return names[id] || 'fault'; });
      var part = o.part ? partOf(v, o) : '';
      tip(bar, 'p' + o.process + (o.node ? ' on ' + o.node : '') + ' ' + o.d + '\nevent ' +
          o.index + ', ' + ROLE[o.role][1] + (part ? '; ' + part : '') + '\n' + vsec(o.s) +
          ' – ' + vsec(o.e) + (under.length ? '\nduring: ' + under.join(', ') : ''));
      // Labels that would run into the lane's previous one are left to the
      // tooltip, unless the op is the rejected one or named by the sentence.
      if (labelEnd[lane] !== undefined && a < labelEnd[lane] && o.role !== 'rejected' && !part) return;
      var label = off + (o.node ? o.node + ': ' : '') + o.d;
      var maxc = Math.max(14, Math.floor(Math.max(b - a, 170) / 6.2));
      if (label.length > maxc) label = label.slice(0, maxc - 1) + '…';
      var t = txt(svg, a, y + 14, label, 'vlabel');
      if (o.role === 'rejected') t.setAttribute('font-weight', '700');
      var when = vsec(o.s) + ' – ' + vsec(o.e) + (part ? ' · ' + part : '') +
          (under.length ? ' · during ' + under.join(', ') : '');
      txt(svg, a, y + 27, when, 'vtime');
      labelEnd[lane] = a + 6 * Math.max(label.length, when.length) + 8;
    });
    xAxis(svg, sx, top + procs.length * LH + 2, LEFT + plotW + RIGHT);
    var items = Object.keys(ROLE).map(function (k) { return [ROLE[k][1], ROLE[k][0]]; });
    if (v.faults.length) items.push(['fault in force (shaded)', 'rgba(108,142,191,0.3)']);
    legend(div, items);
    var btn = html('button', div, 'show this window in the timeline');
    btn.addEventListener('click', function () {
      setView(lo - (hi - lo), hi + (hi - lo));
      document.getElementById('timeline-section').scrollIntoView();
    });
  }

  // The frame of a lane chart (holders, leaders): shows section NAME, draws
  // an svg of class NAME in the element NAME with one striped, labelled lane
  // per entry of `labels` and the fault windows behind them; returns what
  // the caller draws with (div, svg, the x scale sx, top, lane height RH,
  // rows).
  function laneChart(name, labels) {
    document.getElementById(name + '-section').hidden = false;
    var div = document.getElementById(name);
    clear(div);
    var W = widthOf(div), rows = labels.length, RH = 20, top = 28;
    var H = top + rows * RH + 28, plotW = W - LEFT - RIGHT;
    var svg = el('svg', {width: W, height: H, 'class': name}, div);
    var k = plotW / (view.hi - view.lo);
    var sx = function (x) { return LEFT + (x - view.lo) * k; };
    for (var r = 0; r < rows; r++) {
      var y = top + r * RH;
      if (r % 2 === 0) el('rect', {x: LEFT, y: y, width: plotW, height: RH, fill: '#f4f5f8'}, svg);
      txt(svg, LEFT - 6, y + RH - 6, labels[r], 'lane-label', 'end');
    }
    faults(svg, sx, 2, top + rows * RH, true);
    return {div: div, svg: svg, sx: sx, top: top, RH: RH, rows: rows, W: W};
  }

  // --- holders (lock and election runs) -------------------------------------
  // Overlapping holds are red when the checker found them unsafe and grey
  // when fencing (or the absence of writes) made them harmless; a hold whose
  // token was granted twice or went backwards carries a red mark.
  function drawHolds() {
    var H0 = D.holds;
    if (!H0) return;
    var f = laneChart('holds', H0.rows);
    var div = f.div, svg = f.svg, sx = f.sx, top = f.top, RH = f.RH, rows = f.rows, W = f.W;
    H0.overlaps.forEach(function (o) {
      if (o.e < view.lo || o.s > view.hi) return;
      var a = sx(Math.max(o.s, view.lo)), b = sx(Math.min(o.e, view.hi));
      var band = el('rect', {x: a, y: top, width: Math.max(2, b - a), height: rows * RH,
        fill: o.unsafe ? '#c9302c' : '#7f8c8d', 'fill-opacity': o.unsafe ? 0.25 : 0.12,
        stroke: o.unsafe ? 'none' : '#7f8c8d', 'stroke-dasharray': '3,3',
        'class': 'overlap ' + (o.unsafe ? 'unsafe' : 'harmless')}, svg);
      tip(band, 'two holders of ' + o.lock + ': ' + fmtX(o.s) + ' – ' + fmtX(o.e) + '\n' +
          (o.unsafe ? 'unsafe: ' : 'harmless: ') + o.why);
    });
    var drawn = 0;
    H0.items.forEach(function (h) {
      if (h.e < view.lo || h.s > view.hi) return;
      var a = sx(Math.max(h.s, view.lo)), b = sx(Math.min(h.e, view.hi));
      if (drawn > 5000 && b - a < 1 && !h.bad) return;
      drawn++;
      var y = top + h.row * RH;
      var bar = el('rect', {x: a, y: y + 3, width: Math.max(1.5, b - a), height: RH - 6,
        fill: FCOL[h.lock % FCOL.length], 'fill-opacity': 0.75,
        stroke: h.bad ? '#c9302c' : 'none', 'stroke-width': 2,
        'class': 'hold' + (h.bad ? ' bad-token' : '')}, svg);
      var token = h.token === null ? '' : 'token/term ' + h.token;
      tip(bar, 'p' + h.p + ' held ' + H0.locks[h.lock] + (token ? ' (' + token + ')' : '') +
          '\n' + fmtX(h.s) + ' – ' + (h.open ? 'end' : fmtX(h.e)) + ', ended by ' + h.ended +
          (h.bad ? '\nunsafe: ' + h.bad_why : ''));
      if (h.token !== null && b - a > 28) txt(svg, a + 3, y + RH - 7, String(h.token), 'tick');
      if (h.bad) {
        var m = el('circle', {cx: a, cy: y + RH / 2, r: 5, fill: '#c9302c', stroke: '#7a1512',
          'class': 'token-mark ' + h.bad}, svg);
        tip(m, (h.bad === 'duplicate' ? 'token granted twice: ' : 'token went backwards: ') +
            h.bad_why);
      }
    });
    xAxis(svg, sx, top + rows * RH + 2, W);
    var items = H0.locks.map(function (l, i) { return [l, FCOL[i % FCOL.length]]; });
    items.push(['two holders at once, unsafe', 'rgba(201,48,44,0.4)'],
               ['two holders at once, harmless', 'rgba(127,140,141,0.3)'],
               ['token granted twice or backwards', '#c9302c']);
    legend(div, items);
  }

  // --- leaders (election runs, leader observations) ---------------------------
  function drawLeaders() {
    var L = D.leaders;
    if (!L) return;
    var f = laneChart('leaders', L.rows);
    var div = f.div, svg = f.svg, sx = f.sx, top = f.top, RH = f.RH, rows = f.rows, W = f.W;
    var bad = {};  // domain + ' ' + term of the terms with two leaders
    L.conflicts.forEach(function (c) { bad[c.domain + ' ' + c.term] = true; });
    L.dual.forEach(function (o) {
      if (o.e < view.lo || o.s > view.hi) return;
      var a = sx(Math.max(o.s, view.lo)), b = sx(Math.min(o.e, view.hi));
      var band = el('rect', {x: a, y: top, width: Math.max(2, b - a), height: rows * RH,
        fill: '#f0ad4e', 'fill-opacity': 0.3, 'class': 'dual'}, svg);
      tip(band, 'two nodes believed they led: ' + o.what + ', ' + fmtX(o.s) + ' – ' + fmtX(o.e));
    });
    var drawn = 0;
    L.items.forEach(function (h) {
      if (h.e < view.lo || h.s > view.hi) return;
      var a = sx(Math.max(h.s, view.lo)), b = sx(Math.min(h.e, view.hi));
      var clash = h.term !== null && bad[h.domain + ' ' + h.term];
      if (drawn > 5000 && b - a < 1 && !clash) return;
      drawn++;
      var y = top + h.row * RH;
      var col = h.term === null ? '#888' : FCOL[h.term % FCOL.length];
      var bar = el('rect', {x: a, y: y + 3, width: Math.max(1.5, b - a), height: RH - 6,
        fill: col, 'fill-opacity': 0.75, stroke: clash ? '#c9302c' : 'none', 'stroke-width': 2,
        'class': 'lead' + (clash ? ' conflict-term' : '')}, svg);
      tip(bar, L.rows[h.row] + ' led' + (h.term === null ? '' : ' term ' + h.term) + '\n' +
          fmtX(h.s) + ' – ' + fmtX(h.e) + (clash ? '\nunsafe: another node led this term too' : ''));
      if (h.term !== null && b - a > 28) txt(svg, a + 3, y + RH - 7, 'term ' + h.term, 'tick');
    });
    L.conflicts.forEach(function (c) {
      if (c.s < view.lo || c.s > view.hi) return;
      var x = sx(c.s);
      var m = el('line', {x1: x, x2: x, y1: top - 4, y2: top + rows * RH, stroke: '#c9302c',
        'stroke-width': 2, 'class': 'conflict'}, svg);
      tip(m, 'term ' + c.term + ' claimed by ' + c.nodes + ' (' + c.domain + ')');
    });
    xAxis(svg, sx, top + rows * RH + 2, W);
    legend(div, [['bar colour: term', '#1f77b4'], ['two believed leaders at once', 'rgba(240,173,78,0.5)'],
                 ['a term with two leaders', '#c9302c']]);
    if (!document.getElementById('terms')) drawTerms(L);
  }

  // The leaders of each term, the terms with two leaders first and marked.
  function drawTerms(L) {
    var sec = document.getElementById('leaders-section');
    html('h3', sec, 'Leaders per term');
    var table = html('table', sec, null, 'terms');
    table.id = 'terms';
    var head = html('tr', table);
    ['term', 'leaders', 'first led at', ''].forEach(function (s) { html('th', head, s); });
    L.terms.forEach(function (t) {
      var tr = html('tr', table, null, t.conflict ? 'conflict-term' : '');
      html('td', tr, 'term ' + t.term + (t.domain === 'observe' ? '' : ' (' + t.domain + ')'));
      html('td', tr, t.nodes.join(', '));
      html('td', tr, fmtX(t.s));
      html('td', tr, t.conflict ? 'unsafe: ' + t.nodes.length + ' leaders in one term' : '');
    });
    if (L.terms_more > 0) html('p', sec, '… and ' + L.terms_more + ' more terms', 'hint');
  }
)JS";
}

}  // namespace faultline::reports
