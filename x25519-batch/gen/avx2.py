#!/usr/bin/env python3
"""Writes `src/x86/avx2_asm.rs`: the AVX2 ladder step and field
multiplication as inline assembly, from the same recipe the intrinsics
code followed (radix 2^25.5, ten limbs, four lanes per register).

Run from the crate's directory (or anywhere): `python3 gen/avx2.py`.
`python3 gen/avx2.py --check` exits 1 if the file is not what it writes.

Why generated: written with intrinsics, LLVM reassociates the hundred
products of a multiplication and spills half of them, and keeps each
multiplication an out-of-line call with its operands passed through
memory; the ladder ran at about 1,100 cycles a step on Zen 4. Here each
field operation keeps its ten column sums in ymm0..ymm9 and reads its
operands straight from memory (`vpmuludq ymm, ymm, m256`), which is what
the multiplier can sustain; the ladder step is one block.

Registers, in every operation: ymm0..ymm9 the ten limbs being computed,
ymm10/ymm11 a row's multiplier (`f_i`, `2·f_i`, `4·f_i`), ymm12/ymm13
temporaries, ymm14 = 2^26 − 1 and ymm15 = 2^25 − 1 (the limb masks).
"""

import os
import sys

LIMBS = 10

# The ladder state's fields (the Rust struct `State` is written from this
# list, and the blocks address its fields by `offset_of!`).
FIELDS = [
    ("x2", "Fe", "`x_2`, in and out."),
    ("z2", "Fe", "`z_2`, in and out."),
    ("x3", "Fe", "`x_3`, in and out."),
    ("z3", "Fe", "`z_3`, in and out."),
    ("x1", "Fe", "The base point's u-coordinate `x_1`."),
    ("x1_19", "Fe", "`19·x_1`, limbs 1 to 9 (limb 0 unused)."),
    ("swap", "__m256i", "The step's swap mask: all ones in the lanes to swap."),
]
SCRATCH = ["a", "b", "c", "d", "aa", "bb", "da", "cb", "e", "f", "g", "h", "t", "w", "wa", "wb"]

A24 = 121665
TWO_P0 = 2 * ((1 << 26) - 1 - 18)


class Ref:
    """A field element in memory: a pointer operand, the name of a field
    of `State` (an offset operand) or none, and a byte offset."""

    def __init__(self, base, field=None, off=0):
        self.base, self.field, self.off = base, field, off

    def limb(self, i):
        field = f" + {{{self.field}}}" if self.field else ""
        return f"ymmword ptr [{{{self.base}}}{field} + {self.off + 32 * i}]"


def slot(name):
    return Ref("s", name.lower())


def masks():
    return [
        "vpcmpeqq ymm15, ymm15, ymm15",
        "vpsrlq ymm14, ymm15, 38",
        "vpsrlq ymm15, ymm15, 39",
    ]


def splat(reg, value):
    """`value` in every lane of `reg`, through the scratch GPR `{t}`."""
    return [f"mov {{tmp:e}}, {value}", f"vmovd {reg.replace('ymm', 'xmm')}, {{tmp:e}}",
            f"vpbroadcastq {reg}, {reg.replace('ymm', 'xmm')}"]


def carry():
    """Columns below 2^63 to carried limbs: two interleaved chains
    (0→1→…→5 and 4→5→…→9), limb 9's carry ×19 into limb 0, and limb 0
    into limb 1 once more. Limbs end below 2^26 / 2^25 + 2^16."""
    out = masks()

    def into(lo, hi, bits, t):
        m = "ymm14" if bits == 26 else "ymm15"
        out.extend([f"vpsrlq {t}, ymm{lo}, {bits}", f"vpand ymm{lo}, ymm{lo}, {m}",
                    f"vpaddq ymm{hi}, ymm{hi}, {t}"])

    for lo, bits in [(0, 26), (1, 25), (2, 26), (3, 25), (4, 26)]:
        into(lo, lo + 1, bits, "ymm12")
        into(lo + 4, lo + 5, bits, "ymm13")
    out += ["vpsrlq ymm12, ymm9, 25", "vpand ymm9, ymm9, ymm15",
            "vpsllq ymm13, ymm12, 1", "vpaddq ymm13, ymm13, ymm12",
            "vpsllq ymm12, ymm12, 4", "vpaddq ymm12, ymm12, ymm13",
            "vpaddq ymm0, ymm0, ymm12"]
    into(0, 1, 26, "ymm12")
    return out


def store(h):
    return [f"vmovdqu {h.limb(k)}, ymm{k}" for k in range(LIMBS)]


def table19(g, w, first, keep):
    """w[j − 1] = 19·g[j] for j = first..9 (below 2^32 for g below
    3·2^26 + 2^16), with ymm9 = 19; `keep` maps some j to the register
    that holds 19·g[j] instead (stored too only if `store_all`)."""
    out = splat("ymm9", 19)
    for j in range(first, LIMBS):
        reg = keep.get(j, f"ymm{j - 1}")
        out.append(f"vpmuludq {reg}, ymm9, {g.limb(j)}")
        if j not in keep or keep.get("store_all"):
            out.append(f"vmovdqu {w.limb(j - 1)}, {reg}")
    return out


def products(rows, resident):
    """The products of `rows` (row multiplier loads and (register, operand,
    column) triples) summed into ymm0..ymm9; an operand found in
    `resident` is read from its register instead of memory. ymm12 holds
    each product on its way to its column."""
    out = []
    started = set()
    for loads, terms in rows:
        out += loads
        for left, right, k in terms:
            right = resident.get(right, right)
            if k not in started:
                started.add(k)
                out.append(f"vpmuludq ymm{k}, {left}, {right}")
            else:
                out += [f"vpmuludq ymm12, {left}, {right}", f"vpaddq ymm{k}, ymm{k}, ymm12"]
    return out


def mul(f, g, w, h, table="make"):
    """h = f·g, carried. Row i multiplies f_i (2·f_i where i and the other
    limb are both odd) by w[9 − i + k] for column k, where
    w = [19·g_1 … 19·g_9, g_0 … g_9]: the operand that lands on column k,
    ×19 when it wraps past limb 9. The three operands used most (g_0,
    g_1, 19·g_9: nine or ten times each) stay in ymm13..ymm15.
    `table`: "make" the 19·g table in w, "share" it (store all of it, for
    a square of g next), or "ready" (w already holds it)."""
    if table == "ready":
        out = [f"vmovdqu ymm15, {w.limb(8)}"]
    else:
        out = table19(g, w, 1, {9: "ymm15", "store_all": table == "share"})
    out += [f"vmovdqu ymm13, {g.limb(0)}", f"vmovdqu ymm14, {g.limb(1)}"]
    resident = {w.limb(8): "ymm15", g.limb(0): "ymm13", g.limb(1): "ymm14"}

    def operand(i, k):
        t = 9 - i + k
        return g.limb(t - 9) if t >= 9 else w.limb(t)

    rows = []
    for i in range(LIMBS):
        loads = [f"vmovdqu ymm10, {f.limb(i)}"] + (["vpaddq ymm11, ymm10, ymm10"] if i % 2 else [])
        terms = [("ymm11" if (i % 2 and k % 2 == 0) else "ymm10", operand(i, k), k)
                 for k in range(LIMBS)]
        rows.append((loads, terms))
    return out + products(rows, resident) + carry() + store(h)


def sqr(f, w, h, table="make"):
    """h = f², carried: each cross product once, from row i's 2·f_i (4·f_i
    where i and j are both odd) times f_j (19·f_j when it wraps); the
    diagonal f_i·f_i (2·f_i·f_i for odd i). The same column sums as
    `mul(f, f)`. 19·f_8 and 19·f_9 (seven and nine uses) stay in ymm14 and
    ymm15, and f_5 (five) in ymm13. `table`: "make" 19·f_5..19·f_9 in w,
    or "ready" (w holds the whole 19·f table, as `mul` shares it)."""
    if table == "ready":
        out = [f"vmovdqu ymm14, {w.limb(7)}", f"vmovdqu ymm15, {w.limb(8)}"]
    else:
        out = table19(f, w, 5, {8: "ymm14", 9: "ymm15"})
    out.append(f"vmovdqu ymm13, {f.limb(5)}")
    resident = {w.limb(7): "ymm14", w.limb(8): "ymm15", f.limb(5): "ymm13"}
    rows = []
    for i in range(LIMBS):
        loads = [f"vmovdqu ymm10, {f.limb(i)}", "vpaddq ymm11, ymm10, ymm10"]
        terms = []
        for j in range(i, LIMBS):
            if i == j:
                left = "ymm11" if i % 2 else "ymm10"
            else:
                left = "ymm10" if (i % 2 and j % 2) else "ymm11"
            right = f.limb(j) if i + j < LIMBS else w.limb(j - 1)
            terms.append((left, right, (i + j) % LIMBS))
            if i == j and i % 2:
                # From here on the row's odd-odd products take 4·f_i.
                terms.append(("vpaddq ymm10, ymm11, ymm11", None, None))
        rows.append((loads, terms))
    return out + products_sqr(rows, resident) + carry() + store(h)


def products_sqr(rows, resident):
    """`products`, where a term may be an instruction to emit in place."""
    flat = []
    for loads, terms in rows:
        flat.append((loads, []))
        for term in terms:
            if term[1] is None:
                flat.append(([term[0]], []))
            else:
                flat[-1][1].append(term)
    return products(flat, resident)


def two_p():
    """ymm11 = 2p's limb 0, ymm12 = 2p's odd limbs, ymm13 = its other even
    limbs: each at least a carried limb's bound, so f + 2p − g ≥ 0."""
    return masks() + splat("ymm11", TWO_P0) + [
        "vpaddq ymm12, ymm15, ymm15", "vpaddq ymm13, ymm14, ymm14"]


def two_p_limb(i):
    return "ymm11" if i == 0 else ("ymm12" if i % 2 else "ymm13")


def sub(f, g, h):
    """h = f + 2p − g, not carried (g carried)."""
    out = two_p()
    for i in range(LIMBS):
        out += [f"vpaddq ymm0, {two_p_limb(i)}, {f.limb(i)}", f"vpsubq ymm0, ymm0, {g.limb(i)}",
                f"vmovdqu {h.limb(i)}, ymm0"]
    return out


def add_sub(f, g, plus, minus):
    """plus = f + g and minus = f + 2p − g, not carried."""
    out = two_p()
    for i in range(LIMBS):
        out += [f"vmovdqu ymm0, {f.limb(i)}", f"vmovdqu ymm1, {g.limb(i)}",
                "vpaddq ymm2, ymm0, ymm1", f"vpaddq ymm0, ymm0, {two_p_limb(i)}",
                "vpsubq ymm0, ymm0, ymm1",
                f"vmovdqu {plus.limb(i)}, ymm2", f"vmovdqu {minus.limb(i)}, ymm0"]
    return out


def cswap_add_sub():
    """Swaps (x_2, z_2) with (x_3, z_3) in the lanes where SWAP is all ones,
    then A = x_2 + z_2, B = x_2 − z_2, C = x_3 + z_3, D = x_3 − z_3. The
    swapped points are not written back: the step overwrites all four."""
    x2, z2, x3, z3 = slot("X2"), slot("Z2"), slot("X3"), slot("Z3")
    a, b, c, d = slot("A"), slot("B"), slot("C"), slot("D")
    out = two_p() + [f"vmovdqu ymm10, {slot('SWAP').limb(0)}"]
    for i in range(LIMBS):
        p = two_p_limb(i)
        out += [
            f"vmovdqu ymm0, {x2.limb(i)}", f"vmovdqu ymm1, {x3.limb(i)}",
            f"vmovdqu ymm2, {z2.limb(i)}", f"vmovdqu ymm3, {z3.limb(i)}",
            "vpxor ymm4, ymm0, ymm1", "vpxor ymm5, ymm2, ymm3",
            "vpand ymm4, ymm4, ymm10", "vpand ymm5, ymm5, ymm10",
            "vpxor ymm0, ymm0, ymm4", "vpxor ymm1, ymm1, ymm4",
            "vpxor ymm2, ymm2, ymm5", "vpxor ymm3, ymm3, ymm5",
            "vpaddq ymm4, ymm0, ymm2", f"vpaddq ymm0, ymm0, {p}", "vpsubq ymm0, ymm0, ymm2",
            "vpaddq ymm5, ymm1, ymm3", f"vpaddq ymm1, ymm1, {p}", "vpsubq ymm1, ymm1, ymm3",
            f"vmovdqu {a.limb(i)}, ymm4", f"vmovdqu {b.limb(i)}, ymm0",
            f"vmovdqu {c.limb(i)}, ymm5", f"vmovdqu {d.limb(i)}, ymm1",
        ]
    return out


def a24_add(e, aa, h):
    """h = aa + carried(121665·e): e below 3·2^26 + 2^16 per limb, so
    each product below 2^44; the sum of two carried values."""
    out = splat("ymm9", A24)
    for k in range(LIMBS - 1):
        out.append(f"vpmuludq ymm{k}, ymm9, {e.limb(k)}")
    out.append(f"vpmuludq ymm9, ymm9, {e.limb(LIMBS - 1)}")
    out += carry()
    for k in range(LIMBS):
        out.append(f"vpaddq ymm{k}, ymm{k}, {aa.limb(k)}")
    return out + store(h)


def step():
    """One step of RFC 7748 §5's ladder, after the conditional swap, in an
    order that puts at least one other operation between most operations
    and their inputs' producers, so that out-of-order execution overlaps
    them (each ends in a serial carry chain and a store its consumer
    loads back)."""
    s = slot
    w = s("W")
    out = cswap_add_sub()
    out += mul(s("D"), s("A"), s("WA"), s("DA"), table="share")
    out += mul(s("C"), s("B"), s("WB"), s("CB"), table="share")
    out += sqr(s("A"), s("WA"), s("AA"), table="ready")
    out += add_sub(s("DA"), s("CB"), s("E"), s("F"))
    out += sqr(s("B"), s("WB"), s("BB"), table="ready")
    out += sqr(s("F"), w, s("T"))
    out += sqr(s("E"), w, s("X3"))
    out += sub(s("AA"), s("BB"), s("G"))
    out += mul(s("T"), s("X1"), Ref("s", "x1_19", 32), s("Z3"), table="ready")
    out += a24_add(s("G"), s("AA"), s("H"))
    out += mul(s("AA"), s("BB"), w, s("X2"))
    out += mul(s("G"), s("H"), w, s("Z2"))
    return out


CLOBBERS = "".join(f'            out("ymm{i}") _,\n' for i in range(16))


def block(lines, operands, indent="            "):
    body = "".join(f'{indent}"{line}",\n' for line in lines)
    return f"{body}{operands}{CLOBBERS}            options(nostack, preserves_flags),\n"


def rust():
    fields = "".join(f"    /// {doc}\n    pub(super) {name}: {ty},\n" for name, ty, doc in FIELDS)
    fields += "".join(f"    {name}: Fe,\n" for name in SCRATCH)
    wipe = "".join(f"        self.{name}.zeroize();\n" for name, _, _ in FIELDS)
    wipe += "".join(f"        self.{name}.zeroize();\n" for name in SCRATCH)
    nl = "\n            "
    offsets = nl.join(f"{name} = const offset_of!(State, {name}),"
                      for name in [f[0] for f in FIELDS] + SCRATCH)
    step_ops = "s = in(reg) s," + nl + offsets + nl + "tmp = out(reg) _,\n"
    mul_ops = nl.join(["f = in(reg) f.as_ptr(),", "g = in(reg) g.as_ptr(),",
                       "w = in(reg) w.as_mut_ptr(),", "h = in(reg) h.as_mut_ptr(),",
                       "tmp = out(reg) _,"]) + "\n"
    sqr_ops = nl.join(["f = in(reg) f.as_ptr(),", "w = in(reg) w.as_mut_ptr(),",
                       "h = in(reg) h.as_mut_ptr(),", "tmp = out(reg) _,"]) + "\n"
    f, g, w, h = Ref("f"), Ref("g"), Ref("w"), Ref("h")
    step_block = block(step(), "            " + step_ops)
    mul_block = block(mul(f, g, w, h), "            " + mul_ops)
    sqr_block = block(sqr(f, w, h), "            " + sqr_ops)
    return f'''// @generated by gen/avx2.py: do not edit; change the generator and run
// `python3 gen/avx2.py` (CI checks that the two agree).

//! The AVX2 path's ladder step and field multiplication, as inline
//! assembly written by `gen/avx2.py`, whose docstrings say how each
//! operation computes (`avx2.rs` states the representation and bounds).
//!
//! Every block reads and writes memory only through the pointers it is
//! given, each derived from a reference to the value (a [`State`] or an
//! [`Fe`]) that the block stays inside, uses no stack, and declares every
//! vector register and its scratch GPR clobbered. Every instruction is
//! AVX2 or older, and the functions are `#[target_feature(enable =
//! "avx2")]`, reached only from `avx2::kernel` (called only once `super`
//! saw AVX2). No branch, and no address, depends on the data: the only
//! data-dependent operation is the swap, done with masks.

use core::arch::asm;
use core::arch::x86_64::__m256i;
use core::mem::offset_of;

use zeroize::Zeroize;

/// A field element of each of the four lanes.
pub(super) type Fe = [__m256i; {LIMBS}];

/// The ladder's state: the two points, the base point, the swap mask, and
/// one step's temporaries. Every field is a whole number of 32-byte limbs,
/// so `repr(C)` lays them out in order with no padding.
#[repr(C)]
pub(super) struct State {{
{fields}}}

impl State {{
    /// A state with `x2`, `z2`, `x3`, `z3`, `x1`, `x1_19` given, no swap,
    /// and zeroed temporaries.
    #[target_feature(enable = "avx2")]
    pub(super) fn new(points: [Fe; 4], x1: Fe, x1_19: Fe) -> Self {{
        let [x2, z2, x3, z3] = points;
        let fe = [zero(); {LIMBS}];
        Self {{
            x2,
            z2,
            x3,
            z3,
            x1,
            x1_19,
            swap: zero(),
{"".join(f"            {name}: fe,{chr(10)}" for name in SCRATCH)}        }}
    }}
}}

impl Zeroize for State {{
    fn zeroize(&mut self) {{
{wipe}    }}
}}

/// One ladder step: swaps the points where `swap` says, then
/// `(x_2, z_2) ← 2·(x_2, z_2)` and `(x_3, z_3) ← (x_2, z_2) + (x_3, z_3)`
/// (differential addition with base point `x_1`).
#[target_feature(enable = "avx2")]
pub(super) fn step(state: &mut State) {{
    let s: *mut State = state;
    // SAFETY: the block reads and writes only `*state`, through `s`,
    // derived from the `&mut`, at its fields' offsets plus at most 288
    // (the last limb of an `Fe`); its instructions need AVX2, which this
    // function's callers checked (module documentation).
    unsafe {{
        asm!(
{step_block}        );
    }}
}}

/// `f·g`, carried (operands below 3·2^26 + 2^16 per limb).
#[target_feature(enable = "avx2")]
pub(super) fn mul(f: &Fe, g: &Fe) -> Fe {{
    let mut h: Fe = [zero(); {LIMBS}];
    let mut w: Fe = [zero(); {LIMBS}];
    // SAFETY: the block reads `*f` and `*g` and writes `h` and `w` (each
    // a whole `Fe`, offsets below 320), through pointers derived from
    // those references; AVX2 as for `step`.
    unsafe {{
        asm!(
{mul_block}        );
    }}
    w.zeroize();
    h
}}

/// `f²`, carried (limbs below 3·2^26 + 2^16).
#[target_feature(enable = "avx2")]
pub(super) fn sqr(f: &Fe) -> Fe {{
    let mut h: Fe = [zero(); {LIMBS}];
    let mut w: Fe = [zero(); {LIMBS}];
    // SAFETY: the block reads `*f` and writes `h` and `w` (offsets below
    // 320), through pointers derived from those references; AVX2 as for
    // `step`.
    unsafe {{
        asm!(
{sqr_block}        );
    }}
    w.zeroize();
    h
}}

#[target_feature(enable = "avx2")]
#[inline]
fn zero() -> __m256i {{
    core::arch::x86_64::_mm256_setzero_si256()
}}
'''


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "src", "x86", "avx2_asm.rs")
    text = rust()
    if "--check" in sys.argv:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{path} is not what gen/avx2.py writes: run it", file=sys.stderr)
                sys.exit(1)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
