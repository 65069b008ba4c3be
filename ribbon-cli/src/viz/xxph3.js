// XXPH3 64 with seed 0: RocksDB's GetSliceHash64 (the frozen preview of
// XXH3 from xxHash 0.7.2), the key hash of Ribbon filters. Ported from
// ribbon/src/hash/xxph3.rs, in BigInt arithmetic modulo 2^64; the viz test
// checks it against the crate on keys of every length class.
const XXPH3 = (() => {
  'use strict';
  const M64 = (1n << 64n) - 1n;
  const P32_1 = 0x9E3779B1n;
  const P64_1 = 0x9E3779B185EBCA87n;
  const P64_2 = 0xC2B2AE3D27D4EB4Fn;
  const P64_3 = 0x165667B19E3779F9n;
  const INIT_ACC = [0xC2B2AE3Dn, P64_1, P64_2, P64_3, 0x85EBCA77C2B2AE63n, 0x85EBCA77n, 0x27D4EB2F165667C5n, P32_1];
  const SECRET = new Uint8Array('b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671fcb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e'.match(/../g).map((h) => parseInt(h, 16)));
  const STRIPE = 64;
  const BLOCK = 1024;

  function r64(b, o) {
    if (o < 0 || o + 8 > b.length) return 0n;
    let v = 0n;
    for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(b[o + i]);
    return v;
  }
  function r32(b, o) {
    if (o < 0 || o + 4 > b.length) return 0n;
    return BigInt((b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0);
  }
  const mul = (a, b) => (a * b) & M64;
  const add = (a, b) => (a + b) & M64;
  function fold(a, b) {
    const p = a * b;
    return (p & M64) ^ (p >> 64n);
  }
  function avalanche(h) {
    h ^= h >> 37n;
    h = mul(h, P64_3);
    return h ^ (h >> 32n);
  }
  function mix16(d, dOff, sOff) {
    return fold(r64(d, dOff) ^ r64(SECRET, sOff), r64(d, dOff + 8) ^ r64(SECRET, sOff + 8));
  }
  function short(d) {
    const len = d.length;
    const n = BigInt(len);
    if (len > 8) {
      const lo = r64(d, 0) ^ r64(SECRET, 0);
      const hi = r64(d, len - 8) ^ r64(SECRET, 8);
      return avalanche(add(add(n, add(lo, hi)), fold(lo, hi)));
    }
    if (len >= 4) {
      const keyed = (r32(d, 0) | (r32(d, len - 4) << 32n)) ^ r64(SECRET, 0);
      const mix = add(n, mul(keyed ^ (keyed >> 51n), P32_1));
      return avalanche(mul(mix ^ (mix >> 47n), P64_2));
    }
    if (len > 0) {
      const combined = BigInt((d[0] | (d[len >> 1] << 8) | (d[len - 1] << 16) | (len << 24)) >>> 0);
      return avalanche(mul(combined ^ r32(SECRET, 0), P64_1));
    }
    return fold(r64(SECRET, 0), P64_2);
  }
  function mid(d) {
    const len = d.length;
    let acc = mul(BigInt(len), P64_1);
    if (len > 32) {
      if (len > 64) {
        if (len > 96) {
          acc = add(acc, mix16(d, 48, 96));
          acc = add(acc, mix16(d, len - 64, 112));
        }
        acc = add(acc, mix16(d, 32, 64));
        acc = add(acc, mix16(d, len - 48, 80));
      }
      acc = add(acc, mix16(d, 16, 32));
      acc = add(acc, mix16(d, len - 32, 48));
    }
    acc = add(acc, mix16(d, 0, 0));
    acc = add(acc, mix16(d, len - 16, 16));
    return avalanche(acc);
  }
  function upTo240(d) {
    const len = d.length;
    let acc = mul(BigInt(len), P64_1);
    for (let i = 0; i < 8; i++) acc = add(acc, mix16(d, 16 * i, 16 * i));
    acc = avalanche(acc);
    for (let i = 8; i < len >> 4; i++) acc = add(acc, mix16(d, 16 * i, 16 * (i - 8) + 3));
    acc = add(acc, mix16(d, len - 16, 136 - 17));
    return avalanche(acc);
  }
  function stripe(acc, d, dOff, sOff) {
    for (let i = 0; i < 8; i++) {
      const v = r64(d, dOff + 8 * i);
      const key = v ^ r64(SECRET, sOff + 8 * i);
      acc[i] = add(add(acc[i], v), (key & 0xFFFFFFFFn) * (key >> 32n));
    }
  }
  function long(d) {
    const len = d.length;
    const acc = INIT_ACC.slice();
    const blocks = Math.floor(len / BLOCK);
    for (let b = 0; b < blocks; b++) {
      for (let n = 0; n < 16; n++) stripe(acc, d, b * BLOCK + n * STRIPE, n * 8);
      for (let i = 0; i < 8; i++) {
        let v = acc[i];
        v ^= v >> 47n;
        v ^= r64(SECRET, 192 - STRIPE + 8 * i);
        acc[i] = mul(v, P32_1);
      }
    }
    const tail = len - blocks * BLOCK;
    for (let n = 0; n < Math.floor(tail / STRIPE); n++) stripe(acc, d, blocks * BLOCK + n * STRIPE, n * 8);
    if (len % STRIPE !== 0) stripe(acc, d, len - STRIPE, 192 - STRIPE - 7);
    let result = mul(BigInt(len), P64_1);
    for (let i = 0; i < 4; i++) {
      result = add(result, fold(acc[2 * i] ^ r64(SECRET, 11 + 16 * i), acc[2 * i + 1] ^ r64(SECRET, 11 + 16 * i + 8)));
    }
    return avalanche(result);
  }
  /** The 64-bit hash of a Uint8Array, as a BigInt. */
  return function xxph3(d) {
    if (d.length <= 16) return short(d);
    if (d.length <= 128) return mid(d);
    if (d.length <= 240) return upTo240(d);
    return long(d);
  };
})();
