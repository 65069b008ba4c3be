// The replay. Everything shown comes from the embedded record of the ribbon
// crate's own banding and back-substitution (see ribbon-cli/src/viz/trace.rs);
// this script only steps through it. The one thing computed here is the
// query: the key hash (XXPH3, ported) and the hasher's formulas, which the
// viz test checks against the crate.
(() => {
  'use strict';
  const D = JSON.parse(document.getElementById('data').textContent);
  const T = D.trace;
  const W = T.width;
  const R = T.result_bits;
  const M = T.columns;
  const N = D.keys.length;
  const FINAL = T.attempts.length - 1;
  const RMASK = (1 << R) - 1;
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
  const bin = (v, n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += (v >>> i) & 1;
    return s;
  };

  // ---- The steps: one per recorded event.
  const PHASE = { init: 'init', retry: 'init', sort: 'sort', b: 'eliminate', x: 'eliminate', s: 'eliminate',
    z: 'eliminate', v: 'back-substitute', done: 'done' };
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
  steps.push({ t: 'done', a: FINAL });

  // ---- State after a number of steps, replayed from the start.
  function fresh() {
    return { i: -1, a: 0, order: [], rows: [], pivotAt: [], A: [], xors: 0, pivots: 0, failures: 0,
      cur: -1, prow: -1, pcol: -1, zero: new Set(), fail: -1, step: null, msg: '' };
  }
  function apply(st, s) {
    const at = T.attempts[s.a];
    st.step = s;
    st.cur = -1;
    st.prow = -1;
    st.pcol = -1;
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
        const owner = st.pivotAt[s.slot];
        st.msg = `Adding key ${keyName(s.key)}: its lowest 1 is in column ${s.slot}, ` +
          (owner >= 0 ? `which key ${keyName(owner)} already pivots: XOR its row in.` : 'which has no pivot yet.');
        break;
      }
      case 'x': {
        st.rows[s.key] = { base: s.slot, bits: s.coeff, res: s.res };
        st.xors++;
        st.cur = s.key;
        st.prow = s.other;
        st.pcol = s.slot;
        const tz = s.coeff === 0 ? -1 : 31 - Math.clz32(s.coeff & -s.coeff);
        st.msg = `Row of ${keyName(s.key)} ^= pivot row of ${keyName(s.other)} (column ${s.slot}): ` +
          (tz < 0 ? `no coefficient left, fingerprint ${bin(s.res, R)}.` : `its lowest 1 moves to column ${s.slot + tz}.`);
        break;
      }
      case 's':
        st.rows[s.key] = { base: s.slot, bits: s.coeff, res: s.res };
        st.pivotAt[s.slot] = s.key;
        st.pivots++;
        st.cur = s.key;
        st.pcol = s.slot;
        st.msg = `Column ${s.slot} had no pivot: the row of ${keyName(s.key)} is stored there and pivots it.`;
        break;
      case 'z':
        st.rows[s.key] = { base: st.rows[s.key].base, bits: 0, res: s.res };
        st.zero.add(s.key);
        st.cur = s.key;
        if ((s.res & RMASK) !== 0) {
          st.failures++;
          st.fail = s.key;
          st.msg = `Contradiction: the row of ${keyName(s.key)} reduced to 0 = ${bin(s.res, R)}. No bit array satisfies every key with seed ${at.seed}; the construction retries with the next seed.`;
        } else {
          st.msg = `The row of ${keyName(s.key)} reduced to 0 = 0: redundant (it follows from the others), nothing is stored.`;
        }
        break;
      case 'v': {
        st.A[s.slot] = s.val;
        st.prow = s.key;
        st.pcol = s.slot;
        if (s.key >= 0) {
          const rest = s.coeff & ~1;
          let sel = [];
          for (let k = 1; k < W; k++) if ((rest >>> k) & 1) sel.push(s.slot + k);
          st.msg = `A[${s.slot}] = fingerprint ${bin(s.res, R)} XOR A at columns {${sel.join(', ')}} = ${bin(s.val, R)} (pivot row of ${keyName(s.key)}).`;
        } else {
          st.msg = `Column ${s.slot} has no pivot: it is free, and set to ${bin(s.val, R)}.`;
        }
        break;
      }
      case 'done':
        st.msg = `Done: the bit array satisfies all ${N} equations. Type a key below to query it.`;
        break;
      default:
        break;
    }
  }
  function stateAt(i) {
    const st = fresh();
    for (let j = 0; j <= i; j++) apply(st, steps[j]);
    st.i = i;
    return st;
  }

  // ---- The board, built once; cells get classes per step.
  const size = Math.max(6, Math.min(14, Math.floor(940 / (M + R + 2))));
  document.documentElement.style.setProperty('--c', size + 'px');
  const labels = [];
  const cells = [];
  const fpCells = [];
  const rowEls = [];
  for (let p = 0; p < N; p++) {
    labels.push($('labels').appendChild(el('div')));
    const row = $('matrix').appendChild(el('div', 'mrow'));
    const fr = $('fp').appendChild(el('div', 'mrow'));
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

  function render() {
    const s = st.step;
    const phase = PHASE[s.t];
    const at = T.attempts[st.a];
    for (let p = 0; p < N; p++) {
      const k = st.order[p];
      const r = st.rows[k];
      let rowCls = 'mrow';
      if (k === st.cur) rowCls += ' row-cur';
      if (k === st.prow) rowCls += ' row-prow';
      if (k === st.fail) rowCls += ' row-fail';
      else if (st.zero.has(k)) rowCls += ' row-dead';
      if (query && query.member === k) rowCls += ' row-prow';
      setClass(rowEls[p][0], rowCls);
      setClass(rowEls[p][1], rowCls);
      const lab = labels[p];
      setText(lab, keyName(k));
      setClass(lab, k === st.cur ? 'cur' : k === st.prow || (query && query.member === k) ? 'prow' : '');
      const lo = r.base;
      const bandLo = r.bits === 0 && st.zero.has(k) ? -1 : lo;
      for (let c = 0; c < M; c++) {
        const off = c - lo;
        const one = off >= 0 && off < W && ((r.bits >>> off) & 1) === 1;
        let cls = 'cell';
        if (one) cls += ' one';
        else if (bandLo >= 0 && c >= bandLo && c < bandLo + W) cls += ' band';
        if (one && st.pivotAt[c] === k) cls += ' piv';
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
    const prowPos = st.prow >= 0 ? st.order.indexOf(st.prow) : -1;
    const status = $('status');
    status.textContent = `phase ${phase} · pivot row ${prowPos >= 0 ? prowPos : '–'} · pivot col ${st.pcol >= 0 ? st.pcol : '–'}` +
      ` · xors ${st.xors} · pivots ${st.pivots}/${N} · failures ${st.failures} · seed ${at.seed}` +
      ` · step ${st.i + 1}/${steps.length}`;
    status.dataset.phase = phase;
    status.dataset.step = st.i;
    status.dataset.pivots = st.pivots;
    status.dataset.failures = st.failures;
    status.dataset.seed = at.seed;
    status.dataset.pcol = st.pcol;
    $('explain').textContent = st.msg;
    $('play').textContent = timer ? 'Pause' : st.i === steps.length - 1 ? 'Replay' : 'Play';
  }

  // ---- Controls.
  let timer = null;
  function go(i) {
    i = Math.max(0, Math.min(steps.length - 1, i));
    st = i === st.i + 1 ? (apply(st, steps[i]), (st.i = i), st) : stateAt(i);
    if (i < steps.length - 1 && query) clearQuery();
    render();
  }
  const delay = () => Math.round(1000 * Math.pow(0.955, Number($('speed').value)));
  function tick() {
    if (st.i >= steps.length - 1) {
      pause();
      return;
    }
    go(st.i + 1);
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
    'back-substitute': () => firstStep((s) => s.t === 'v'),
    done: () => steps.length - 1,
  };
  $('play').onclick = play;
  $('back').onclick = () => { pause(); go(st.i - 1); };
  $('fwd').onclick = () => { pause(); go(st.i + 1); };
  $('restart').onclick = () => { pause(); go(0); };
  $('end').onclick = () => { pause(); go(steps.length - 1); };
  for (const b of document.querySelectorAll('[data-phase]')) {
    b.onclick = () => { pause(); go(phaseStart[b.dataset.phase]()); };
  }
  document.addEventListener('keydown', (e) => {
    if (e.target === $('qkey')) return;
    if (e.key === ' ') { e.preventDefault(); play(); }
    if (e.key === 'ArrowRight') { pause(); go(st.i + 1); }
    if (e.key === 'ArrowLeft') { pause(); go(st.i - 1); }
  });

  // ---- Hover explanations.
  $('matrix').addEventListener('mouseover', (e) => {
    const d = e.target.dataset;
    if (d.c === undefined) return;
    const k = st.order[Number(d.p)];
    const c = Number(d.c);
    const r = st.rows[k];
    const e0 = T.attempts[st.a].equations[k];
    const off = c - r.base;
    const v = off >= 0 && off < W ? (r.bits >>> off) & 1 : 0;
    let t = `Row ${d.p}, key ${keyName(k)} (hashed start ${e0[0]}), column ${c}: coefficient ${v}. `;
    if (st.zero.has(k)) t += 'This row was eliminated to nothing.';
    else if (off >= 0 && off < W) t += `Its current band is columns ${r.base}..${r.base + W - 1}.`;
    else t += 'Outside its band: always 0.';
    if (st.pivotAt[c] === k) t += ` It is the pivot of column ${c}: back-substitution solves A[${c}] from it.`;
    else if (st.pivotAt[c] >= 0) t += ` Column ${c} is pivoted by the row of ${keyName(st.pivotAt[c])}.`;
    $('explain').textContent = t;
  });
  $('fp').addEventListener('mouseover', (e) => {
    const d = e.target.dataset;
    if (d.j === undefined) return;
    const k = st.order[Number(d.p)];
    $('explain').textContent = `Fingerprint bit ${d.j} of key ${keyName(k)}: the right-hand side b of its equation` +
      (st.rows[k].res !== T.attempts[st.a].equations[k][2] ? ', as changed by the XORs so far.' : ' (from its hash).');
  });
  $('bits').addEventListener('mouseover', (e) => {
    const d = e.target.dataset;
    if (d.c === undefined) return;
    const c = Number(d.c);
    const v = st.A[c];
    const piv = st.pivotAt[c];
    $('explain').textContent = v === null
      ? `A[${c}] is not solved yet: back-substitution goes from column ${M - 1} down to 0.`
      : piv >= 0
        ? `A[${c}] = ${bin(v, R)}: solved from the pivot row of ${keyName(piv)}.`
        : `A[${c}] = ${bin(v, R)}: no row pivots column ${c}, so it is free and set to 0.`;
  });
  const board = [$('matrix'), $('fp'), $('bits')];
  for (const b of board) b.addEventListener('mouseleave', () => { $('explain').textContent = st.msg; });

  // ---- Hashing, as ribbon::standard::Hasher does.
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
    $('icml-lede').textContent = `Standard128 Ribbon (ribbonfilter:${I.bits_per_key}, FP target 1 in ${I.desired_one_in_fp_rate.toFixed(1)}):` +
      ` ribbon width 128, ${I.num_slots} slots in ${I.num_blocks} blocks of 128, seed ${I.seed}. Each block stores one 16-byte` +
      ' segment per result column, column after column (interleaved column-major): ' +
      (I.upper_start_block === 0 ? `every block has ${I.upper_num_columns} columns` : `blocks from ${I.upper_start_block} on have` +
        ` ${I.upper_num_columns} columns, earlier ones ${I.upper_num_columns - 1}`) + `. ${I.num_segments} segments, ${total} bytes with` +
      ' the 5-byte trailer. RocksDB writes a Bloom filter instead this small; the crate builds this one with the same code.' +
      ' A query reads, per column, one segment (start at a block boundary) or two adjacent ones.';
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

  // ---- Query mode.
  function clearQuery() {
    query = null;
    for (const row of qCells) for (const c of row) setClass(c, 'bit'), setText(c, '');
    const a = $('query-answer');
    a.textContent = '';
    a.dataset.answer = '';
    $('icml-answer').textContent = '';
    showIcml(null);
  }
  function runQuery() {
    const text = $('qkey').value;
    const a = $('query-answer');
    if (text === '') return clearQuery(), render();
    const bytes = keyBytes(text);
    if (!bytes) {
      clearQuery();
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
    query = { sel, member };
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
    a.append(`key hash ${kh.toString(16).padStart(16, '0')} · start ${start} · row ${bin(cr, W)} · ` +
      `XOR of A at {${[...sel].join(', ')}} = ${bin(val, R)} · fingerprint ${bin(b, R)} → `);
    a.append(el('span', yes ? 'yes' : 'no', yes ? 'may be in the set' : 'definitely not in the set'));
    a.append(member >= 0 ? ` (a member: row ${st.order.indexOf(member)})` : yes ? ' (not a member: a false positive)' : '');
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
  document.querySelectorAll('.r').forEach((e) => { e.textContent = R; });
  $('lede').textContent = `A ribbon filter is a static set-membership structure built by solving a linear system over GF(2):` +
    ` each key is one row of a banded matrix, and the stored bit array is the solution. This page replays a construction by the` +
    ` ribbon crate: ${N} keys, ${M} columns, ribbon width ${W}, ${R} fingerprint bit(s)` +
    (FINAL > 0 ? `, ${FINAL} failed seed(s) before seed ${T.attempts[FINAL].seed} banded.` : '.') + ' Press Play.';

  // ---- Test driver and screenshots, from the URL fragment:
  //   #drive=<JSON {"back": n, "query": [keys], "hash_hex": [hex keys]}>: play to the end, step back n
  //     times, query each key, hash each hex key, and write a report (JSON, ASCII) into #test-report;
  //   #show=<phase>&at=<offset>&q=<key>: jump to a phase (plus offset steps) and optionally query.
  const params = new URLSearchParams(location.hash.slice(1));
  const ascii = (x) => JSON.stringify(x).replace(/[^\x20-\x7e]|[<>&]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  function snapshot() {
    const status = $('status');
    return {
      status: status.textContent,
      phase: status.dataset.phase,
      step: Number(status.dataset.step),
      steps: steps.length,
      pivots: Number(status.dataset.pivots),
      failures: Number(status.dataset.failures),
      seed: Number(status.dataset.seed),
      pcol: Number(status.dataset.pcol),
      bits: bitCells.map((row) => row.map((c) => c.textContent || '.').join('')),
      matrix: cells.map((row) => row.map((c) => (c.classList.contains('one') ? '1' : '0')).join('')),
      labels: labels.map((l) => l.textContent),
    };
  }
  async function drive(cfg) {
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const report = {};
    $('speed').value = '100';
    $('play').click();
    for (let n = 0; st.i < steps.length - 1 && n < 100000; n++) await sleep(20);
    report.played = snapshot();
    for (let n = 0; n < (cfg.back || 0); n++) $('back').click();
    report.back = snapshot();
    report.queries = [];
    for (const q of cfg.query || []) {
      $('qkey').value = q;
      $('qkey').dispatchEvent(new Event('input'));
      report.queries.push({ key: q, ...$('query-answer').dataset, text: $('query-answer').textContent, phase: $('status').dataset.phase });
    }
    report.hashes = (cfg.hash_hex || []).map((h) => XXPH3(keyBytes('hex:' + h)).toString(16).padStart(16, '0'));
    $('test-report').textContent = ascii(report);
    document.body.dataset.testDone = '1';
  }
  render();
  if (params.has('drive')) {
    drive(JSON.parse(params.get('drive')));
  } else if (params.has('show')) {
    const ph = params.get('show');
    go((phaseStart[ph] ? phaseStart[ph]() : 0) + Number(params.get('at') || 0));
    if (params.has('q')) {
      $('qkey').value = params.get('q');
      runQuery();
    }
  }
})();
