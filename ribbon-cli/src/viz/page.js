// The replay. Everything shown comes from the embedded record of the ribbon
// crate's own banding and back-substitution (see ribbon-cli/src/viz/trace.rs);
// this script only steps through it. The other settings of the controls are
// records of the crate too (ribbon-cli/src/viz/mod.rs, `variants`), and so
// are the space figures. The one thing computed here is the query: the key
// hash (XXPH3, ported) and the hasher's formulas, which the viz test checks
// against the crate.
(() => {
  'use strict';
  // Script errors, for the test driver's report (the page must have none).
  const ERRORS = [];
  window.addEventListener('error', (e) => ERRORS.push(String(e.message)));
  window.addEventListener('unhandledrejection', (e) => ERRORS.push(String(e.reason)));
  const D = JSON.parse(document.getElementById('data').textContent);
  const params = new URLSearchParams(location.hash.slice(1));
  const DRIVE = params.has('drive') ? JSON.parse(params.get('drive')) : null;
  // The settings shown: the page's own, or a variant (#v=columns,width,bits).
  const want = (DRIVE && DRIVE.v) || params.get('v');
  let V = null;
  if (want) {
    const [m, w, r] = String(want).split(',').map(Number);
    V = D.variants.find((x) => x.columns === m && x.width === w && x.result_bits === r && x.trace) || null;
  }
  const T = V ? V.trace : D.trace;
  const SPACE = V ? V.space : D.space;
  const W = T.width;
  const R = T.result_bits;
  const M = T.columns;
  const N = D.keys.length;
  const FINAL = T.attempts.length - 1;
  const BANDED = T.banded !== false;
  const RMASK = R >= 32 ? 0xffffffff : (1 << R) - 1;
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const keyName = (k) => {
    const t = D.keys[k].text;
    if (t === null) return 'hex:' + D.keys[k].hex;
    return t === '' ? '(empty key)' : t;
  };
  // Bit strings: bit 0 first, as the columns run (the legend says so).
  const bin = (v, n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += (v >>> i) & 1;
    return s;
  };
  const lowBit = (x) => (x === 0 ? -1 : 31 - Math.clz32(x & -x));

  // ---- The steps: one per recorded event.
  const PHASE = { init: 'init', retry: 'init', sort: 'sort', b: 'eliminate', x: 'eliminate', s: 'eliminate',
    z: 'eliminate', v: 'back-substitute', done: 'done', gaveup: 'done' };
  const steps = [];
  T.attempts.forEach((a, ai) => {
    steps.push({ t: ai === 0 ? 'init' : 'retry', a: ai });
    steps.push({ t: 'sort', a: ai });
    for (const s of a.steps) {
      steps.push({ t: s[0], a: ai, key: s[1], slot: s[2], coeff: s[3], res: s[4], other: s[5] });
    }
  });
  for (const v of T.back_subst) {
    steps.push({ t: 'v', a: FINAL, slot: v[0], key: v[1], coeff: v[2], res: v[3], val: v[4] });
  }
  steps.push({ t: BANDED ? 'done' : 'gaveup', a: FINAL });
  const isFailure = (s) => s.t === 'z' && (s.res & RMASK) !== 0;
  // Play stops here: a failure, a retry, and the first step of each phase.
  const stopsAt = (i) => i > 0 && (isFailure(steps[i]) || steps[i].t === 'retry' ||
    PHASE[steps[i].t] !== PHASE[steps[i - 1].t]);

  // ---- State after a number of steps, replayed from the start.
  function fresh() {
    return { i: -1, a: 0, order: [], rows: [], pivotAt: [], A: [], xors: 0, pivots: 0, failures: 0,
      cur: -1, prow: -1, pcol: -1, zero: new Set(), fail: -1, chain: [], step: null, msg: '', arith: null, kind: '' };
  }
  const copy = (r) => ({ base: r.base, bits: r.bits, res: r.res });
  function apply(st, s) {
    const at = T.attempts[s.a];
    st.step = s;
    st.cur = -1;
    st.prow = -1;
    st.pcol = -1;
    st.arith = null;
    st.kind = s.t;
    switch (s.t) {
      case 'init':
      case 'retry':
        st.a = s.a;
        st.rows = at.equations.map((e) => ({ base: e[0], bits: e[1], res: e[2] }));
        st.order = at.equations.map((_, k) => k);
        st.pivotAt = new Array(M).fill(-1);
        st.A = new Array(M).fill(null);
        st.xors = 0;
        st.pivots = 0;
        st.zero = new Set();
        st.fail = -1;
        st.chain = at.equations.map(() => []);
        st.msg = s.t === 'init'
          ? `${N} keys hashed with seed ${at.seed}: each row is a start column, ${W} coefficients (bit 0 is 1) and ${R} fingerprint bit(s), in key order.`
          : `Seed ${T.attempts[s.a - 1].seed} failed. Every key is hashed again with seed ${at.seed}: new rows, and the elimination starts over.`;
        break;
      case 'sort':
        st.order = at.order.slice();
        st.msg = 'Sorted by start column: the coefficients line up along a diagonal band, the ribbon.';
        break;
      case 'b': {
        st.cur = s.key;
        st.pcol = s.slot;
        st.chain[s.key] = [];
        const owner = st.pivotAt[s.slot];
        st.prow = owner;
        st.msg = `Adding row ${posOf(st, s.key)} (key ${keyName(s.key)}): its lowest 1 is in column ${s.slot}, ` +
          (owner >= 0 ? `which row ${posOf(st, owner)} (key ${keyName(owner)}) already pivots: XOR its row in.` : 'which has no pivot yet.');
        st.arith = { kind: 'row', slot: s.slot, rows: [{ role: 'hashed', key: s.key, r: copy(st.rows[s.key]) }] };
        break;
      }
      case 'x': {
        const before = copy(st.rows[s.key]);
        const pivot = copy(st.rows[s.other]);
        st.rows[s.key] = { base: s.slot, bits: s.coeff, res: s.res };
        st.chain[s.key].push(s.other);
        st.xors++;
        st.cur = s.key;
        st.prow = s.other;
        st.pcol = s.slot;
        const tz = lowBit(s.coeff);
        st.msg = `Row ${posOf(st, s.key)} (key ${keyName(s.key)}) ^= pivot row ${posOf(st, s.other)} (key ${keyName(s.other)}, column ${s.slot}): ` +
          (tz < 0 ? `no coefficient left, fingerprint ${bin(s.res, R)}.` : `its lowest 1 moves to column ${s.slot + tz}.`);
        st.arith = { kind: 'xor', slot: s.slot, rows: [
          { role: 'before', key: s.key, r: before },
          { role: 'pivot', key: s.other, r: pivot },
          { role: 'after', key: s.key, r: { base: s.slot, bits: s.coeff, res: s.res } }] };
        break;
      }
      case 's':
        st.rows[s.key] = { base: s.slot, bits: s.coeff, res: s.res };
        st.pivotAt[s.slot] = s.key;
        st.pivots++;
        st.cur = s.key;
        st.pcol = s.slot;
        st.msg = `Column ${s.slot} had no pivot: row ${posOf(st, s.key)} (key ${keyName(s.key)}) is stored there and pivots it.`;
        st.arith = { kind: 'store', slot: s.slot, rows: [{ role: 'stored', key: s.key, r: copy(st.rows[s.key]) }] };
        break;
      case 'z': {
        st.rows[s.key] = { base: st.rows[s.key].base, bits: 0, res: s.res };
        st.zero.add(s.key);
        st.cur = s.key;
        const e = at.equations[s.key];
        const rows = [{ role: 'hashed', key: s.key, r: { base: e[0], bits: e[1], res: e[2] } }];
        for (const o of st.chain[s.key]) rows.push({ role: 'pivot', key: o, r: copy(st.rows[o]) });
        st.arith = { kind: (s.res & RMASK) !== 0 ? 'fail' : 'redundant', slot: e[0], rows, res: s.res };
        if ((s.res & RMASK) !== 0) {
          st.failures++;
          st.fail = s.key;
          st.msg = `Contradiction: row ${posOf(st, s.key)} (key ${keyName(s.key)}) reduced to 0 = ${bin(s.res, R)}: its hashed row and the ` +
            `${rows.length - 1} pivot row(s) below sum to 0 = ${bin(s.res, R)}. No bit array satisfies every key with seed ${at.seed}` +
            (s.a < FINAL || !BANDED ? '; the construction retries with the next seed.' : '.');
        } else {
          st.msg = `Row ${posOf(st, s.key)} (key ${keyName(s.key)}) reduced to 0 = 0: redundant (it follows from the rows below), nothing is stored.`;
        }
        break;
      }
      case 'v': {
        st.A[s.slot] = s.val;
        st.prow = s.key;
        st.pcol = s.slot;
        if (s.key >= 0) {
          const sel = [];
          for (let k = 1; k < W; k++) if ((s.coeff >>> k) & 1) sel.push(s.slot + k);
          let par = 0;
          for (const c of sel) par ^= st.A[c];
          st.msg = `A[${s.slot}] = fingerprint ${bin(s.res, R)} XOR parity ${bin(par, R)} of A at columns {${sel.join(', ')}} = ${bin(s.val, R)}` +
            ` (pivot row ${posOf(st, s.key)}, key ${keyName(s.key)}).`;
          st.arith = { kind: 'solve', slot: s.slot, sel, par, res: s.res, val: s.val,
            rows: [{ role: 'row', key: s.key, r: { base: s.slot, bits: s.coeff, res: s.res } }] };
        } else {
          st.msg = `Column ${s.slot} has no pivot: it is free, and set to ${bin(s.val, R)}.`;
          st.arith = { kind: 'free', slot: s.slot, val: s.val, rows: [] };
        }
        break;
      }
      case 'done':
        st.msg = `Done: the bit array satisfies all ${N} equations. Type a key below to query it.`;
        break;
      case 'gaveup':
        st.msg = `None of the ${T.failed_seeds} seeds tried bands these ${N} keys into ${M} columns ` +
          `(the first ${T.attempts.length} are replayed): too few columns for width ${W}. Choose more columns.`;
        break;
      default:
        break;
    }
  }
  function posOf(st, k) {
    return st.order.indexOf(k);
  }
  function stateAt(i) {
    const st = fresh();
    for (let j = 0; j <= i; j++) apply(st, steps[j]);
    st.i = i;
    return st;
  }

  // ---- Sizes: the board fits the screen's width, and on a wide screen its
  // height too (so A, the explanation and the pivot row are seen together).
  const wide = () => window.innerWidth > 980;
  const labW = () => (wide() ? 96 : 62);
  function cellSize() {
    const left = $('left').getBoundingClientRect();
    const availW = left.width - labW() - 6 - 2;
    const byW = Math.floor(availW / (M + R + 0.5)) - 1;
    let c = byW;
    if (wide()) {
      const top = left.top + window.scrollY;
      const availH = window.innerHeight - top - 14 - 48 - 12;
      c = Math.min(c, Math.floor(availH / (N + 2 * R)) - 1);
    }
    return Math.max(3, Math.min(14, c));
  }
  let size = 0;
  let labelStride = 1;
  function layout() {
    size = cellSize();
    document.documentElement.style.setProperty('--c', size + 'px');
    document.documentElement.style.setProperty('--lab', labW() + 'px');
    document.body.classList.toggle('small', size < 9);
    labelStride = Math.max(1, Math.ceil(12 / (size + 1)));
    // The column axis: a number every `step` columns, far enough apart.
    const axis = $('axis');
    axis.textContent = '';
    let stepCols = 1;
    while (stepCols * (size + 1) < 22) stepCols *= 2;
    for (let c = 0; c < M; c += stepCols) {
      const t = axis.appendChild(el('span', '', String(c)));
      t.style.left = c * (size + 1) + 'px';
    }
    const fph = axis.appendChild(el('span', 'fph', R > 1 ? 'b (bit 0 first)' : 'b'));
    fph.style.left = M * (size + 1) + 6 + 'px';
    fph.title = 'the fingerprint: the right-hand side of each row\'s equation' + (R > 1 ? ', bit 0 first' : '');
    axis.title = 'columns (slots) 0..' + (M - 1);
  }

  // ---- The board, built once; cells get classes per step.
  const labels = [];
  const cells = [];
  const fpCells = [];
  const rowEls = [];
  for (let p = 0; p < N; p++) {
    const lab = $('labels').appendChild(el('div'));
    labels.push(lab);
    const row = $('matrix').appendChild(el('div', 'mrow'));
    const fr = $('fp').appendChild(el('div', 'mrow'));
    row.dataset.p = p;
    rowEls.push([row, fr]);
    const rc = [];
    for (let c = 0; c < M; c++) {
      const x = row.appendChild(el('span', 'cell'));
      x.dataset.p = p;
      x.dataset.c = c;
      rc.push(x);
    }
    cells.push(rc);
    const fc = [];
    for (let j = 0; j < R; j++) {
      const x = fr.appendChild(el('span', 'fpcell'));
      x.dataset.p = p;
      x.dataset.j = j;
      fc.push(x);
    }
    fpCells.push(fc);
  }
  const bitCells = [];
  const qCells = [];
  for (let j = 0; j < R; j++) {
    const br = $('bits').appendChild(el('div', 'bitrow'));
    const qr = $('query-row').appendChild(el('div', 'bitrow'));
    const bc = [];
    const qc = [];
    for (let c = 0; c < M; c++) {
      const b = br.appendChild(el('span', 'bit'));
      b.dataset.c = c;
      bc.push(b);
      qc.push(qr.appendChild(el('span', 'bit')));
    }
    bitCells.push(bc);
    qCells.push(qc);
  }
  const setClass = (e, cls) => {
    if (e.className !== cls) e.className = cls;
  };
  const setText = (e, t) => {
    if (e.textContent !== t) e.textContent = t;
  };

  let st = stateAt(0);
  let query = null;
  let bySlot = false;
  let hoverMsg = null;

  // The rows in drawing order: by start (the replay's order), or by the slot
  // each stored row pivots (the upper-triangular system), the rest after.
  function drawOrder() {
    if (!bySlot) return st.order;
    const out = [];
    for (let c = 0; c < M; c++) if (st.pivotAt[c] >= 0) out.push(st.pivotAt[c]);
    const seen = new Set(out);
    for (const k of st.order) if (!seen.has(k)) out.push(k);
    return out;
  }

  function arithTable(a) {
    const box = $('arith');
    box.textContent = '';
    box.dataset.kind = a ? a.kind : '';
    if (!a || a.rows.length === 0) {
      if (a && a.kind === 'free') box.appendChild(el('div', 'eq', `A[${a.slot}] = ${bin(a.val, R)} (free column)`));
      return;
    }
    let lo = Infinity;
    let hi = -1;
    for (const x of a.rows) {
      lo = Math.min(lo, x.r.base);
      hi = Math.max(hi, x.r.base + W - 1);
    }
    if (a.kind === 'xor') lo = a.slot;
    hi = Math.min(hi, M - 1);
    const tbl = box.appendChild(el('table'));
    const head = tbl.appendChild(el('tr'));
    head.appendChild(el('th', 'lab', 'column'));
    for (let c = lo; c <= hi; c++) head.appendChild(el('th', '', String(c % 100)));
    head.appendChild(el('th', 'lab', R > 1 ? 'b (bit 0 first)' : 'b'));
    const roleName = { before: 'row before', pivot: 'pivot row', after: 'new row', hashed: 'hashed row', stored: 'stored row',
      row: 'pivot row' };
    const addRow = (role, key, r, cls) => {
      const tr = tbl.appendChild(el('tr', cls || ''));
      const name = key >= 0 ? `${roleName[role] || role} ${posOf(st, key)}` : roleName[role] || role;
      const lab = tr.appendChild(el('td', 'lab', name));
      if (key >= 0) lab.title = 'key ' + keyName(key);
      let bits = '';
      for (let c = lo; c <= hi; c++) {
        const off = c - r.base;
        const v = off >= 0 && off < 32 ? (r.bits >>> off) & 1 : 0;
        bits += v;
        tr.appendChild(el('td', 'b' + v, String(v)));
      }
      tr.appendChild(el('td', 'fp', bin(r.res, R)));
      Object.assign(tr.dataset, { role, key, lo, bits, fp: bin(r.res, R), base: r.base, coeff: r.bits, res: r.res });
    };
    for (const x of a.rows) addRow(x.role, x.key, x.r, x.role === 'after' ? 'sum' : '');
    if (a.kind === 'fail' || a.kind === 'redundant') {
      let acc = 0;
      let accRes = 0;
      // The sum of the chain over the window (JS numbers: at most 53 bits
      // wide windows are summed exactly; wider ones are summed per column).
      const sum = [];
      for (let c = lo; c <= hi; c++) {
        let v = 0;
        for (const x of a.rows) {
          const off = c - x.r.base;
          if (off >= 0 && off < 32) v ^= (x.r.bits >>> off) & 1;
        }
        sum.push(v);
      }
      for (const x of a.rows) accRes ^= x.r.res;
      acc = sum.some((v) => v);
      const tr = tbl.appendChild(el('tr', 'sum'));
      tr.appendChild(el('td', 'lab', 'sum'));
      for (const v of sum) tr.appendChild(el('td', 'b' + v, String(v)));
      tr.appendChild(el('td', 'fp' + (accRes ? ' bad' : ''), bin(accRes, R)));
      Object.assign(tr.dataset, { role: 'sum', bits: sum.join(''), fp: bin(accRes, R), lo });
      box.appendChild(el('div', 'eq' + (accRes ? ' bad' : ''), acc ? '' : `0 = ${bin(accRes, R)}` +
        (accRes ? ': a contradiction. These rows cannot all hold.' : ': redundant.')));
    }
    if (a.kind === 'solve') {
      const tr = tbl.appendChild(el('tr', 'sel'));
      tr.appendChild(el('td', 'lab', 'A read'));
      const reads = [];
      for (let c = lo; c <= hi; c++) {
        const on = a.sel.includes(c);
        const v = on ? st.A[c] : null;
        if (on) reads.push([c, v]);
        tr.appendChild(el('td', on ? 'b' + (v & 1) : '', on ? bin(v, R) : ''));
      }
      tr.appendChild(el('td', 'fp', ''));
      Object.assign(tr.dataset, { role: 'reads', reads: JSON.stringify(reads) });
      const eq = box.appendChild(el('div', 'eq',
        `A[${a.slot}] = b ${bin(a.res, R)} XOR parity ${bin(a.par, R)} = ${bin(a.val, R)}`));
      Object.assign(eq.dataset, { slot: a.slot, res: a.res, par: a.par, val: a.val });
    }
  }

  function render() {
    const s = st.step;
    const phase = PHASE[s.t];
    const at = T.attempts[st.a];
    const order = drawOrder();
    const qRow = query && query.member >= 0 ? query.member : -1;
    for (let p = 0; p < N; p++) {
      const k = order[p];
      const r = k === qRow ? { base: query.start, bits: query.coeff, res: query.result } : st.rows[k];
      let rowCls = 'mrow';
      if (k === qRow) rowCls += ' row-query';
      else if (k === st.cur) rowCls += s.t === 's' ? ' row-store' : ' row-cur';
      if (k === st.prow && k !== qRow) rowCls += ' row-prow';
      if (k === st.fail) rowCls += ' row-fail';
      else if (st.zero.has(k) && k !== qRow) rowCls += ' row-dead';
      setClass(rowEls[p][0], rowCls);
      setClass(rowEls[p][1], rowCls);
      rowEls[p][0].dataset.key = k;
      const lab = labels[p];
      const name = keyName(k);
      const show = p % labelStride === 0;
      const txt = show ? (bySlot && st.rows[k] && st.pivotAt[st.rows[k].base] === k ? `s${st.rows[k].base} ` : `${p} `) : '';
      const want = show ? txt + name : '';
      if (lab.dataset.t !== want) {
        lab.dataset.t = want;
        lab.textContent = '';
        if (show) {
          const sp = lab.appendChild(el('span'));
          sp.appendChild(el('b', 'rn', txt));
          sp.appendChild(document.createTextNode(name));
        }
      }
      lab.title = `row ${p}: key ${name}`;
      lab.dataset.name = name;
      setClass(lab, k === st.cur ? 'cur' : k === st.prow || k === qRow ? 'prow' : '');
      const lo = r.base;
      const bandLo = r.bits === 0 && st.zero.has(k) && k !== qRow ? -1 : lo;
      for (let c = 0; c < M; c++) {
        const off = c - lo;
        const one = off >= 0 && off < W && ((r.bits >>> off) & 1) === 1;
        let cls = 'cell';
        if (one) cls += ' one';
        else if (bandLo >= 0 && c >= bandLo && c < bandLo + W) cls += ' band';
        if (one && st.pivotAt[c] === k && k !== qRow) cls += ' piv';
        if (c === st.pcol) cls += ' pcol';
        setClass(cells[p][c], cls);
      }
      for (let j = 0; j < R; j++) {
        const v = (r.res >>> j) & 1;
        setClass(fpCells[p][j], 'fpcell ' + (v ? 'one' : 'zero'));
        setText(fpCells[p][j], String(v));
      }
    }
    // The bit array, and what the current step reads from it.
    const sel = new Set();
    if (s.t === 'v' && s.key >= 0) for (let k = 1; k < W; k++) if ((s.coeff >>> k) & 1) sel.add(s.slot + k);
    for (let j = 0; j < R; j++) {
      for (let c = 0; c < M; c++) {
        const v = st.A[c];
        let cls = 'bit';
        if (v !== null) cls += ' v' + ((v >>> j) & 1);
        if (s.t === 'v' && c === s.slot) cls += ' now';
        if (sel.has(c) || (query && query.sel.has(c))) cls += ' sel';
        setClass(bitCells[j][c], cls);
        setText(bitCells[j][c], v === null ? '' : String((v >>> j) & 1));
      }
    }
    const prowPos = st.prow >= 0 ? order.indexOf(st.prow) : -1;
    const status = $('status');
    status.textContent = `phase ${phase} · pivot row ${prowPos >= 0 ? prowPos : '–'} · pivot col ${st.pcol >= 0 ? st.pcol : '–'}` +
      ` · xors ${st.xors} · pivots ${st.pivots}/${N} · failures ${st.failures} · seed ${at.seed}` +
      ` · step ${st.i + 1}/${steps.length}`;
    Object.assign(status.dataset, { phase, step: st.i, pivots: st.pivots, failures: st.failures, seed: at.seed,
      pcol: st.pcol, prow: prowPos, kind: isFailure(s) ? 'fail' : s.t });
    $('explain').textContent = hoverMsg || st.msg;
    arithTable(st.arith);
    $('play').textContent = timer ? 'Pause' : st.i === steps.length - 1 ? 'Replay' : 'Play';
    $('order').textContent = bySlot ? 'rows: by slot' : 'rows: by start';
  }

  // Keeps the pivot row (or the current one) on screen. Row positions are
  // computed from the board's place (measured once per layout), so that a
  // step never forces a layout of the whole board.
  let boardTop = 0;
  let bitsTop = 0;
  function measure() {
    boardTop = $('matrix').getBoundingClientRect().top + window.scrollY;
    bitsTop = $('bits-wrap').getBoundingClientRect().top + window.scrollY;
  }
  function reveal() {
    const k = st.prow >= 0 ? st.prow : st.cur;
    if (k < 0) return;
    const p = drawOrder().indexOf(k);
    if (p < 0) return;
    const top = boardTop + p * (size + 1) - window.scrollY;
    const bottom = top + size;
    const limit = Math.min(window.innerHeight, bitsTop - window.scrollY);
    if (top < 0) window.scrollTo(window.scrollX, boardTop + p * (size + 1) - 4);
    else if (bottom > limit) window.scrollTo(window.scrollX, boardTop + p * (size + 1) + size - window.innerHeight + 4);
  }

  // ---- Controls.
  let timer = null;
  function go(i) {
    i = Math.max(0, Math.min(steps.length - 1, i));
    st = i === st.i + 1 ? (apply(st, steps[i]), (st.i = i), st) : stateAt(i);
    hoverMsg = null;
    if (i < steps.length - 1 && query) clearQuery(true);
    render();
    reveal();
  }
  const delay = () => Math.round(1000 * Math.pow(0.955, Number($('speed').value)));
  function tick() {
    if (st.i >= steps.length - 1) {
      pause();
      return;
    }
    go(st.i + 1);
    if (stopsAt(st.i)) {
      pause();
      return;
    }
    timer = setTimeout(tick, delay());
  }
  function pause() {
    if (timer) clearTimeout(timer);
    timer = null;
    render();
  }
  function play() {
    if (timer) return pause();
    if (st.i >= steps.length - 1) go(0);
    timer = setTimeout(tick, 0);
    render();
  }
  const firstStep = (pred) => Math.max(0, steps.findIndex(pred));
  const phaseStart = {
    sort: () => firstStep((s) => s.t === 'sort' && s.a === FINAL),
    eliminate: () => firstStep((s) => s.t === 'b' && s.a === FINAL),
    'back-substitute': () => (BANDED ? firstStep((s) => s.t === 'v') : steps.length - 1),
    done: () => steps.length - 1,
    fail: () => firstStep(isFailure),
  };
  $('play').onclick = play;
  $('back').onclick = () => { pause(); go(st.i - 1); };
  $('fwd').onclick = () => { pause(); go(st.i + 1); };
  $('restart').onclick = () => { pause(); go(0); };
  $('end').onclick = () => { pause(); go(steps.length - 1); };
  $('order').onclick = () => { bySlot = !bySlot; render(); };
  for (const b of document.querySelectorAll('[data-phase]')) {
    b.onclick = () => {
      pause();
      go(phaseStart[b.dataset.phase]());
      if (b.dataset.phase === 'done' && BANDED) {
        $('qkey').focus({ preventScroll: true });
        $('query').scrollIntoView({ block: 'nearest' });
      }
    };
  }
  document.addEventListener('keydown', (e) => {
    // Keys belong to the focused control: typing, the slider's arrows, a
    // button's space.
    const t = e.target;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA')) return;
    if (e.key === ' ') {
      if (t && t.tagName === 'BUTTON') return;
      e.preventDefault();
      play();
    }
    if (e.key === 'ArrowRight') { e.preventDefault(); pause(); go(st.i + 1); }
    if (e.key === 'ArrowLeft') { e.preventDefault(); pause(); go(st.i - 1); }
  });

  // ---- Settings: each choice is a construction the crate recorded.
  const cur = { columns: M, width: W, result_bits: R };
  const uniq = (f) => [...new Set(D.variants.map(f))].sort((a, b) => a - b);
  function fillSelect(id, field, values) {
    const s = $(id);
    for (const v of values) {
      const o = s.appendChild(el('option', '', String(v)));
      o.value = v;
      const probe = { ...cur, [field]: v };
      const va = D.variants.find((x) => x.columns === probe.columns && x.width === probe.width && x.result_bits === probe.result_bits);
      const main = probe.columns === D.trace.columns && probe.width === D.trace.width && probe.result_bits === D.trace.result_bits;
      if (!va && !main) o.disabled = true;
      else if (va && !va.trace && !main) o.disabled = true;
      if (va && !va.banded) o.textContent += ' (fails)';
      if (va && !va.trace && !main) o.textContent += ' (not embedded)';
    }
    s.value = cur[field];
    s.onchange = () => {
      const probe = { ...cur, [field]: Number(s.value) };
      const main = probe.columns === D.trace.columns && probe.width === D.trace.width && probe.result_bits === D.trace.result_bits;
      location.hash = main ? '' : `v=${probe.columns},${probe.width},${probe.result_bits}`;
      location.reload();
    };
  }
  fillSelect('set-columns', 'columns', uniq((x) => x.columns).concat(D.trace.columns).filter((v, i, a) => a.indexOf(v) === i).sort((a, b) => a - b));
  fillSelect('set-width', 'width', uniq((x) => x.width));
  fillSelect('set-bits', 'result_bits', uniq((x) => x.result_bits));

  // ---- Explanations: on hover, and on tap or click (touch screens have no hover).
  function explainAt(target) {
    const d = target.dataset;
    if (d.c !== undefined && d.p !== undefined) {
      const p = Number(d.p);
      const k = drawOrder()[p];
      const c = Number(d.c);
      const r = st.rows[k];
      const e0 = T.attempts[st.a].equations[k];
      const off = c - r.base;
      const v = off >= 0 && off < W ? (r.bits >>> off) & 1 : 0;
      let t = `Row ${p}, key ${keyName(k)} (hashed start ${e0[0]}), column ${c}: coefficient ${v}. `;
      if (st.zero.has(k)) t += 'This row was eliminated to nothing.';
      else if (off >= 0 && off < W) t += `Its current band is columns ${r.base}..${r.base + W - 1}.`;
      else t += 'Outside its band: always 0.';
      if (st.pivotAt[c] === k) t += ` It is the pivot of column ${c}: back-substitution solves A[${c}] from it.`;
      else if (st.pivotAt[c] >= 0) t += ` Column ${c} is pivoted by row ${posOf(st, st.pivotAt[c])} (key ${keyName(st.pivotAt[c])}).`;
      return t;
    }
    if (d.j !== undefined && d.p !== undefined) {
      const k = drawOrder()[Number(d.p)];
      return `Fingerprint bit ${d.j} of key ${keyName(k)}: the right-hand side b of its equation` +
        (st.rows[k].res !== T.attempts[st.a].equations[k][2] ? ', as changed by the XORs so far.' : ' (from its hash).');
    }
    if (d.c !== undefined) {
      const c = Number(d.c);
      const v = st.A[c];
      const piv = st.pivotAt[c];
      return v === null
        ? `A[${c}] is not solved yet: back-substitution goes from column ${M - 1} down to 0.`
        : piv >= 0
          ? `A[${c}] = ${bin(v, R)}: solved from the pivot row of ${keyName(piv)}.`
          : `A[${c}] = ${bin(v, R)}: no row pivots column ${c}, so it is free and set to 0.`;
    }
    return null;
  }
  for (const id of ['matrix', 'fp', 'bits']) {
    const b = $(id);
    b.addEventListener('mouseover', (e) => {
      const t = explainAt(e.target);
      if (t) { hoverMsg = t; $('explain').textContent = t; }
    });
    b.addEventListener('click', (e) => {
      const t = explainAt(e.target);
      if (t) { hoverMsg = t; $('explain').textContent = t; $('explain').dataset.tapped = '1'; }
    });
    b.addEventListener('mouseleave', () => { hoverMsg = null; $('explain').textContent = st.msg; });
  }

  // ---- Hashing, as ribbon::core::hasher::Hasher does.
  const M64 = (1n << 64n) - 1n;
  const REHASH = 0x6193d459236a3a0dn;
  const COEFF = 0xc28f82822b650bedn;
  const COEFF_XOR = 0xc367844a6e52731dn;
  const rehash = (kh, raw) => ((kh ^ BigInt(raw)) * REHASH) & M64;
  const fastRange = (h, n) => Number((h * BigInt(n)) >> 64n);
  function coeffRow(h, w) {
    const a = (h * COEFF) & M64;
    const c = w > 64 ? (a << 64n) ^ (a ^ COEFF_XOR) : a;
    return (c & ((1n << BigInt(w)) - 1n)) | 1n;
  }
  function resultRow(h) {
    const a = (h * COEFF) & M64;
    let v = 0n;
    for (let i = 0n; i < 8n; i++) v = (v << 8n) | ((a >> (8n * i)) & 0xffn);
    return Number(v & 0xffffffffn);
  }
  function parity(x) {
    let p = 0;
    while (x) {
      x &= x - 1n;
      p ^= 1;
    }
    return p;
  }
  function keyBytes(text) {
    if (text.startsWith('hex:')) {
      const h = text.slice(4).trim();
      if (h.length % 2 !== 0 || /[^0-9a-fA-F]/.test(h)) return null;
      return new Uint8Array(h.match(/../g) ? h.match(/../g).map((x) => parseInt(x, 16)) : []);
    }
    return new TextEncoder().encode(text);
  }
  const hexOf = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

  // ---- The Standard128 view.
  const I = D.icml;
  const fbytes = new Uint8Array((I.filter_hex.match(/../g) || []).map((x) => parseInt(x, 16)));
  const M128 = (1n << 128n) - 1n;
  function seg128(s) {
    let v = 0n;
    for (let i = 15; i >= 0; i--) v = (v << 8n) | BigInt(fbytes[s * 16 + i] || 0);
    return v;
  }
  function icmlSite(start) {
    const b = Math.floor(start / 128);
    let cols = I.upper_num_columns;
    const seg = b * cols - Math.min(b, I.upper_start_block);
    if (b < I.upper_start_block) cols--;
    return { seg, cols, sb: start % 128 };
  }
  function icmlQuery(kh) {
    const h = rehash(kh, I.raw_seed);
    const start = fastRange(h, I.num_starts);
    const cr = coeffRow(h, 128);
    const expected = resultRow(h);
    const site = icmlSite(start);
    const crl = (cr << BigInt(site.sb)) & M128;
    const crr = site.sb === 0 ? 0n : cr >> BigInt(128 - site.sb);
    let ok = true;
    for (let i = 0; i < site.cols; i++) {
      let x = seg128(site.seg + i) & crl;
      if (site.sb !== 0) x ^= seg128(site.seg + site.cols + i) & crr;
      if (parity(x) !== ((expected >>> i) & 1)) ok = false;
    }
    return { start, site, crl, crr, ok };
  }
  const segRows = [];
  (function buildIcml() {
    const total = fbytes.length;
    const lede = $('icml-lede');
    lede.textContent = `Standard128 Ribbon, built by the crate as RocksDB builds it for ribbonfilter:${I.bits_per_key}` +
      ` (whose FP target is 1 in ${I.desired_one_in_fp_rate.toFixed(1)} at scale). For these ${I.num_keys} keys it is` +
      ` ${total} bytes, ${I.real_bits_per_key.toFixed(1)} bits/key, not ${I.bits_per_key}: RocksDB's slot table asks for` +
      ` ${I.table_slots} slots, and a Ribbon filter has at least two blocks of 128 slots (${I.num_slots} here), so a small` +
      ` filter stores far more than it needs; the crate estimates its FP rate at 1 in ${I.estimated_one_in_fp_rate.toFixed(1)}.` +
      ` RocksDB itself writes a Bloom filter instead this small. Ribbon width 128, ${I.num_blocks} blocks, seed ${I.seed}.` +
      ' Each block stores one 16-byte segment per result column, column after column (interleaved column-major): ' +
      (I.upper_start_block === 0 ? `every block has ${I.upper_num_columns} columns` : `blocks from ${I.upper_start_block} on have` +
        ` ${I.upper_num_columns} columns, earlier ones ${I.upper_num_columns - 1}`) + `. ${I.num_segments} segments, and a` +
      ' 5-byte trailer. A query reads, per column, one segment (start at a block boundary) or two adjacent ones.';
    Object.assign(lede.dataset, { bytes: total, bitsPerKey: I.real_bits_per_key.toFixed(1), keys: I.num_keys });
    for (let b = 0; b < I.num_blocks; b++) {
      const site = icmlSite(b * 128);
      for (let j = 0; j < site.cols; j++) {
        const s = site.seg + j;
        const row = $('icml-grid').appendChild(el('div', 'seg'));
        row.appendChild(el('span', 'lab', `block ${b} col ${j} · seg ${s} · bytes ${s * 16}..${s * 16 + 15}`));
        const bitsEl = [];
        const v = seg128(s);
        for (let k = 0; k < 128; k++) {
          const x = row.appendChild(el('span', 'b' + ((v >> BigInt(k)) & 1n ? ' v1' : '') + (k % 8 === 0 ? ' byte0' : '')));
          x.title = `slot ${b * 128 + k}, column ${j}: byte ${s * 16 + (k >> 3)} bit ${k & 7}`;
          bitsEl.push(x);
        }
        segRows[s] = { row, bitsEl, v };
      }
      $('icml-grid').appendChild(el('div', 'blocksep'));
    }
    const lines = [];
    for (let o = 0; o < total; o += 16) {
      const part = Array.from(fbytes.slice(o, o + 16), (x) => x.toString(16).padStart(2, '0')).join(' ');
      lines.push(`${String(o).padStart(4, '0')}  ${part}${o + 16 >= total ? '   (last 5: marker 0xfe, seed, blocks u24)' : ''}`);
    }
    $('icml-bytes').textContent = lines.join('\n');
  })();
  // A tap (or click) on a stored bit says where it is: touch has no tooltips.
  $('icml-grid').addEventListener('click', (e) => {
    if (e.target.title) $('icml-tap').textContent = e.target.title;
  });
  function showIcml(q) {
    for (const s in segRows) {
      const r = segRows[s];
      r.row.classList.remove('read');
      for (let k = 0; k < 128; k++) r.bitsEl[k].classList.remove('hit');
    }
    if (!q) return;
    const { site, crl, crr } = q;
    for (let i = 0; i < site.cols; i++) {
      const l = segRows[site.seg + i];
      l.row.classList.add('read');
      for (let k = 0; k < 128; k++) if ((crl >> BigInt(k)) & 1n) l.bitsEl[k].classList.add('hit');
      if (site.sb !== 0) {
        const r = segRows[site.seg + site.cols + i];
        r.row.classList.add('read');
        for (let k = 0; k < 128; k++) if ((crr >> BigInt(k)) & 1n) r.bitsEl[k].classList.add('hit');
      }
    }
  }

  // ---- The space figure (numbers computed by the crate, in mod.rs).
  (function buildSpace() {
    const S = SPACE;
    const oneIn = Math.round(1 / S.fp_rate);
    $('space-lede').textContent = `These ${S.keys} keys in ${M} columns of ${R} bit(s): ${S.bits} bits, ` +
      `${S.bits_per_key.toFixed(2)} bits/key for an FP rate of 2^-${R} = 1 in ${oneIn}. No filter can do with fewer than ` +
      `log2(1/FP) = ${S.bound_bits_per_key.toFixed(2)} bits/key; a Bloom filter needs ${S.bloom_bits_per_key.toFixed(2)} ` +
      `(${S.bloom_probes} probe(s)), ${(S.bloom_bits_per_key / S.bound_bits_per_key).toFixed(2)} times the bound, ` +
      `and this Ribbon ${(S.bits_per_key / S.bound_bits_per_key).toFixed(2)} times: the overhead is only the spare columns.`;
    const bars = $('space-bars');
    const maxv = Math.max(S.bits_per_key, S.bloom_bits_per_key, S.bound_bits_per_key);
    const bar = (label, v, cls, key) => {
      bars.appendChild(el('span', '', label));
      const b = bars.appendChild(el('div', 'bar ' + cls, v.toFixed(2)));
      b.style.width = (100 * v / maxv).toFixed(1) + '%';
      b.dataset[key] = v.toFixed(2);
      b.id = 'space-' + key;
    };
    bar(`Ribbon (${M} × ${R} bits / ${S.keys} keys)`, S.bits_per_key, '', 'ribbon');
    bar('information-theoretic bound', S.bound_bits_per_key, 'bound', 'bound');
    bar(`Bloom filter, same FP rate (${S.bloom_probes} probes)`, S.bloom_bits_per_key, 'bloom', 'bloom');
    const tbl = el('table');
    const h = tbl.appendChild(el('tr'));
    for (const t of ['columns', 'columns per key', 'bits/key', 'failed seeds']) h.appendChild(el('th', '', t));
    const rows = D.variants.filter((x) => x.width === W && x.result_bits === R);
    for (const v of rows) {
      const tr = tbl.appendChild(el('tr', v.columns === M ? 'cur' : ''));
      tr.appendChild(el('td', '', String(v.columns)));
      tr.appendChild(el('td', '', (v.columns / N).toFixed(2)));
      tr.appendChild(el('td', '', v.space.bits_per_key.toFixed(2)));
      tr.appendChild(el('td', '', v.banded ? String(v.failed_seeds) : `all ${v.failed_seeds}`));
      tr.dataset.columns = v.columns;
      tr.dataset.failed = v.failed_seeds;
    }
    $('fail-table').appendChild(tbl);
  })();

  // ---- Query mode.
  function clearQuery(stepped) {
    query = null;
    for (const row of qCells) for (const c of row) setClass(c, 'bit'), setText(c, '');
    const a = $('query-answer');
    a.textContent = stepped ? 'The query was cleared: the bit array is complete only at the end (jump to query).' : '';
    a.dataset.answer = '';
    if (stepped) $('qkey').value = '';
    $('icml-answer').textContent = '';
    showIcml(null);
  }
  function runQuery() {
    const text = $('qkey').value;
    const a = $('query-answer');
    if (!BANDED) {
      a.textContent = 'No seed banded these keys with these settings: there is no filter to query.';
      return;
    }
    if (text === '') return clearQuery(false), render();
    const bytes = keyBytes(text);
    if (!bytes) {
      clearQuery(false);
      a.textContent = 'hex: needs an even number of hex digits';
      render();
      return;
    }
    if (st.i !== steps.length - 1) {
      pause();
      go(steps.length - 1);
    }
    const kh = XXPH3(bytes);
    const at = T.attempts[FINAL];
    const h = rehash(kh, at.raw_seed);
    const start = fastRange(h, T.num_starts);
    const cr = Number(coeffRow(h, W));
    const b = resultRow(h) & RMASK;
    let val = 0;
    const sel = new Set();
    for (let k = 0; k < W; k++) {
      if ((cr >>> k) & 1) {
        sel.add(start + k);
        val ^= st.A[start + k];
      }
    }
    const hx = hexOf(bytes);
    const member = D.keys.findIndex((x) => x.hex === hx);
    query = { sel, member, start, coeff: cr, result: b };
    for (let j = 0; j < R; j++) {
      for (let c = 0; c < M; c++) {
        const inWin = c >= start && c < start + W;
        const one = sel.has(c);
        setClass(qCells[j][c], 'bit' + (one ? ' q1' : inWin ? ' qband' : ''));
        setText(qCells[j][c], one ? '1' : inWin ? '0' : '');
      }
    }
    const yes = val === b;
    a.innerHTML = '';
    a.append(`key hash ${kh.toString(16).padStart(16, '0')} · start ${start} · row ${bin(cr, W)} (bit 0 first) · ` +
      `XOR of A at {${[...sel].join(', ')}} = ${bin(val, R)} · fingerprint ${bin(b, R)} → `);
    a.append(el('span', yes ? 'yes' : 'no', yes ? 'may be in the set' : 'definitely not in the set'));
    a.append(member >= 0 ? ` (a member: row ${drawOrder().indexOf(member)}, drawn as hashed)` : yes ? ' (not a member: a false positive)' : '');
    Object.assign(a.dataset, { answer: yes ? '1' : '0', start, coeff: cr, result: b, parity: val, member,
      hash: kh.toString(16).padStart(16, '0') });
    const iq = icmlQuery(kh);
    a.dataset.icml = iq.ok ? '1' : '0';
    $('icml-answer').innerHTML = '';
    $('icml-answer').append(`Standard128: start slot ${iq.start} (block ${Math.floor(iq.start / 128)}, offset ${iq.site.sb}),` +
      ` ${iq.site.cols} column(s), segment${iq.site.sb ? 's' : ''} ${iq.site.seg}..${iq.site.seg + (iq.site.sb ? 2 : 1) * iq.site.cols - 1} → `);
    $('icml-answer').append(el('span', iq.ok ? 'yes' : 'no', iq.ok ? 'may be in the set' : 'definitely not in the set'));
    showIcml(iq);
    render();
  }
  $('qkey').addEventListener('input', runQuery);

  // ---- Text.
  document.querySelectorAll('.w').forEach((e) => { e.textContent = W; });
  document.querySelectorAll('.w4').forEach((e) => { e.textContent = W >> 2; });
  document.querySelectorAll('.r').forEach((e) => { e.textContent = R; });
  $('lede').textContent = `A static set-membership filter built by solving a linear system over GF(2):` +
    ` each key is one row of a banded matrix, the stored bit array A is the solution. Replayed from the` +
    ` ribbon crate: ${N} keys, ${M} columns, width ${W}, ${R} fingerprint bit(s)` +
    (BANDED ? (FINAL > 0 ? `, ${FINAL} failed seed(s) before seed ${T.attempts[FINAL].seed} banded.` : '.')
      : `; none of ${T.failed_seeds} seeds banded.`) + ' Press Play (or →).';
  if (BANDED) {
    // Where the free (wasted) columns are: the band's ends.
    const fin = stateAt(steps.length - 1);
    const free = [];
    for (let c = 0; c < M; c++) if (fin.pivotAt[c] < 0) free.push(c);
    const ends = free.filter((c) => c < W || c >= M - W).length;
    $('ends').textContent = `In this construction ${free.length} of ${M} columns have no pivot (free): ` +
      `{${free.join(', ')}}; ${ends} of them among the first or last ${W} columns.`;
  }

  // ---- Test driver and screenshots, from the URL fragment:
  //   #drive=<JSON>: see `drive` below; writes a report (JSON, ASCII) into #test-report;
  //   #show=<phase>&at=<offset>&q=<key>: jump to a phase (plus offset steps) and optionally query.
  const ascii = (x) => JSON.stringify(x).replace(/[^\x20-\x7e]|[<>&]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  const rect = (e) => {
    const r = e.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
  };
  function snapshot() {
    const status = $('status');
    return {
      status: status.textContent,
      phase: status.dataset.phase,
      kind: status.dataset.kind,
      step: Number(status.dataset.step),
      steps: steps.length,
      pivots: Number(status.dataset.pivots),
      failures: Number(status.dataset.failures),
      seed: Number(status.dataset.seed),
      pcol: Number(status.dataset.pcol),
      prow: Number(status.dataset.prow),
      explain: $('explain').textContent,
      bits: bitCells.map((row) => row.map((c) => c.textContent || '.').join('')),
      matrix: cells.map((row) => row.map((c) => (c.classList.contains('one') ? '1' : '0')).join('')),
      row_classes: rowEls.map((r) => r[0].className),
      row_keys: rowEls.map((r) => Number(r[0].dataset.key)),
      labels: labels.map((l) => l.dataset.name),
      arith: {
        kind: $('arith').dataset.kind,
        rows: [...$('arith').querySelectorAll('tr[data-role]')].map((tr) => ({ ...tr.dataset })),
        eq: $('arith').querySelector('.eq') ? { ...$('arith').querySelector('.eq').dataset, text: $('arith').querySelector('.eq').textContent } : null,
      },
    };
  }
  function geometry() {
    const p = st.prow >= 0 ? drawOrder().indexOf(st.prow) : -1;
    const texts = [...document.querySelectorAll('#labels span')].map(rect);
    let overlaps = 0;
    for (let i = 1; i < texts.length; i++) if (texts[i].top < texts[i - 1].bottom - 0.5) overlaps++;
    return {
      inner: [window.innerWidth, window.innerHeight],
      scroll_width: document.documentElement.scrollWidth,
      body_scroll_width: document.body.scrollWidth,
      touch: navigator.maxTouchPoints,
      coarse: window.matchMedia('(pointer: coarse)').matches,
      hover_none: window.matchMedia('(hover: none)').matches,
      cell: size,
      bits: rect($('bits')),
      pivot_row: p >= 0 ? rect(rowEls[p][0]) : null,
      explain: rect($('explain')),
      arith: rect($('arith')),
      label_overlaps: overlaps,
      labels_shown: texts.length,
      axis_labels: $('axis').children.length,
      fp_header: $('axis').querySelector('.fph') ? $('axis').querySelector('.fph').textContent : '',
      label_titles: labels.every((l) => l.title.includes(l.dataset.name)),
    };
  }
  async function drive(cfg) {
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const report = { variant: V ? [V.columns, V.width, V.result_bits] : null };
    const waitPause = async () => {
      for (let n = 0; timer && n < 100000; n++) await sleep(20);
    };
    $('speed').value = '100';
    if (cfg.pauses) {
      // Press Play again and again, recording where it stops.
      report.pauses = [];
      for (let n = 0; n < 400 && st.i < steps.length - 1; n++) {
        $('play').click();
        await sleep(0);
        await waitPause();
        const s = snapshot();
        report.pauses.push({ step: s.step, kind: s.kind, phase: s.phase, t: steps[st.i].t, failures: s.failures,
          fail_class: s.row_classes.some((c) => c.includes('row-fail')), arith: s.arith, explain: s.explain });
      }
    }
    if (cfg.at) {
      // Chosen steps: [{"t": "x", "a": n|-1 (the final seed), "nth": k, "fail": bool, "then": next step's t}],
      // with the geometry there.
      report.at = [];
      for (const f of cfg.at) {
        let seen = 0;
        const a = f.a === -1 ? FINAL : f.a;
        const i = steps.findIndex((s, j) => s.t === f.t && (a === undefined || s.a === a) &&
          (f.fail === undefined || isFailure(s) === f.fail) &&
          (f.then === undefined || (j + 1 < steps.length && steps[j + 1].t === f.then)) && seen++ === (f.nth || 0));
        if (i < 0) { report.at.push(null); continue; }
        pause();
        go(i);
        await sleep(0);
        report.at.push({ i, ...snapshot(), geometry: geometry() });
      }
    }
    if (cfg.keys) {
      // The keyboard: [target, key] pairs.
      report.keys = [];
      for (const [target, key] of cfg.keys) {
        const t = target === 'body' ? document.body : $(target);
        if (t.focus) t.focus();
        const before = { step: st.i, speed: $('speed').value };
        t.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
        report.keys.push({ target, key, before, after: { step: st.i, speed: $('speed').value } });
      }
    }
    if (cfg.tap) {
      // A tap on a matrix cell and on a bit of A: the explanation changes.
      const before = $('explain').textContent;
      const c = cells[Math.min(N - 1, 3)][Math.min(M - 1, 5)];
      c.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, pointerType: 'touch' }));
      c.click();
      report.tap = { before, after: $('explain').textContent, tapped: $('explain').dataset.tapped || '' };
    }
    if (!cfg.no_play) {
      $('play').click();
      for (let n = 0; st.i < steps.length - 1 && n < 100000; n++) {
        await sleep(20);
        if (!timer && st.i < steps.length - 1) $('play').click();
      }
      await waitPause();
      report.played = snapshot();
      for (let n = 0; n < (cfg.back || 0); n++) $('back').click();
      report.back = snapshot();
      report.queries = [];
      for (const q of cfg.query || []) {
        $('qkey').value = q;
        $('qkey').dispatchEvent(new Event('input'));
        report.queries.push({ key: q, ...$('query-answer').dataset, text: $('query-answer').textContent, phase: $('status').dataset.phase,
          matrix: snapshot().matrix, row_classes: snapshot().row_classes });
      }
      if (cfg.stale) {
        // A query, then a step back and forward: no typed query without an answer.
        $('qkey').value = cfg.stale;
        $('qkey').dispatchEvent(new Event('input'));
        const answered = $('query-answer').dataset.answer;
        $('back').click();
        $('fwd').click();
        report.stale = { answered, value: $('qkey').value, answer: $('query-answer').dataset.answer, text: $('query-answer').textContent };
        $('restart').click();
        document.querySelector('[data-phase="done"]').click();
        report.jump_focus = document.activeElement === $('qkey');
      }
      report.geometry_end = geometry();
      if (cfg.by_slot) {
        $('order').click();
        report.by_slot = snapshot();
        $('order').click();
      }
    }
    report.space = ['ribbon', 'bound', 'bloom'].map((k) => $('space-' + k).dataset[k]);
    report.space_text = $('space-lede').textContent;
    report.fail_table = [...document.querySelectorAll('#fail-table tr[data-columns]')].map((tr) => [Number(tr.dataset.columns), Number(tr.dataset.failed)]);
    report.icml_lede = { ...$('icml-lede').dataset, text: $('icml-lede').textContent };
    report.options = ['set-columns', 'set-width', 'set-bits'].map((id) => [...$(id).options].filter((o) => !o.disabled).map((o) => Number(o.value)));
    report.hashes = (cfg.hash_hex || []).map((h) => XXPH3(keyBytes('hex:' + h)).toString(16).padStart(16, '0'));
    report.geometry = geometry();
    report.page_bytes = document.documentElement.outerHTML.length;
    report.errors = ERRORS;
    $('test-report').textContent = ascii(report);
    document.body.dataset.testDone = '1';
    if (window.parent !== window) window.parent.postMessage(ascii(report), '*');
  }
  layout();
  render();
  measure();
  window.addEventListener('resize', () => { layout(); render(); measure(); });
  if (DRIVE) {
    drive(DRIVE).catch((e) => {
      $('test-report').textContent = ascii({ errors: ERRORS.concat([String(e && e.stack ? e.stack : e)]) });
      document.body.dataset.testDone = '1';
      if (window.parent !== window) window.parent.postMessage($('test-report').textContent, '*');
    });
  } else if (params.has('show')) {
    const ph = params.get('show');
    go((phaseStart[ph] ? phaseStart[ph]() : 0) + Number(params.get('at') || 0));
    if (params.has('q')) {
      $('qkey').value = params.get('q');
      runQuery();
    }
    if (params.has('slot')) { bySlot = true; render(); }
  }
})();
