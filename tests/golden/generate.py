#!/usr/bin/python3
"""Writes the golden files of Locus's differential test against PyTorch.

Run with Debian's python3-torch (PyTorch 1.13):  /usr/bin/python3 tests/golden/generate.py
Each family goes to tests/golden/<family>.txt.gz; tests/golden/README.md describes the format,
tests/golden/golden_test.cpp replays the files on every device. The output is deterministic:
rerunning this script gives byte-identical files.
"""

import gzip
import math
import os
import random
import re
import sys
import zlib

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
torch.set_default_dtype(torch.float32)

HERE = os.path.dirname(os.path.abspath(__file__))
nan, inf = math.nan, math.inf

DT = {
    'bool': torch.bool, 'uint8': torch.uint8, 'int8': torch.int8, 'int16': torch.int16,
    'int32': torch.int32, 'int64': torch.int64, 'float16': torch.float16,
    'bfloat16': torch.bfloat16, 'float32': torch.float32, 'float64': torch.float64,
}
NAME = {v: k for k, v in DT.items()}
ALL = list(DT)
INTS = ['uint8', 'int8', 'int16', 'int32', 'int64']
FLOATS = ['float16', 'bfloat16', 'float32', 'float64']
SIGNED = ['int8', 'int16', 'int32', 'int64'] + FLOATS


def is_float(d):
    return d in FLOATS


def is_int(d):
    return d in INTS


def irange(d):
    return (torch.iinfo(DT[d]).min, torch.iinfo(DT[d]).max)


# ---- formatting ---------------------------------------------------------------------------------

def ffmt(v):
    """A float, exactly: integers below 2**53 in decimal, others as C99 hex floats."""
    v = float(v)
    if math.isnan(v):
        return 'nan'
    if math.isinf(v):
        return 'inf' if v > 0 else '-inf'
    if v == 0:
        return '-0' if math.copysign(1, v) < 0 else '0'
    if v.is_integer() and abs(v) < 2 ** 53:
        return str(int(v))
    mant, exp = v.hex().split('p')
    mant = mant.rstrip('0').rstrip('.')
    return mant + 'p' + exp


def vfmt(t):
    d = NAME[t.dtype]
    flat = t.detach().reshape(-1).tolist()
    if d == 'bool':
        return ' '.join('1' if x else '0' for x in flat)
    if is_int(d):
        return ' '.join(str(int(x)) for x in flat)
    return ' '.join(ffmt(x) for x in flat)


def sfmt(shape):
    return '[' + ','.join(str(s) for s in shape) + ']'


class Num:
    """A Python number argument; its kind (int, float, bool) matters for type promotion."""

    def __init__(self, v):
        self.v = v

    def tok(self):
        if isinstance(self.v, bool):
            return 'b:' + ('1' if self.v else '0')
        if isinstance(self.v, int):
            return 'i:' + str(self.v)
        return 'f:' + ffmt(self.v)


def argfmt(k, v):
    if isinstance(v, Num):
        return '%s=%s' % (k, v.tok())
    if isinstance(v, bool):
        return '%s=%d' % (k, v)
    if isinstance(v, float):
        return '%s=%s' % (k, ffmt(v))
    if isinstance(v, (list, tuple)):
        return '%s=%s' % (k, ','.join(str(x) for x in v))
    return '%s=%s' % (k, v)


def pyval(v):
    return v.v if isinstance(v, Num) else v


# ---- inputs and views ---------------------------------------------------------------------------

def T(values, dtype, shape=None):
    t = torch.tensor(values, dtype=torch.float64 if is_float(dtype) else None)
    if not is_float(dtype) and dtype != 'bool':
        t = torch.tensor(values, dtype=torch.int64)
    if dtype == 'bool':
        t = torch.tensor([bool(x) for x in values], dtype=torch.bool)
    t = t.to(DT[dtype])
    return t.reshape(shape) if shape is not None else t


def make_view(t, view):
    """The strided view the C++ side builds for `view` (values are those of t)."""
    if view is None:
        return t
    if view == 't':
        return t.transpose(-2, -1).contiguous().transpose(-2, -1)
    if view == 'step2':
        base_shape = list(t.shape)
        base_shape[-1] *= 2
        base = torch.full(base_shape, 99 if t.dtype != torch.bool else 1, dtype=t.dtype)
        base[..., 0::2] = t
        return base[..., 0::2]
    if view == 'expand':
        assert bool(((t == t[0:1]) | (t != t)).all()), 'expand needs equal rows'
        return t[0:1].contiguous().expand(t.shape)
    raise ValueError(view)


class In:
    def __init__(self, name, t, view=None, rg=False):
        self.name, self.t, self.view, self.rg = name, t, view, rg


# ---- running PyTorch and writing cases ----------------------------------------------------------

NOT_IMPL_HALF = re.compile(r"not implemented for '(Half|BFloat16)'")


def errline(e):
    msg = ' '.join(str(e).strip().split('\n')[0].split())
    words = msg.split(' ')
    return 'err %s %s' % (type(e).__name__, ' '.join(words[:12]))


def as_tuple(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


ALL_IDS = set()


class Family:
    def __init__(self, name, prefix=''):
        self.name = name
        self.prefix = prefix
        self.lines = []
        self.count = 0
        self.upcasts = 0
        self.errors = 0

    def case(self, cid, op, args, ins, fn, gout=None, upcast=False):
        """One case: runs fn on the inputs (views applied) and records outputs, an error, or
        with gout, the gradients of the inputs marked rg."""
        cid = self.prefix + cid
        assert cid not in ALL_IDS, cid  # ids are unique across the families
        assert ' ' not in cid
        ALL_IDS.add(cid)
        self.count += 1
        args = dict(args)
        tensors = [make_view(i.t, i.view) for i in ins]
        body = []
        if gout is None:
            outs, err, upcast = self.run(fn, tensors, upcast)
        else:
            leaves = [t.detach().clone().requires_grad_(i.rg) for t, i in zip(tensors, ins)]
            try:
                out = fn(*leaves)
                out.backward(gout(out) if callable(gout) else gout)
                outs, err, upcast = (out.detach(),), None, False
            except Exception as e:  # noqa: BLE001
                outs, err, upcast = None, e, False
        if upcast:
            args['ref'] = 'f32'
            self.upcasts += 1
        head = 'case %s %s' % (cid, op)
        if args:
            head += ' ' + ' '.join(argfmt(k, v) for k, v in args.items())
        body.append(head)
        for i, t in zip(ins, tensors):
            tags = []
            if i.view:
                tags.append('view=' + i.view)
            if i.rg:
                tags.append('rg=1')
            parts = ['in', i.name, NAME[i.t.dtype], sfmt(i.t.shape)] + tags
            vals = vfmt(i.t)
            body.append(' '.join(parts) + (' ' + vals if vals else ''))
        if gout is not None and err is None:
            g = gout(outs[0]) if callable(gout) else gout
            vals = vfmt(g)
            body.append(' '.join(['in', 'gout', NAME[g.dtype], sfmt(g.shape)]) + (' ' + vals if vals else ''))
        if err is not None:
            self.errors += 1
            body.append(errline(err))
        else:
            for o in outs:
                vals = vfmt(o)
                body.append(' '.join(['out', NAME[o.dtype], sfmt(o.shape)]) + (' ' + vals if vals else ''))
            if gout is not None:
                for i, leaf in zip(ins, leaves):
                    if i.rg:
                        gr = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
                        vals = vfmt(gr)
                        body.append(' '.join(['grad', i.name, NAME[gr.dtype], sfmt(gr.shape)]) + (' ' + vals if vals else ''))
        self.lines.extend(body)

    @staticmethod
    def run(fn, tensors, force_upcast=False):
        try:
            if force_upcast:
                raise RuntimeError("reference computed in float32: not implemented for 'Half'")
            return as_tuple(fn(*tensors)), None, False
        except Exception as e:  # noqa: BLE001
            if not NOT_IMPL_HALF.search(str(e)):
                return None, e, False
            # PyTorch's CPU lacks this float16/bfloat16 kernel. PyTorch's CUDA kernels compute
            # in float32 and round the result, and so do Locus's: that is the reference.
            try:
                meta = as_tuple(fn(*[t.to('meta') for t in tensors]))
            except Exception:  # noqa: BLE001
                return None, e, False
            up = [t.float() if t.dtype in (torch.float16, torch.bfloat16) else t for t in tensors]
            try:
                outs = as_tuple(fn(*up))
            except Exception:  # noqa: BLE001
                return None, e, False
            return tuple(o.to(m.dtype) for o, m in zip(outs, meta)), None, True

    def write(self):
        data = ('\n'.join(self.lines) + '\n').encode()
        path = os.path.join(HERE, self.name + '.txt.gz')
        with open(path, 'wb') as f:
            f.write(gzip.compress(data, compresslevel=9, mtime=0))
        print('%-12s %5d cases (%d errors, %d float32 references) %7d bytes' %
              (self.name, self.count, self.errors, self.upcasts, os.path.getsize(path)))
        return os.path.getsize(path)


def rng_for(key):
    return random.Random(zlib.crc32(key.encode()))


# ---- value pools --------------------------------------------------------------------------------

INT_POOL = {
    'bool': [0, 1],
    'uint8': [0, 1, 2, 3, 7, 100, 200, 255],
    'int8': [-128, -100, -7, -3, -1, 0, 1, 2, 3, 7, 100, 127],
    'int16': [-32768, -1000, -7, -3, -1, 0, 1, 2, 3, 7, 1000, 32767],
    'int32': [-2 ** 31, -100000, -7, -3, -1, 0, 1, 2, 3, 7, 100000, 2 ** 31 - 1],
    'int64': [-2 ** 63, -2 ** 40, -7, -3, -1, 0, 1, 2, 3, 7, 2 ** 40, 2 ** 63 - 1],
}
FLOAT_EDGE = [nan, inf, -inf, -0.0, 0.0, 0.5, -1.5, 2.25, -3.0, 7.0, 1e-3, 100.0, 3.0]
FLOAT_LIMITS = {  # largest finite, smallest normal, smallest subnormal
    'float16': (65504.0, 2.0 ** -14, 2.0 ** -24),
    'bfloat16': (float(torch.finfo(torch.bfloat16).max), 2.0 ** -126, 2.0 ** -133),
    'float32': (float(torch.finfo(torch.float32).max), 2.0 ** -126, 2.0 ** -149),
    'float64': (sys.float_info.max, sys.float_info.min, 5e-324),
}
UNARY_EXTRA = [1e-8, -1e-8, 0.25, -0.25, 0.75, 1.0, -1.0, 1.5, 2.5, -2.5, -0.5, 10.0, -10.0, 20.0,
               -100.0, 88.5, 710.0, 3.14159265358979, 0.49999997]


def pool(d):
    if d in INT_POOL:
        return list(INT_POOL[d])
    mx, mn, sub = FLOAT_LIMITS[d]
    return FLOAT_EDGE + [mx, -mx, mn, sub]


def rounded(v, d):
    """v as dtype d holds it (floats round; ints are taken as they are)."""
    if is_float(d):
        return torch.tensor([v], dtype=torch.float64).to(DT[d]).item()
    return v


def result_type(da, db):
    return NAME[torch.promote_types(DT[da], DT[db])]


# ---- leaving out what PyTorch itself does not define ------------------------------------------
#
# PyTorch's CPU kernels have a vectorized path (contiguous inputs) and a scalar one (strided
# inputs); at the extremes they disagree (fmod(0.5, 2**-149) is 0 through one and NaN through the
# other, maximum(0.0, -0.0) is 0.0 or -0.0), and a few unary results are far off the correctly
# rounded value (log1p(FLT_MAX) is inf). Such elements are implementation artefacts, not
# semantics: the generator leaves them out (DROPPED counts them) instead of recording them.

DROPPED = {}


def note_dropped(key, n):
    if n:
        DROPPED[key] = DROPPED.get(key, 0) + n


def tol(d, y):
    if d == 'float16':
        return 2.0 ** (max(math.frexp(y)[1] - 1, -14) - 10) if y else 2.0 ** -24
    if d == 'bfloat16':
        return 2.0 ** (max(math.frexp(y)[1] - 1, -126) - 7) if y else 2.0 ** -133
    if d == 'float32':
        return 1e-6 * abs(y) + 1.5e-45
    return 1e-12 * abs(y) + 5e-324


def same_value(x, y, d, rel=None):
    if d not in FLOATS:
        return x == y
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    if x == 0 and y == 0:
        return math.copysign(1, x) == math.copysign(1, y)
    if rel is not None:
        return abs(x - y) <= rel * abs(y) + 4 * tol(d, 0)
    return abs(x - y) <= tol(d, y)


def stable_mask(fn, cols, dtypes):
    """For each element of the columns (one per input): whether PyTorch gives the same result
    through its vectorized (contiguous) and its scalar (strided) CPU path."""
    n = len(cols[0])
    if n == 0:
        return []
    m = ((n + 63) // 64) * 64
    contig = [T(list(c) + [c[0]] * (m - n), d) for c, d in zip(cols, dtypes)]
    strided = [T([v for v in c for _ in (0, 1)], d)[0::2] for c, d in zip(cols, dtypes)]
    rv, ev, _ = Family.run(fn, contig)
    rs, es, _ = Family.run(fn, strided)
    if ev is not None or es is not None:
        return [True] * n
    mask = [True] * n
    for ov, osc in zip(rv, rs):
        d = NAME[ov.dtype]
        a, b = ov.reshape(-1)[:n].tolist(), osc.reshape(-1).tolist()
        for k in range(n):
            if not same_value(a[k], b[k], d):
                mask[k] = False
    return mask


def _ref_exp(x):
    return inf if x > 709.78 else math.exp(x)


def _ref_sigmoid(x):
    if math.isnan(x):
        return nan
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x) if x > -745 else 0.0
    return e / (1.0 + e)


def _ref_log(x, f):
    if math.isnan(x) or x < 0:
        return nan
    return -inf if x == 0 else f(x)


MATH_REF = {
    'exp': _ref_exp,
    'expm1': lambda x: inf if x > 709.78 else math.expm1(x),
    'log': lambda x: _ref_log(x, math.log),
    'log1p': lambda x: nan if (math.isnan(x) or x < -1) else -inf if x == -1 else math.log1p(x),
    'sqrt': lambda x: nan if (math.isnan(x) or x < 0) else math.sqrt(x),
    'rsqrt': lambda x: nan if (math.isnan(x) or x < 0) else math.copysign(inf, x) if x == 0 else 1 / math.sqrt(x),
    'sin': lambda x: nan if math.isinf(x) else math.sin(x),
    'cos': lambda x: nan if math.isinf(x) else math.cos(x),
    'tanh': math.tanh, 'erf': math.erf, 'sigmoid': _ref_sigmoid,
    'gelu': lambda x: nan if x == -inf else 0.5 * x * math.erfc(-x / math.sqrt(2)),
}


def accurate_mask(name, vals, d, out):
    """For a floating unary op: whether PyTorch's result is within 1% of the correctly rounded
    value (catches results such as log1p(FLT_MAX) = inf, not ulp differences)."""
    f = MATH_REF.get(name)
    if f is None or not is_float(d) or out is None:
        return [True] * len(vals)
    got = out[0].reshape(-1).tolist()
    mask = []
    xs = T(vals, d).double().tolist()
    for x, g in zip(xs, got):
        ref = torch.tensor([f(x)], dtype=torch.float64).to(out[0].dtype).item()
        mask.append(same_value(g, ref, NAME[out[0].dtype], rel=1e-2) or (g == 0 and ref == 0))
    return mask


def keep(vals, mask):
    return [v for v, k in zip(vals, mask) if k]


# ---- elementwise ----------------------------------------------------------------------------

DIVLIKE = {'div_trunc', 'div_floor', 'floor_divide', 'remainder', 'fmod'}
ARITH = {'add', 'sub', 'mul', 'add_alpha', 'sub_alpha', 'pow'}


def torch_binary(name):
    return {
        'add': torch.add, 'sub': torch.sub, 'mul': torch.mul, 'div': torch.div,
        'div_trunc': lambda a, b: torch.div(a, b, rounding_mode='trunc'),
        'div_floor': lambda a, b: torch.div(a, b, rounding_mode='floor'),
        'floor_divide': torch.floor_divide, 'remainder': torch.remainder, 'fmod': torch.fmod,
        'pow': torch.pow, 'maximum': torch.maximum, 'minimum': torch.minimum,
        'eq': torch.eq, 'ne': torch.ne, 'lt': torch.lt, 'le': torch.le, 'gt': torch.gt, 'ge': torch.ge,
        'logical_and': torch.logical_and, 'logical_or': torch.logical_or, 'logical_xor': torch.logical_xor,
    }[name]


BINARY = ['add', 'sub', 'mul', 'div', 'div_trunc', 'div_floor', 'floor_divide', 'remainder', 'fmod',
          'pow', 'maximum', 'minimum', 'eq', 'ne', 'lt', 'le', 'gt', 'ge',
          'logical_and', 'logical_or', 'logical_xor']
NO_NUMBER_OVERLOAD = {'maximum', 'minimum', 'logical_and', 'logical_or', 'logical_xor'}


def op_and_args(name):
    """The op name and arguments written for BINARY entry `name`."""
    if name == 'div_trunc':
        return 'div', {'rounding': 'trunc'}
    if name == 'div_floor':
        return 'div', {'rounding': 'floor'}
    return name, {}


def exact_int(name, a, b, alpha=1):
    if name in ('add', 'add_alpha'):
        return a + alpha * b
    if name in ('sub', 'sub_alpha'):
        return a - alpha * b
    if name == 'mul':
        return a * b
    if name == 'pow':
        return a ** b if b >= 0 else 0
    return 0


def pair_ok(name, a, b, rt, alpha=1):
    """Whether (a, b) is a defined, non-UB input pair for op `name` with result dtype rt."""
    if not is_int(rt):
        return True
    lo, hi = irange(rt)
    if name in DIVLIKE:
        return b != 0 and not (a == lo and b == -1)
    if name == 'pow':
        if b < 0 or b > 5:
            return False
        if rt in ('int32', 'int64'):
            return lo <= a ** b <= hi
        return True
    if name in ARITH and rt in ('int32', 'int64'):
        # Signed overflow in the result's own width is undefined in C++ (and trips UBSan).
        return lo <= exact_int(name, a, b, alpha) <= hi
    return True


def pick_pairs(name, da, db, rt, n, key, alpha=1, fn=None):
    cands = []
    for a in pool(da):
        for b in pool(db):
            av, bv = a, b
            if is_int(rt) or rt == 'bool':
                av, bv = int(a), int(b)
            if pair_ok(name, av, bv, rt, alpha):
                cands.append((a, b))
    if fn is not None and cands:
        mask = stable_mask(fn, [[a for a, _ in cands], [b for _, b in cands]], [da, db])
        note_dropped(name, len(cands) - sum(mask))
        cands = keep(cands, mask)
    r = rng_for(key)
    if len(cands) <= n:
        return cands
    return r.sample(cands, n)


def gen_elementwise():
    F = Family('elementwise')

    # Every binary op on every dtype pair, tensor with tensor.
    for name in BINARY:
        op, args = op_and_args(name)
        fn = torch_binary(name)
        for da in ALL:
            for db in ALL:
                rt = result_type(da, db)
                pairs = pick_pairs(name, da, db, rt, 12, 'tt/%s/%s/%s' % (name, da, db), fn=fn)
                a = T([p[0] for p in pairs], da, [3, 4] if len(pairs) == 12 else None)
                b = T([p[1] for p in pairs], db, [3, 4] if len(pairs) == 12 else None)
                F.case('%s/tt/%s-%s' % (name, da, db), op, args, [In('a', a), In('b', b)], fn)

    # Full products of the float edge values (every special pair), float32 and float64.
    for name in BINARY:
        op, args = op_and_args(name)
        fn = torch_binary(name)
        for d in ('float32', 'float64'):
            p = pool(d)
            xs, ys = [x for x in p for _ in p], [y for _ in p for y in p]
            mask = stable_mask(fn, [xs, ys], [d, d])
            note_dropped(name, len(xs) - sum(mask))
            a, b = T(keep(xs, mask), d), T(keep(ys, mask), d)
            F.case('%s/edges/%s' % (name, d), op, args, [In('a', a), In('b', b)], fn)

    # add and sub with alpha.
    for name in ('add', 'sub'):
        fn = torch_binary(name)
        for d in ALL:
            alphas = [Num(2), Num(-3)] if is_int(d) else [Num(True)] if d == 'bool' else [Num(2.5), Num(-0.5), Num(2)]
            for al in alphas:
                pairs = pick_pairs(name + '_alpha', d, d, d, 8, 'alpha/%s/%s' % (name, d), alpha=al.v,
                                   fn=lambda a, b, al=al.v, fn=fn: fn(a, b, alpha=al))
                a, b = T([x for x, _ in pairs], d), T([y for _, y in pairs], d)
                F.case('%s/alpha/%s/%s' % (name, d, al.tok()), name, {'alpha': al}, [In('a', a), In('b', b)],
                       lambda a, b, al=al.v, fn=fn: fn(a, b, alpha=al))
        for d in ('int64', 'uint8'):  # a float alpha with integer tensors is refused
            a, b = T([1, 2], d), T([3, 4], d)
            F.case('%s/alpha/%s/float_alpha_error' % (name, d), name, {'alpha': Num(1.5)}, [In('a', a), In('b', b)],
                   lambda a, b, fn=fn: fn(a, b, alpha=1.5))

    # Tensor with a Python number on the right.
    for name in BINARY:
        op, args = op_and_args(name)
        fn = torch_binary(name)
        for d in ALL:
            nums = [Num(True)]
            nums += [Num(3), Num(5 if d in ('uint8', 'bool') else -2)]
            nums += [Num(2.5), Num(-0.75)]
            for num in nums:
                rt = NAME[torch.result_type(torch.empty(0, dtype=DT[d]), num.v)]
                vals = []
                for a in pool(d):
                    av = int(a) if (is_int(rt) or rt == 'bool') else a
                    bv = int(num.v) if (is_int(rt) or rt == 'bool') else num.v
                    if pair_ok(name, av, bv, rt):
                        vals.append(a)
                if name == 'pow' and not is_float(rt) and num.v < 0:
                    vals = pool(d)[:4]  # integers to a negative integer power: an error
                a2 = dict(args)
                a2['other'] = num
                if name in NO_NUMBER_OVERLOAD:
                    # No number overload in PyTorch: a 0-dim tensor of the promoted dtype holds the
                    # number as a wrapped Python number would (bool for the logical ops).
                    wd = 'bool' if name.startswith('logical') else rt
                    f = (lambda x, fn=fn, v=num.v, wd=wd: fn(x, torch.tensor(v).to(DT[wd])))
                else:
                    f = (lambda x, fn=fn, v=num.v: fn(x, v))
                mask = stable_mask(f, [vals], [d])
                note_dropped(name, len(vals) - sum(mask))
                x = T(keep(vals, mask), d)
                F.case('%s/ts/%s/%s' % (name, d, num.tok()), op, a2, [In('a', x)], f)

    # Number on the left: 2.5 - t, 3 / t, 2 + t, 2 * t.
    rops = {'rsub': lambda v: (lambda x: v - x), 'rdiv': lambda v: (lambda x: v / x),
            'radd': lambda v: (lambda x: v + x), 'rmul': lambda v: (lambda x: v * x)}
    for name, mk in rops.items():
        for d in ALL:
            for num in (Num(3), Num(2.5), Num(True)):
                vals = pool(d)
                if d in ('int32', 'int64'):
                    vals = [v for v in vals if abs(v) < 2 ** 30]
                mask = stable_mask(mk(num.v), [vals], [d])
                note_dropped(name, len(vals) - sum(mask))
                F.case('%s/%s/%s' % (name, d, num.tok()), name, {'other': num}, [In('a', T(keep(vals, mask), d))], mk(num.v))

    # Numbers outside the tensor dtype's range: PyTorch 1.13 wraps them into it.
    for d, num, name in (('uint8', -1, 'add'), ('uint8', 300, 'add'), ('int8', 1000, 'mul'),
                         ('uint8', -1, 'eq'), ('int8', 200, 'lt')):
        x = T([1, 2, 100], d)
        F.case('%s/ts_out_of_range/%s/i:%d' % (name, d, num), name, {'other': Num(num)}, [In('a', x)],
               lambda x, fn=torch_binary(name), v=num: fn(x, v))

    # Numbers a 16-bit (or 32-bit) tensor cannot hold: PyTorch computes with the number in the
    # op's math type (float32 for float16 and bfloat16), not rounded to the tensor's dtype first.
    for d in ('float16', 'bfloat16', 'float32'):
        x = T([1000.0, 1.0, -3.0, 0.1, 60000.0, 0.0], d)
        for name in ('add', 'sub', 'mul', 'div', 'eq', 'lt', 'maximum', 'remainder'):
            op, args = op_and_args(name)
            fn = torch_binary(name)
            for v in (1e5, 1e-5, 1.0000001, 1e-40, 1e39, 0.1):
                a2 = dict(args)
                a2['other'] = Num(v)
                if name in NO_NUMBER_OVERLOAD:
                    f = (lambda x, fn=fn, v=v: fn(x, torch.tensor(v, dtype=torch.float64).to(x.dtype)))
                else:
                    f = (lambda x, fn=fn, v=v: fn(x, v))
                F.case('%s/ts_precision/%s/%s' % (name, d, Num(v).tok()), op, a2, [In('a', x)], f)
    # 0-dim tensors with numbers: both rank as scalars, the tensor's category decides.
    for d in ALL:
        x = T([pool(d)[-2]], d).reshape(())
        for name in ('add', 'mul', 'div', 'lt'):
            op, args = op_and_args(name)
            for num in (Num(3), Num(2.5), Num(True)):
                a2 = dict(args)
                a2['other'] = num
                F.case('%s/0dim_number/%s/%s' % (name, d, num.tok()), op, a2, [In('a', x)],
                       lambda x, fn=torch_binary(name), v=num.v: fn(x, v))
    # In-place forms keep the left operand's dtype; a result that cannot be cast to it is an error.
    inplace = {'add_': lambda a, b: a.clone().add_(b), 'sub_': lambda a, b: a.clone().sub_(b),
               'mul_': lambda a, b: a.clone().mul_(b), 'div_': lambda a, b: a.clone().div_(b)}
    for name, fn in inplace.items():
        base = name[:-1]
        for da in ALL:
            for db in ALL:
                rt = result_type(da, db)
                pairs = pick_pairs(base, da, db, rt, 6, 'inplace/%s/%s/%s' % (name, da, db), fn=torch_binary(base))
                a, b = T([p[0] for p in pairs], da), T([p[1] for p in pairs], db)
                if is_float(rt) and is_int(da) or da == 'bool' and rt != 'bool':
                    a, b = a[:2], b[:2]  # an error: a short case is enough
                F.case('%s/%s-%s' % (name, da, db), name, {}, [In('a', a), In('b', b)], fn)
            for num in (Num(2), Num(1.5), Num(True)):
                rt = NAME[torch.result_type(torch.empty(0, dtype=DT[da]), num.v)]
                vals = [a for a in pool(da)[-4:]
                        if pair_ok(base, a if is_float(rt) else int(a), num.v if is_float(rt) else int(num.v), rt)]
                F.case('%s/number/%s/%s' % (name, da, num.tok()), name, {'other': num}, [In('a', T(vals, da))],
                       lambda a, fn=fn, v=num.v: fn(a, v))

    # Integer division by zero and negative integer powers raise in PyTorch.
    for name in ('div_trunc', 'div_floor', 'floor_divide', 'remainder', 'fmod'):
        op, args = op_and_args(name)
        for d in ('int64', 'int32', 'uint8'):
            a, b = T([5, 6, 7], d), T([1, 0, 2], d)
            F.case('%s/zero_division/%s' % (name, d), op, args, [In('a', a), In('b', b)], torch_binary(name))
    # Results that fit, from bases whose square does not (2**31 - 1 to the power 1, ...).
    for d in ('int32', 'int64'):
        lo, hi = irange(d)
        a, b = T([hi, lo, 46341, -46341 if d == 'int32' else 3037000500, 100000], d), T([1, 1, 1, 1, 1], d)
        F.case('pow/base_square_overflows/%s' % d, 'pow', {}, [In('a', a), In('b', b)], torch.pow)
    for d in ('int64', 'int8'):
        a, b = T([2, 3, -1, 1, 0], d), T([-1, -2, -3, -2, 2], d)
        F.case('pow/negative_int_exponent_tensor/%s' % d, 'pow', {}, [In('a', a), In('b', b)], torch.pow)
    # Overflowing small integers wrap (the arithmetic is done wider, then narrowed).
    for d in ('uint8', 'int8', 'int16'):
        lo, hi = irange(d)
        a, b = T([hi, lo, hi, lo], d), T([1, -1 if d != 'uint8' else 1, hi, lo], d)
        for name in ('add', 'sub', 'mul'):
            F.case('%s/wrap/%s' % (name, d), name, {}, [In('a', a), In('b', b)], torch_binary(name))
        F.case('neg/wrap/%s' % d, 'neg', {}, [In('x', T([lo, hi], d))], torch.neg)
        F.case('abs/wrap/%s' % d, 'abs', {}, [In('x', T([lo, hi], d))], torch.abs)

    # 0-dim tensors mixed with dimensioned ones: 0-dim operands rank below dimensioned ones.
    for name in ('add', 'mul', 'div', 'maximum', 'lt', 'remainder'):
        op, args = op_and_args(name)
        fn = torch_binary(name)
        for da in ALL:
            for db in ALL:
                b0 = True if db == 'bool' else 3 if is_int(db) else 2.25
                rt0 = NAME[torch.result_type(torch.empty(2, dtype=DT[da]), torch.empty((), dtype=DT[db]))]
                vals = [a for a in pool(da)
                        if pair_ok(name, int(a) if not is_float(rt0) else a, int(b0) if not is_float(rt0) else b0, rt0)]
                vals = keep(vals, stable_mask(lambda a, fn=fn, b0=b0, db=db: fn(a, T([b0], db).reshape(())), [vals], [da]))
                a = T(rng_for('0d/%s/%s/%s' % (name, da, db)).sample(vals, min(6, len(vals))), da)
                F.case('%s/0dim_right/%s-%s' % (name, da, db), op, args, [In('a', a), In('b', T([b0], db).reshape(()))], fn)
    for da in ALL:
        for db in ALL:
            a0 = T([pool(da)[-1]], da).reshape(())
            b = T(pool(db)[:6], db)
            rt = NAME[torch.result_type(a0, b)]
            if is_int(rt):
                b = T([v for v in pool(db) if pair_ok('add', int(pool(da)[-1]), int(v), rt)][:6], db)
            F.case('add/0dim_left/%s-%s' % (da, db), 'add', {}, [In('a', a0), In('b', b)], torch.add)
            b0 = T([pool(db)[1]], db).reshape(())
            rt = result_type(da, db)
            av, bv = pool(da)[-1], pool(db)[1]
            if is_int(rt) and not pair_ok('mul', int(av), int(bv), rt):
                av = 3
            F.case('mul/0dim_both/%s-%s' % (da, db), 'mul', {}, [In('a', T([av], da).reshape(())), In('b', b0)], torch.mul)

    # Broadcasting.
    shapes = [([2, 3], [3]), ([2, 1, 3], [4, 1]), ([1], [2, 2]), ([3, 1], [1, 3]), ([], [2, 3]), ([2, 3], [2, 1])]
    for name in ('add', 'sub', 'mul', 'div', 'pow', 'maximum', 'eq', 'logical_and', 'remainder', 'fmod'):
        op, args = op_and_args(name)
        for d in ('float32', 'int64'):
            for sa, sb in shapes:
                r = rng_for('bc/%s/%s/%s/%s' % (name, d, sa, sb))
                na, nb = max(1, math.prod(sa)), max(1, math.prod(sb))
                if d == 'float32':
                    va = [r.choice([-2.5, -1, 0.5, 1.5, 3, 4.25]) for _ in range(na)]
                    vb = [r.choice([-2, 0.5, 1.25, 2, 3]) for _ in range(nb)]
                else:
                    va = [r.randint(-9, 9) for _ in range(na)]
                    vb = [r.choice([-3, -2, 1, 2, 3]) for _ in range(nb)]
                    if name == 'pow':
                        vb = [r.randint(0, 3) for _ in range(nb)]
                a, b = T(va, d, sa), T(vb, d, sb)
                F.case('%s/bcast/%s/%s-%s' % (name, d, sfmt(sa), sfmt(sb)), op, args, [In('a', a), In('b', b)],
                       torch_binary(name))
    for sa, sb in (([2, 3], [4]), ([2, 3], [3, 2]), ([0], [2])):
        a, b = torch.ones(sa), torch.ones(sb)
        F.case('add/bcast_error/%s-%s' % (sfmt(sa), sfmt(sb)), 'add', {}, [In('a', a), In('b', b)], torch.add)

    # Empty tensors.
    for name in ('add', 'mul', 'div', 'eq', 'maximum', 'logical_or', 'floor_divide', 'pow'):
        op, args = op_and_args(name)
        for sa, sb in (([0], [0]), ([2, 0], [1, 0]), ([0, 3], [3]), ([0], []), ([3, 0], [3, 1])):
            for d in ('float32', 'int32'):
                a, b = torch.zeros(sa, dtype=DT[d]), torch.ones(sb, dtype=DT[d])
                F.case('%s/empty/%s/%s-%s' % (name, d, sfmt(sa), sfmt(sb)), op, args, [In('a', a), In('b', b)],
                       torch_binary(name))

    # Non-contiguous operands: transposed, every other element, and broadcast (stride 0) views.
    for name in ('add', 'mul', 'div', 'maximum', 'eq', 'pow', 'sub', 'logical_xor', 'remainder'):
        op, args = op_and_args(name)
        for d in ('float32', 'int32', 'float16', 'bool', 'float64'):
            if d == 'bool' and name in ('sub', 'pow', 'remainder'):
                continue
            r = rng_for('view/%s/%s' % (name, d))
            base = [1, 2, 3, -1, 5, 7] if d != 'bool' else [0, 1]
            if d in FLOATS:
                base = [1.5, -2.0, 3.25, 0.5, -0.0, 4.0, nan]
            if d == 'uint8':
                base = [1, 2, 3, 5]
            for va, vb in (('t', None), (None, 't'), ('t', 't'), ('step2', 't'), ('expand', 'step2')):
                sa = [3, 4]
                x = [r.choice(base) for _ in range(12)]
                y = [r.choice([v for v in base if v not in (0, -0.0) and not (isinstance(v, float) and math.isnan(v))] or [1])
                     for _ in range(12)]
                if va == 'expand':
                    x = x[:4] * 3
                if name == 'pow' and d != 'float32' and d not in FLOATS:
                    y = [abs(v) % 3 for v in y]
                a, b = T(x, d, sa), T(y, d, sa)
                F.case('%s/view/%s/%s-%s' % (name, d, va or 'c', vb or 'c'), op, args,
                       [In('a', a, va), In('b', b, vb)], torch_binary(name))

    # Unary ops on every dtype.
    unary = {'neg': torch.neg, 'abs': torch.abs, 'sign': torch.sign, 'exp': torch.exp, 'expm1': torch.expm1,
             'log': torch.log, 'log1p': torch.log1p, 'sqrt': torch.sqrt, 'rsqrt': torch.rsqrt, 'sin': torch.sin,
             'cos': torch.cos, 'tanh': torch.tanh, 'sigmoid': torch.sigmoid, 'erf': torch.erf, 'relu': torch.relu,
             'gelu': torch.nn.functional.gelu, 'floor': torch.floor, 'ceil': torch.ceil, 'round': torch.round,
             'trunc': torch.trunc, 'logical_not': torch.logical_not}
    for name, fn in unary.items():
        for d in ALL:
            vals = pool(d)
            if is_float(d):
                vals = vals + UNARY_EXTRA
                if d == 'float64':
                    vals.append(4503599627370497.0)
            elif name in ('neg', 'abs') and d in ('int32', 'int64'):
                vals = vals[1:]  # -INT_MIN is undefined
            mask = stable_mask(fn, [vals], [d])
            out, _, _ = Family.run(fn, [T(vals, d)])
            mask = [m and a for m, a in zip(mask, accurate_mask(name, vals, d, out))]
            note_dropped(name, len(vals) - sum(mask))
            F.case('%s/%s' % (name, d), name, {}, [In('x', T(keep(vals, mask), d))], fn)
        for view in ('t', 'step2'):
            x = T([0.5, -1.25, 2.0, 3.5, -0.0, 7.0], 'float32', [2, 3])
            F.case('%s/view/%s' % (name, view), name, {}, [In('x', x, view)], fn)
        F.case('%s/empty' % name, name, {}, [In('x', torch.zeros([0, 2]))], fn)
        F.case('%s/0dim' % name, name, {}, [In('x', torch.tensor(-0.75))], fn)

    # clamp: min only, max only, both, min > max, NaN bounds; the bounds take part in promotion.
    for d in ALL:
        vals = pool(d)
        if is_float(d):
            vals = vals + [1.0, 4.0, 5.0, 6.0]
        for key, mn, mx in (('min_int', Num(1), None), ('max_int', None, Num(5)), ('both_int', Num(1), Num(5)),
                            ('min_gt_max_int', Num(5), Num(1)), ('min_float', Num(-0.5), None),
                            ('both_float', Num(-0.5), Num(2.5)), ('max_bool', None, Num(True))):
            args = {}
            if mn is not None:
                args['min'] = mn
            if mx is not None:
                args['max'] = mx
            F.case('clamp/%s/%s' % (key, d), 'clamp', args, [In('x', T(vals, d))],
                   lambda x, mn=mn, mx=mx: torch.clamp(x, min=pyval(mn), max=pyval(mx)))
    for d in ('float32', 'float64'):
        x = T([-1.0, 0.5, 3.0, nan], d)
        F.case('clamp/min_nan/%s' % d, 'clamp', {'min': Num(nan)}, [In('x', x)], lambda x: torch.clamp(x, min=nan))
        F.case('clamp/max_nan/%s' % d, 'clamp', {'max': Num(nan)}, [In('x', x)], lambda x: torch.clamp(x, max=nan))
    F.case('clamp/view/t', 'clamp', {'min': Num(0), 'max': Num(2)},
           [In('x', T([-1.0, 0.5, 3.0, 1.0, 2.0, -3.0], 'float32', [2, 3]), 't')], lambda x: torch.clamp(x, 0, 2))
    F.case('clamp/no_bounds_error', 'clamp', {}, [In('x', T([1.0], 'float32'))], lambda x: torch.clamp(x))

    # where: every dtype pair, broadcast, 0-dim, a non-bool condition.
    for da in ALL:
        for db in ALL:
            r = rng_for('where/%s/%s' % (da, db))
            c = T([r.random() < 0.5 for _ in range(8)], 'bool', [2, 4])
            a = T([r.choice(pool(da)) for _ in range(8)], da, [2, 4])
            b = T([r.choice(pool(db)) for _ in range(8)], db, [2, 4])
            F.case('where/%s-%s' % (da, db), 'where', {}, [In('cond', c), In('a', a), In('b', b)], torch.where)
    c = T([1, 0, 1], 'bool', [3, 1])
    F.case('where/bcast', 'where', {}, [In('cond', c), In('a', T([1.0, 2.0], 'float32')), In('b', T([-1.0], 'float64').reshape(()))],
           torch.where)
    F.case('where/view', 'where', {}, [In('cond', T([1, 0, 0, 1, 1, 0], 'bool', [2, 3]), 't'),
                                       In('a', T([1, 2, 3, 4, 5, 6], 'int64', [2, 3]), 'step2'),
                                       In('b', T([9, 8, 7, 9, 8, 7], 'int64', [2, 3]), 'expand')], torch.where)
    F.case('where/empty', 'where', {}, [In('cond', torch.zeros([0, 2], dtype=torch.bool)), In('a', torch.ones([0, 2])),
                                        In('b', torch.ones([2]))], torch.where)
    F.case('where/uint8_condition_error', 'where', {}, [In('cond', T([1, 0], 'uint8')), In('a', T([1.0, 2.0], 'float32')),
                                                        In('b', T([3.0, 4.0], 'float32'))], torch.where)
    return F


# ---- reductions and softmax -----------------------------------------------------------------

def red_values(d, n, key, special=False):
    r = rng_for(key)
    if d == 'bool':
        return [r.random() < 0.5 for _ in range(n)]
    if d == 'uint8':
        return [r.randint(0, 255) for _ in range(n)]
    if is_int(d):
        lo, hi = irange(d)
        big = min(hi, 2 ** 40)
        return [r.choice([r.randint(-9, 9), r.randint(-big // 64, big // 64)]) for _ in range(n)]
    vals = [r.randint(-32, 32) / 8 for _ in range(n)]
    if special:
        for i, v in zip(r.sample(range(n), 3), (nan, inf, -inf)):
            vals[i] = v
    return vals


def gen_reduce():
    F = Family('reduce')
    for d in ALL:
        x = T(red_values(d, 24, 'sum/' + d), d, [2, 3, 4])
        ins = [In('x', x)]
        F.case('sum/all/%s' % d, 'sum', {}, ins, torch.sum)
        F.case('sum/dim1/%s' % d, 'sum', {'dim': 1}, ins, lambda x: x.sum(1))
        F.case('sum/dims02_keepdim/%s' % d, 'sum', {'dims': [0, 2], 'keepdim': True}, ins, lambda x: x.sum([0, 2], keepdim=True))
        F.case('sum/dim-1_keepdim/%s' % d, 'sum', {'dim': -1, 'keepdim': True}, ins, lambda x: x.sum(-1, keepdim=True))
        F.case('sum/view_t/%s' % d, 'sum', {'dim': 0}, [In('x', x.reshape(4, 6), 't')], lambda x: x.sum(0))
        for od in ('float64', 'int64', 'float32', 'float16', 'int32'):
            if is_float(d) and is_int(od):
                continue  # float -> integer conversions: covered once below with in-range values
            F.case('sum/dtype_%s/%s' % (od, d), 'sum', {'dims': [1], 'dtype': od}, ins,
                   lambda x, od=od: x.sum([1], dtype=DT[od]))
        F.case('sum/empty/%s' % d, 'sum', {}, [In('x', torch.zeros([0], dtype=DT[d]))], torch.sum)
        F.case('sum/empty_dim/%s' % d, 'sum', {'dim': 1}, [In('x', torch.zeros([2, 0], dtype=DT[d]))], lambda x: x.sum(1))
        F.case('mean/all/%s' % d, 'mean', {}, ins, torch.mean)
        F.case('mean/dims01_keepdim/%s' % d, 'mean', {'dims': [0, 1], 'keepdim': True}, ins,
               lambda x: x.mean([0, 1], keepdim=True))
        F.case('mean/dim-1/%s' % d, 'mean', {'dim': -1}, ins, lambda x: x.mean(-1))
        F.case('mean/empty/%s' % d, 'mean', {}, [In('x', torch.zeros([0], dtype=DT[d]))], torch.mean)
        F.case('mean/empty_dim/%s' % d, 'mean', {'dim': 1}, [In('x', torch.zeros([3, 0], dtype=DT[d]))], lambda x: x.mean(1))

        xm = T(red_values(d, 12, 'max/' + d), d, [3, 4])
        if d != 'bool':  # ties: row 1 repeats its largest and smallest value
            row = xm[1].clone()
            xm[1] = torch.stack([row.max(), row.min(), row.max(), row.min()])
        ins = [In('x', xm)]
        for name in ('max', 'min'):
            f = getattr(torch, name)
            F.case('%s/all/%s' % (name, d), name, {}, ins, f)
            F.case('%s/dim0/%s' % (name, d), name, {'dim': 0}, ins, lambda x, f=f: tuple(f(x, 0)))
            F.case('%s/dim1_keepdim/%s' % (name, d), name, {'dim': 1, 'keepdim': True}, ins,
                   lambda x, f=f: tuple(f(x, 1, keepdim=True)))
            F.case('%s/dim-1_view_t/%s' % (name, d), name, {'dim': -1}, [In('x', xm, 't')], lambda x, f=f: tuple(f(x, -1)))
            F.case('%s/empty/%s' % (name, d), name, {}, [In('x', torch.zeros([0], dtype=DT[d]))], f)
            F.case('%s/empty_dim/%s' % (name, d), name, {'dim': 1}, [In('x', torch.zeros([2, 0], dtype=DT[d]))],
                   lambda x, f=f: tuple(f(x, 1)))
            F.case('%s/empty_other_dim/%s' % (name, d), name, {'dim': 1}, [In('x', torch.zeros([0, 3], dtype=DT[d]))],
                   lambda x, f=f: tuple(f(x, 1)))
        for name in ('argmax', 'argmin'):
            f = getattr(torch, name)
            F.case('%s/all/%s' % (name, d), name, {}, ins, f)
            F.case('%s/dim1/%s' % (name, d), name, {'dim': 1}, ins, lambda x, f=f: f(x, 1))
            F.case('%s/dim0_keepdim/%s' % (name, d), name, {'dim': 0, 'keepdim': True}, ins,
                   lambda x, f=f: f(x, 0, keepdim=True))
            F.case('%s/empty/%s' % (name, d), name, {}, [In('x', torch.zeros([0], dtype=DT[d]))], f)
            F.case('%s/empty_dim/%s' % (name, d), name, {'dim': 1}, [In('x', torch.zeros([2, 0], dtype=DT[d]))],
                   lambda x, f=f: f(x, 1))
    # Floating specials: NaN wins max/min (first NaN's index), infinities, -0.0 against 0.0.
    for d in FLOATS:
        x = T([1.0, nan, 3.0, nan, -inf, inf, 2.0, -0.0, 0.0, -1.0, 5.0, 5.0], d, [3, 4])
        ins = [In('x', x)]
        for name in ('max', 'min'):
            f = getattr(torch, name)
            F.case('%s/nan/%s' % (name, d), name, {}, ins, f)
            F.case('%s/nan_dim1/%s' % (name, d), name, {'dim': 1}, ins, lambda x, f=f: tuple(f(x, 1)))
            F.case('%s/nan_dim0/%s' % (name, d), name, {'dim': 0}, ins, lambda x, f=f: tuple(f(x, 0)))
        for name in ('argmax', 'argmin'):
            f = getattr(torch, name)
            F.case('%s/nan/%s' % (name, d), name, {}, ins, f)
            F.case('%s/nan_dim1/%s' % (name, d), name, {'dim': 1}, ins, lambda x, f=f: f(x, 1))
        xs = T(red_values(d, 24, 'sumspecial/' + d, special=True), d, [4, 6])
        F.case('sum/special/%s' % d, 'sum', {'dim': 1}, [In('x', xs)], lambda x: x.sum(1))
        F.case('mean/special/%s' % d, 'mean', {'dim': 0}, [In('x', xs)], lambda x: x.mean(0))
        r = rng_for('sumrand/' + d)
        xr = T([r.gauss(0, 3) for _ in range(30)], d, [5, 6])
        F.case('sum/random/%s' % d, 'sum', {'dim': 0}, [In('x', xr)], lambda x: x.sum(0))
        F.case('mean/random/%s' % d, 'mean', {}, [In('x', xr)], torch.mean)
        F.case('sum/random_step2/%s' % d, 'sum', {'dim': -1}, [In('x', xr, 'step2')], lambda x: x.sum(-1))
    # Long 16-bit sums: PyTorch accumulates in float32 and rounds once.
    for d in ('float16', 'bfloat16'):
        x = T([0.1] * 2048, d)
        F.case('sum/accumulate/%s' % d, 'sum', {}, [In('x', x)], torch.sum)
        F.case('mean/accumulate/%s' % d, 'mean', {}, [In('x', x)], torch.mean)
    x = T([60000.0, 60000.0, -60000.0, -50000.0], 'float16')
    F.case('sum/intermediate_overflow/float16', 'sum', {}, [In('x', x)], torch.sum)
    x = T([100, 100, 27, -128], 'int8')
    F.case('sum/dtype_int8/int8_wraps', 'sum', {'dims': [0], 'dtype': 'int8'}, [In('x', x)], lambda x: x.sum([0], dtype=torch.int8))
    # Floats converted to an integer dtype before summing (in-range values only).
    x = T([1.5, -2.75, 3.0, 100.25, -0.5, 7.0], 'float32', [2, 3])
    F.case('sum/dtype_int64/float32_inrange', 'sum', {'dims': [1], 'dtype': 'int64'}, [In('x', x)],
           lambda x: x.sum([1], dtype=torch.int64))
    F.case('sum/dims_empty_list', 'sum', {'dims': []}, [In('x', x)], lambda x: x.sum([]))
    F.case('sum/dim_out_of_range', 'sum', {'dim': 2}, [In('x', x)], lambda x: x.sum(2))
    F.case('max/dim_out_of_range', 'max', {'dim': -3}, [In('x', x)], lambda x: tuple(x.max(-3)))
    F.case('sum/0dim', 'sum', {'dim': 0}, [In('x', torch.tensor(2.5))], lambda x: x.sum(0))
    F.case('max/0dim', 'max', {'dim': 0}, [In('x', torch.tensor(2.5))], lambda x: tuple(x.max(0)))
    F.case('argmax/0dim', 'argmax', {}, [In('x', torch.tensor(2.5))], torch.argmax)

    # softmax and log_softmax.
    for name in ('softmax', 'log_softmax'):
        f = getattr(torch, name)
        for d in ALL:
            x = T(red_values(d, 12, 'sm/' + d), d, [3, 4])
            for dim in (0, 1, -1):
                F.case('%s/dim%d/%s' % (name, dim, d), name, {'dim': dim}, [In('x', x)], lambda x, f=f, dim=dim: f(x, dim))
        for d in FLOATS:
            x = T([1000.0, 1001.0, 1002.0, -inf, -inf, -inf, 0.0, -inf, 2.0, nan, 1.0, 2.0, inf, 1.0, 65000.0, -65000.0],
                  d, [4, 4])
            F.case('%s/special/%s' % (name, d), name, {'dim': 1}, [In('x', x)], lambda x, f=f: f(x, 1))
            r = rng_for('smr/' + d)
            x = T([r.gauss(0, 2) for _ in range(24)], d, [2, 3, 4])
            F.case('%s/random_dim1/%s' % (name, d), name, {'dim': 1}, [In('x', x)], lambda x, f=f: f(x, 1))
            F.case('%s/random_view_t/%s' % (name, d), name, {'dim': -1}, [In('x', x, 't')], lambda x, f=f: f(x, -1))
        F.case('%s/0dim' % name, name, {'dim': 0}, [In('x', torch.tensor(3.0))], lambda x, f=f: f(x, 0))
        F.case('%s/empty' % name, name, {'dim': 1}, [In('x', torch.zeros([0, 3]))], lambda x, f=f: f(x, 1))
        F.case('%s/dim_out_of_range' % name, name, {'dim': 2}, [In('x', torch.zeros([2, 3]))], lambda x, f=f: f(x, 2))
    return F


# ---- matmul, joins, indexing, views -----------------------------------------------------------

def small(d, shape, key):
    r = rng_for(key)
    n = math.prod(shape)
    if d == 'bool':
        v = [r.random() < 0.5 for _ in range(n)]
    elif is_int(d):
        v = [r.randint(0 if d == 'uint8' else -5, 5) for _ in range(n)]
    else:
        v = [r.randint(-16, 16) / 4 for _ in range(n)]
    return T(v, d, shape)


def randf(d, shape, key):
    r = rng_for(key)
    return T([r.gauss(0, 1) for _ in range(math.prod(shape))], d, shape)


def gen_shape():
    F = Family('shape')
    mshapes = [([4], [4]), ([3, 4], [4]), ([4], [4, 2]), ([2, 3], [3, 4]), ([2, 2, 3], [2, 3, 2]),
               ([2, 1, 2, 3], [3, 3, 2]), ([2, 2, 3], [3]), ([3], [2, 3, 2]), ([3, 0], [0, 2]), ([1, 4], [4, 1])]
    for d in ALL:
        for sa, sb in mshapes:
            a, b = small(d, sa, 'mm/a/%s/%s' % (d, sa)), small(d, sb, 'mm/b/%s/%s' % (d, sb))
            if d == 'bool' and 0 in sa:
                continue  # PyTorch skips its dtype check when the inner dim is empty
            F.case('matmul/%s/%s-%s' % (d, sfmt(sa), sfmt(sb)), 'matmul', {}, [In('a', a), In('b', b)], torch.matmul,
                   upcast=d == 'bfloat16')
        a, b = small(d, [3, 4], 'mm/a/' + d), small(d, [4, 2], 'mm/b/' + d)
        F.case('mm/%s' % d, 'mm', {}, [In('a', a), In('b', b)], torch.mm, upcast=d == 'bfloat16')
    for d in ('float32', 'float64', 'float16', 'bfloat16'):
        for sa, sb in (([5, 7], [7, 3]), ([2, 3, 8], [8, 5]), ([16], [16])):
            a, b = randf(d, sa, 'mmr/a/%s/%s' % (d, sa)), randf(d, sb, 'mmr/b/%s/%s' % (d, sb))
            F.case('matmul/random/%s/%s-%s' % (d, sfmt(sa), sfmt(sb)), 'matmul', {}, [In('a', a), In('b', b)], torch.matmul,
                   upcast=d == 'bfloat16')
        a, b = randf(d, [3, 4], 'mmv/a' + d), randf(d, [4, 5], 'mmv/b' + d)
        F.case('mm/view_t/%s' % d, 'mm', {}, [In('a', a, 't'), In('b', b, 't')], torch.mm, upcast=d == 'bfloat16')
        F.case('matmul/view_step2/%s' % d, 'matmul', {}, [In('a', a, 'step2'), In('b', b, 't')], torch.matmul,
               upcast=d == 'bfloat16')
    a, b = randf('float32', [2, 3], 'mx/a'), randf('float64', [3, 2], 'mx/b')
    F.case('matmul/mixed_dtypes_error', 'matmul', {}, [In('a', a), In('b', b)], torch.matmul)
    for sa, sb in (([2, 3], [2, 3]), ([3], [4]), ([2, 2, 3], [3, 3, 2]), ([], [3])):
        a, b = torch.ones(sa), torch.ones(sb)
        F.case('matmul/shape_error/%s-%s' % (sfmt(sa), sfmt(sb)), 'matmul', {}, [In('a', a), In('b', b)], torch.matmul)
    F.case('mm/not_2d_error', 'mm', {}, [In('a', torch.ones([3])), In('b', torch.ones([3, 2]))], torch.mm)
    a = torch.tensor([[nan, 1.0], [inf, 0.0]])
    F.case('matmul/int8_wraps', 'matmul', {}, [In('a', T([100, 100, 3], 'int8')), In('b', T([2, 1, 1], 'int8'))], torch.matmul)
    F.case('matmul/uint8_wraps', 'matmul', {}, [In('a', T([200, 100, 3, 1], 'uint8', [2, 2])), In('b', T([2, 1, 1, 0], 'uint8', [2, 2]))],
           torch.matmul)
    F.case('matmul/special', 'matmul', {}, [In('a', a), In('b', torch.tensor([[1.0, 0.0], [0.0, 1.0]]))], torch.matmul)

    # cat and stack.
    for d in ALL:
        a, b = small(d, [2, 3], 'cat/a/' + d), small(d, [1, 3], 'cat/b/' + d)
        F.case('cat/dim0/%s' % d, 'cat', {'dim': 0}, [In('t0', a), In('t1', b)], lambda *t: torch.cat(t, 0))
        c = small(d, [2, 2], 'cat/c/' + d)
        F.case('cat/dim-1_view/%s' % d, 'cat', {'dim': -1}, [In('t0', a, 't'), In('t1', c, 'step2'), In('t2', a)],
               lambda *t: torch.cat(t, -1))
        F.case('stack/dim0/%s' % d, 'stack', {'dim': 0}, [In('t0', a), In('t1', a.flip(0))], lambda *t: torch.stack(t, 0))
        F.case('stack/dim-1/%s' % d, 'stack', {'dim': -1}, [In('t0', a), In('t1', a, 't'), In('t2', a)],
               lambda *t: torch.stack(t, -1))
    for da, db in (('int32', 'float32'), ('bool', 'int64'), ('float16', 'bfloat16'), ('uint8', 'int8')):
        a, b = small(da, [2], 'catm/a'), small(db, [3], 'catm/b')
        F.case('cat/mixed/%s-%s' % (da, db), 'cat', {'dim': 0}, [In('t0', a), In('t1', b)], lambda *t: torch.cat(t))
        F.case('stack/mixed/%s-%s' % (da, db), 'stack', {'dim': 0}, [In('t0', a), In('t1', small(db, [2], 'catm/c'))],
               lambda *t: torch.stack(t))
    F.case('cat/legacy_empty_1d', 'cat', {'dim': 0}, [In('t0', torch.ones([2, 3])), In('t1', torch.zeros([0]))],
           lambda *t: torch.cat(t))
    F.case('cat/empty', 'cat', {'dim': 1}, [In('t0', torch.ones([2, 0])), In('t1', torch.ones([2, 2]))],
           lambda *t: torch.cat(t, 1))
    F.case('cat/0dim_error', 'cat', {'dim': 0}, [In('t0', torch.tensor(1.0)), In('t1', torch.tensor(2.0))],
           lambda *t: torch.cat(t))
    F.case('stack/0dim', 'stack', {'dim': 0}, [In('t0', torch.tensor(1.0)), In('t1', torch.tensor(2.0))],
           lambda *t: torch.stack(t))
    F.case('cat/shape_error', 'cat', {'dim': 0}, [In('t0', torch.ones([2, 3])), In('t1', torch.ones([2, 2]))],
           lambda *t: torch.cat(t))
    F.case('cat/dim_error', 'cat', {'dim': 2}, [In('t0', torch.ones([2, 3])), In('t1', torch.ones([2, 3]))],
           lambda *t: torch.cat(t, 2))
    F.case('stack/shape_error', 'stack', {'dim': 0}, [In('t0', torch.ones([2, 3])), In('t1', torch.ones([3, 2]))],
           lambda *t: torch.stack(t))
    F.case('stack/dim2', 'stack', {'dim': 2}, [In('t0', torch.ones([2, 3])), In('t1', torch.zeros([2, 3]))],
           lambda *t: torch.stack(t, 2))

    # index_select and gather.
    for d in ALL:
        x = small(d, [3, 4], 'idx/' + d)
        for idt in ('int64', 'int32'):
            F.case('index_select/dim0/%s/%s' % (d, idt), 'index_select', {'dim': 0},
                   [In('x', x), In('index', T([2, 0, 2], idt))], lambda x, i: torch.index_select(x, 0, i))
        F.case('index_select/dim-1_view/%s' % d, 'index_select', {'dim': -1},
               [In('x', x, 't'), In('index', T([3, 1], 'int64'), 'step2')], lambda x, i: torch.index_select(x, -1, i))
        F.case('gather/dim0/%s' % d, 'gather', {'dim': 0},
               [In('x', x), In('index', T([2, 0, 1, 1, 0, 2], 'int64', [2, 3]))], lambda x, i: torch.gather(x, 0, i))
        F.case('gather/dim1_view/%s' % d, 'gather', {'dim': 1},
               [In('x', x, 't'), In('index', T([3, 3, 0, 1, 2, 0], 'int64', [3, 2]), 't')],
               lambda x, i: torch.gather(x, 1, i))
    x = small('float32', [3, 4], 'idxe')
    for key, idx, dim in (('negative', [-1], 0), ('too_large', [3], 0), ('too_large_dim1', [0, 4], 1)):
        F.case('index_select/%s_error' % key, 'index_select', {'dim': dim}, [In('x', x), In('index', T(idx, 'int64'))],
               lambda x, i, dim=dim: torch.index_select(x, dim, i))
    F.case('index_select/empty_index', 'index_select', {'dim': 1}, [In('x', x), In('index', torch.zeros([0], dtype=torch.int64))],
           lambda x, i: torch.index_select(x, 1, i))
    F.case('index_select/float_index_error', 'index_select', {'dim': 0}, [In('x', x), In('index', T([0.0], 'float32'))],
           lambda x, i: torch.index_select(x, 0, i))
    F.case('index_select/0dim', 'index_select', {'dim': 0}, [In('x', torch.tensor(5.0)), In('index', T([0], 'int64'))],
           lambda x, i: torch.index_select(x, 0, i))
    F.case('gather/out_of_range_error', 'gather', {'dim': 0}, [In('x', x), In('index', T([[3, 0]], 'int64'))],
           lambda x, i: torch.gather(x, 0, i))
    F.case('gather/negative_error', 'gather', {'dim': 1}, [In('x', x), In('index', T([[-1]], 'int64'))],
           lambda x, i: torch.gather(x, 1, i))
    F.case('gather/int32_index_error', 'gather', {'dim': 0}, [In('x', x), In('index', T([[0]], 'int32'))],
           lambda x, i: torch.gather(x, 0, i))
    F.case('gather/index_larger_error', 'gather', {'dim': 0}, [In('x', x), In('index', torch.zeros([2, 5], dtype=torch.int64))],
           lambda x, i: torch.gather(x, 0, i))
    F.case('gather/dims_differ_error', 'gather', {'dim': 0}, [In('x', x), In('index', torch.zeros([2], dtype=torch.int64))],
           lambda x, i: torch.gather(x, 0, i))
    F.case('gather/empty_index', 'gather', {'dim': 1}, [In('x', x), In('index', torch.zeros([3, 0], dtype=torch.int64))],
           lambda x, i: torch.gather(x, 1, i))

    # Views (and reshape, which copies when it must).
    x = small('float32', [2, 3, 4], 'views')
    xi = small('int64', [2, 3, 4], 'viewsi')
    s = torch.tensor(7.5)
    views = [
        ('reshape', {'shape': [4, 6]}, x, None, lambda x: x.reshape(4, 6)),
        ('reshape', {'shape': [-1, 2]}, x, None, lambda x: x.reshape(-1, 2)),
        ('reshape', {'shape': [6, 4]}, x, 't', lambda x: x.reshape(6, 4)),
        ('reshape', {'shape': [1]}, s, None, lambda x: x.reshape(1)),
        ('reshape', {'shape': []}, torch.tensor([3.0]), None, lambda x: x.reshape(())),
        ('reshape', {'shape': [-1]}, s, None, lambda x: x.reshape(-1)),
        ('reshape', {'shape': [0, 5]}, torch.zeros([0, 2]), None, lambda x: x.reshape(0, 5)),
        ('reshape', {'shape': [5, 5]}, x, None, lambda x: x.reshape(5, 5)),
        ('reshape', {'shape': [-1, -1]}, x, None, lambda x: x.reshape(-1, -1)),
        ('view', {'shape': [3, 8]}, xi, None, lambda x: x.view(3, 8)),
        ('view', {'shape': [1, 1]}, s, None, lambda x: x.view(1, 1)),
        ('view', {'shape': [24]}, x, 't', lambda x: x.view(24)),
        ('view', {'shape': [2, 12]}, x, 'step2', lambda x: x.view(2, 12)),
        ('view', {'shape': [6, 2]}, x[:, :, :2].contiguous(), 'step2', lambda x: x.view(6, 2)),
        ('flatten', {}, x, None, lambda x: x.flatten()),
        ('flatten', {'start': 1}, x, 't', lambda x: x.flatten(1)),
        ('flatten', {'start': 0, 'end': 1}, xi, None, lambda x: x.flatten(0, 1)),
        ('flatten', {}, s, None, lambda x: x.flatten()),
        ('flatten', {'start': 0, 'end': -1}, torch.zeros([2, 0, 3]), None, lambda x: x.flatten(0, -1)),
        ('permute', {'dims': [2, 0, 1]}, x, None, lambda x: x.permute(2, 0, 1)),
        ('permute', {'dims': [-1, 1, 0]}, xi, 'step2', lambda x: x.permute(-1, 1, 0)),
        ('permute', {'dims': [0, 0, 1]}, x, None, lambda x: x.permute(0, 0, 1)),
        ('permute', {'dims': []}, s, None, lambda x: x.permute([])),
        ('transpose', {'d0': 0, 'd1': 2}, x, None, lambda x: x.transpose(0, 2)),
        ('transpose', {'d0': -1, 'd1': -2}, xi, 't', lambda x: x.transpose(-1, -2)),
        ('transpose', {'d0': 0, 'd1': 3}, x, None, lambda x: x.transpose(0, 3)),
        ('t', {}, x[0], None, lambda x: x.t()),
        ('t', {}, x[0, 0], None, lambda x: x.t()),
        ('t', {}, s, None, lambda x: x.t()),
        ('t', {}, x, None, lambda x: x.t()),
        ('squeeze', {}, torch.zeros([1, 3, 1, 2]) + 1.5, None, lambda x: x.squeeze()),
        ('squeeze', {'dim': 2}, torch.zeros([1, 3, 1, 2]) + 1.5, None, lambda x: x.squeeze(2)),
        ('squeeze', {'dim': 1}, torch.zeros([1, 3, 1, 2]) + 1.5, None, lambda x: x.squeeze(1)),
        ('squeeze', {'dim': -4}, torch.zeros([1, 3, 1, 2]) + 1.5, None, lambda x: x.squeeze(-4)),
        ('squeeze', {'dim': 4}, torch.zeros([1, 3, 1, 2]) + 1.5, None, lambda x: x.squeeze(4)),
        ('squeeze', {}, s, None, lambda x: x.squeeze()),
        ('squeeze', {'dim': 0}, s, None, lambda x: x.squeeze(0)),
        ('unsqueeze', {'dim': 0}, x, None, lambda x: x.unsqueeze(0)),
        ('unsqueeze', {'dim': -1}, x, 't', lambda x: x.unsqueeze(-1)),
        ('unsqueeze', {'dim': 3}, x, None, lambda x: x.unsqueeze(3)),
        ('unsqueeze', {'dim': 0}, s, None, lambda x: x.unsqueeze(0)),
        ('unsqueeze', {'dim': -1}, s, None, lambda x: x.unsqueeze(-1)),
        ('unsqueeze', {'dim': 5}, x, None, lambda x: x.unsqueeze(5)),
        ('narrow', {'dim': 2, 'start': 1, 'length': 2}, x, None, lambda x: x.narrow(2, 1, 2)),
        ('narrow', {'dim': -1, 'start': 0, 'length': 0}, x, 'step2', lambda x: x.narrow(-1, 0, 0)),
        ('narrow', {'dim': 1, 'start': -2, 'length': 2}, xi, None, lambda x: x.narrow(1, -2, 2)),
        ('narrow', {'dim': 1, 'start': 2, 'length': 2}, x, None, lambda x: x.narrow(1, 2, 2)),
        ('select', {'dim': 1, 'index': 2}, x, None, lambda x: x.select(1, 2)),
        ('select', {'dim': -1, 'index': -1}, xi, 't', lambda x: x.select(-1, -1)),
        ('select', {'dim': 0, 'index': 2}, x, None, lambda x: x.select(0, 2)),
        ('select', {'dim': 0, 'index': -3}, x, None, lambda x: x.select(0, -3)),
        ('select', {'dim': 0, 'index': 0}, s, None, lambda x: x.select(0, 0)),
        ('expand', {'shape': [2, 2, 3, 4]}, x, None, lambda x: x.expand(2, 2, 3, 4)),
        ('expand', {'shape': [3, -1]}, torch.tensor([[1.0, 2.0]]), None, lambda x: x.expand(3, -1)),
        ('expand', {'shape': [2, 3]}, s, None, lambda x: x.expand(2, 3)),
        ('expand', {'shape': [4, 3, 4]}, x, None, lambda x: x.expand(4, 3, 4)),
        ('expand', {'shape': [3]}, x[0], None, lambda x: x.expand(3)),
        ('expand', {'shape': [2, 0]}, torch.ones([2, 1]), None, lambda x: x.expand(2, 0)),
        ('slice', {'dim': 2, 'start': 1, 'stop': 4, 'step': 2}, x, None, lambda x: x[:, :, 1:4:2]),
        ('slice', {'dim': 0, 'start': -1}, xi, 't', lambda x: x[-1:]),
        ('slice', {'dim': 1, 'stop': 100, 'step': 3}, x, None, lambda x: x[:, :100:3]),
        ('slice', {'dim': 1, 'start': 2, 'stop': 1}, x, None, lambda x: x[:, 2:1]),
        ('slice', {'dim': 1, 'start': -100, 'stop': -1}, x, 'step2', lambda x: x[:, -100:-1]),
        ('slice', {'dim': 1, 'step': 0}, x, None, lambda x: x[:, ::0]),
        ('contiguous', {}, x, 't', lambda x: x.contiguous()),
        ('clone', {}, xi, 'step2', lambda x: x.clone()),
    ]
    counter = {}
    for op, args, t, view, fn in views:
        k = counter.get(op, 0)
        counter[op] = k + 1
        F.case('%s/%d' % (op, k), op, args, [In('x', t, view)], fn)
    for d in ALL:
        x = small(d, [2, 3], 'vd/' + d)
        F.case('permute/dtype/%s' % d, 'permute', {'dims': [1, 0]}, [In('x', x, 'step2')], lambda x: x.permute(1, 0))
        F.case('expand/dtype/%s' % d, 'expand', {'shape': [2, 2, 3]}, [In('x', x, 't')], lambda x: x.expand(2, 2, 3))

    # Conversions between dtypes (exact where both are defined).
    for da in ALL:
        for db in ALL:
            vals = pool(da)
            if is_int(db) or db == 'bool':
                if is_float(da):
                    lo, hi = irange(db) if db != 'bool' else (0, 1)
                    vals = [v for v in vals if not math.isnan(v) and lo <= v <= hi and (db != 'bool' or v in (0, 1))]
                    vals = [v for v in vals if math.isfinite(v) and v > lo - 1 and v < hi + 1] + [-0.0]
                    if db == 'bool':
                        vals = FLOAT_EDGE  # to bool is value != 0: defined for all
                elif is_int(da) and is_int(db):
                    pass  # integer to integer wraps, as in C++
            F.case('to/%s-%s' % (da, db), 'to', {'dtype': db}, [In('x', T(vals, da))], lambda x, db=db: x.to(DT[db]))
    return F


# ---- factories ----------------------------------------------------------------------------------

def gen_factories():
    F = Family('factories')
    aranges = [
        ((Num(5),), None), ((Num(5.0),), None), ((Num(2.5),), None), ((Num(0),), None), ((Num(1), Num(7), Num(2)), None),
        ((Num(7), Num(1), Num(-2)), None), ((Num(0), Num(1), Num(0.1)), None), ((Num(-1.5), Num(2.5), Num(0.5)), None),
        ((Num(0), Num(5)), 'float64'), ((Num(0), Num(5)), 'int32'), ((Num(0), Num(5)), 'float16'),
        ((Num(0), Num(5)), 'uint8'), ((Num(0.5), Num(4.5)), 'int64'), ((Num(0), Num(10), Num(3)), 'bfloat16'),
        ((Num(1), Num(2), Num(0.3)), 'float64'), ((Num(10), Num(0), Num(3)), None), ((Num(0), Num(1), Num(0)), None),
        ((Num(0), Num(0)), None), ((Num(3), Num(3), Num(1)), 'float32'), ((Num(True),), None),
        ((Num(0), Num(nan)), None), ((Num(0), Num(inf)), None),
    ]
    for k, (args, dt) in enumerate(aranges):
        a = {'start': args[0], 'end': args[1]} if len(args) > 1 else {'end': args[0]}
        if len(args) > 2:
            a['step'] = args[2]
        if dt:
            a['dtype'] = dt
        kw = {'dtype': DT[dt]} if dt else {}
        F.case('arange/%d' % k, 'arange', a, [], lambda args=args, kw=kw: torch.arange(*[pyval(v) for v in args], **kw))
    fulls = [([2, 3], Num(7), None), ([2], Num(2.5), None), ([3], Num(True), None), ([2, 2], Num(1.5), 'int64'),
             ([2], Num(-1), 'float16'), ([2], Num(1e6), 'float16'), ([2], Num(70000.0), 'float16'), ([2], Num(300), 'uint8'),
             ([2], Num(-1), 'uint8'), ([2], Num(3), 'bool'), ([2], Num(inf), 'float32'), ([2], Num(nan), 'bfloat16'),
             ([0, 3], Num(1), 'int8'), ([], Num(5), None), ([2], Num(1e300), 'float32'), ([2], Num(65504), 'float16'),
             ([2], Num(2 ** 40), 'int32'), ([2], Num(-128), 'int8'), ([2], Num(1e-30), 'float16'), ([2], Num(0.1), 'float64')]
    for k, (shape, v, dt) in enumerate(fulls):
        a = {'shape': shape, 'value': v}
        if dt:
            a['dtype'] = dt
        kw = {'dtype': DT[dt]} if dt else {}
        F.case('full/%d' % k, 'full', a, [], lambda shape=shape, v=v, kw=kw: torch.full(shape, v.v, **kw))
    for k, (n, m, dt) in enumerate([(3, None, None), (2, 4, None), (4, 2, 'int32'), (3, 3, 'bool'), (0, None, None),
                                    (2, None, 'float16'), (1, 0, 'int64'), (-1, None, None)]):
        a = {'n': n}
        if m is not None:
            a['m'] = m
        if dt:
            a['dtype'] = dt
        kw = {'dtype': DT[dt]} if dt else {}
        F.case('eye/%d' % k, 'eye', a, [], lambda n=n, m=m, kw=kw: torch.eye(n, m, **kw) if m is not None else torch.eye(n, **kw))
    for k, (s, e, n, dt) in enumerate([(0.0, 1.0, 5, None), (-1.0, 1.0, 1, None), (0.0, 1.0, 0, None), (0.0, 10.0, 7, None),
                                       (3.0, -3.0, 4, 'float64'), (0.0, 1.0, 2, None), (1.0, 2.0, 11, 'float64'),
                                       (0.0, 1.0, 33, 'float32'), (0.0, 1.0, 3, 'float16'), (-5.0, 5.0, 6, 'bfloat16'),
                                       (0.0, 10.0, 5, 'int64'), (0.0, 1.0, -1, None)]):
        a = {'start': s, 'end': e, 'steps': n}
        if dt:
            a['dtype'] = dt
        kw = {'dtype': DT[dt]} if dt else {}
        F.case('linspace/%d' % k, 'linspace', a, [], lambda s=s, e=e, n=n, kw=kw: torch.linspace(s, e, n, **kw))
    for d in ALL:
        F.case('zeros/%s' % d, 'zeros', {'shape': [2, 3], 'dtype': d}, [], lambda d=d: torch.zeros([2, 3], dtype=DT[d]))
        F.case('ones/%s' % d, 'ones', {'shape': [3], 'dtype': d}, [], lambda d=d: torch.ones([3], dtype=DT[d]))
    F.case('zeros/negative_error', 'zeros', {'shape': [2, -1]}, [], lambda: torch.zeros([2, -1]))
    return F


# ---- gradients --------------------------------------------------------------------------------

def gvals(shape, key, lo=-2.0, hi=2.0, avoid=()):
    r = rng_for(key)
    out = []
    for _ in range(math.prod(shape)):
        while True:
            v = round(r.uniform(lo, hi), 3)
            if all(abs(v - a) > 0.05 for a in avoid):
                break
        out.append(v)
    return T(out, 'float64', shape)


def gen_autograd():
    F = Family('autograd', prefix='grad/')

    def seeded(out):
        r = rng_for('gout/%s' % (list(out.shape),))
        return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], NAME[out.dtype], list(out.shape))

    unary = {'neg': torch.neg, 'abs': torch.abs, 'sign': torch.sign, 'exp': torch.exp, 'expm1': torch.expm1,
             'log': torch.log, 'log1p': torch.log1p, 'sqrt': torch.sqrt, 'rsqrt': torch.rsqrt, 'sin': torch.sin,
             'cos': torch.cos, 'tanh': torch.tanh, 'sigmoid': torch.sigmoid, 'erf': torch.erf, 'relu': torch.relu,
             'gelu': torch.nn.functional.gelu, 'floor': torch.floor, 'ceil': torch.ceil, 'round': torch.round,
             'trunc': torch.trunc}
    positive = {'log', 'sqrt', 'rsqrt', 'log1p'}
    for name, fn in unary.items():
        lo = 0.1 if name in positive else -3.0
        for d in ('float64', 'float32'):
            x = gvals([2, 3], 'u/' + name, lo, 3.0, avoid=(0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1, 2, -1, -2))
            F.case('%s/%s' % (name, d), name, {}, [In('x', x.to(DT[d]), rg=True)], fn, gout=seeded)
    # Points where the derivative is a convention: PyTorch's choices.
    edge = T([0.0, -0.0, 1.0, -1.0], 'float64')
    for name in ('abs', 'relu', 'sign', 'sqrt', 'rsqrt', 'log', 'gelu', 'round', 'floor'):
        F.case('%s/edge' % name, name, {}, [In('x', edge, rg=True)], unary[name], gout=seeded)
    for key, mn, mx in (('both', Num(-1.0), Num(1.0)), ('min', Num(0.0), None), ('max', None, Num(1)),
                        ('min_gt_max', Num(1.0), Num(-1.0))):
        args = {}
        if mn is not None:
            args['min'] = mn
        if mx is not None:
            args['max'] = mx
        x = T([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], 'float64')
        F.case('clamp/%s' % key, 'clamp', args, [In('x', x, rg=True)],
               lambda x, mn=mn, mx=mx: torch.clamp(x, min=pyval(mn), max=pyval(mx)), gout=seeded)

    shapes = [([2, 3], [2, 3]), ([2, 3], [3]), ([2, 1], [1, 3]), ([], [2, 2]), ([2, 2], [])]
    for name in ('add', 'sub', 'mul', 'div', 'remainder', 'fmod', 'pow', 'maximum', 'minimum'):
        fn = torch_binary(name)
        for sa, sb in shapes:
            a = gvals(sa, 'b/a/%s/%s' % (name, sa), 0.2 if name == 'pow' else -3.0, 3.0, avoid=(0.0,))
            b = gvals(sb, 'b/b/%s/%s' % (name, sb), 0.2 if name in ('div', 'remainder', 'fmod') else -2.0, 2.0, avoid=(0.0,))
            F.case('%s/%s-%s' % (name, sfmt(sa), sfmt(sb)), name, {}, [In('a', a, rg=True), In('b', b, rg=True)], fn,
                   gout=seeded)
    for name in ('add', 'sub'):
        a, b = gvals([3], 'al/a'), gvals([3], 'al/b')
        F.case('%s/alpha' % name, name, {'alpha': Num(2.5)}, [In('a', a, rg=True), In('b', b, rg=True)],
               lambda a, b, fn=torch_binary(name): fn(a, b, alpha=2.5), gout=seeded)
    a = T([1.0, 2.0, 3.0, -1.0], 'float64')
    b = T([1.0, 0.5, 3.0, -1.0], 'float64')
    for name in ('maximum', 'minimum'):
        F.case('%s/ties' % name, name, {}, [In('a', a, rg=True), In('b', b, rg=True)], torch_binary(name), gout=seeded)
    F.case('pow/zero_base', 'pow', {}, [In('a', T([0.0, 0.0, 2.0], 'float64'), rg=True), In('b', T([2.0, 0.0, 0.0], 'float64'), rg=True)],
           torch.pow, gout=seeded)
    x = gvals([2, 3], 'num', 0.2, 3.0)
    for name, num in (('mul', Num(2.5)), ('div', Num(-4)), ('pow', Num(2)), ('pow', Num(0.5)), ('pow', Num(-1.5)),
                      ('add', Num(3)), ('sub', Num(1.5)), ('remainder', Num(1.5)), ('fmod', Num(-0.75)),
                      ('maximum', Num(1.0)), ('minimum', Num(1.0))):
        fn = torch_binary(name)
        f = (lambda x, fn=fn, v=num.v: fn(x, torch.tensor(v, dtype=torch.float64))) if name in NO_NUMBER_OVERLOAD else \
            (lambda x, fn=fn, v=num.v: fn(x, v))
        F.case('%s/number/%s' % (name, num.tok()), name, {'other': num}, [In('a', x, rg=True)], f, gout=seeded)
    for name, num in (('rsub', Num(2.5)), ('rdiv', Num(3)), ('radd', Num(1)), ('rmul', Num(-2.0))):
        f = {'rsub': lambda x, v=num.v: v - x, 'rdiv': lambda x, v=num.v: v / x, 'radd': lambda x, v=num.v: v + x,
             'rmul': lambda x, v=num.v: v * x}[name]
        F.case('%s/%s' % (name, num.tok()), name, {'other': num}, [In('a', x, rg=True)], f, gout=seeded)
    c = T([1, 0, 1, 0, 0, 1], 'bool', [2, 3])
    F.case('where/same', 'where', {}, [In('cond', c), In('a', gvals([2, 3], 'w/a'), rg=True), In('b', gvals([2, 3], 'w/b'), rg=True)],
           torch.where, gout=seeded)
    F.case('where/bcast', 'where', {}, [In('cond', c), In('a', gvals([3], 'w/a1'), rg=True), In('b', gvals([], 'w/b0'), rg=True)],
           torch.where, gout=seeded)

    # Reductions and softmax.
    x = gvals([2, 3, 4], 'red')
    xt = T([1.0, 3.0, 3.0, -2.0, 0.5, -2.0, 3.0, 0.0], 'float64', [2, 4])
    red = [
        ('sum', {}, x, lambda x: x.sum()), ('sum', {'dim': 1}, x, lambda x: x.sum(1)),
        ('sum', {'dims': [0, 2], 'keepdim': True}, x, lambda x: x.sum([0, 2], keepdim=True)),
        ('mean', {}, x, lambda x: x.mean()), ('mean', {'dims': [-1]}, x, lambda x: x.mean([-1])),
        ('mean', {'dim': 0, 'keepdim': True}, x, lambda x: x.mean(0, keepdim=True)),
        ('max', {}, xt, lambda x: x.max()), ('min', {}, xt, lambda x: x.min()),
        ('max', {'dim': 1}, xt, lambda x: x.max(1)[0]), ('min', {'dim': 0, 'keepdim': True}, xt, lambda x: x.min(0, keepdim=True)[0]),
        ('max', {'dim': -1, 'keepdim': True}, x, lambda x: x.max(-1, keepdim=True)[0]),
        ('softmax', {'dim': 1}, x, lambda x: torch.softmax(x, 1)), ('softmax', {'dim': -1}, x, lambda x: torch.softmax(x, -1)),
        ('log_softmax', {'dim': 0}, x, lambda x: torch.log_softmax(x, 0)),
        ('log_softmax', {'dim': 2}, x, lambda x: torch.log_softmax(x, 2)),
    ]
    counter = {}
    for op, args, t, fn in red:
        k = counter.get(op, 0)
        counter[op] = k + 1
        F.case('%s/%d' % (op, k), op, args, [In('x', t, rg=True)], fn, gout=seeded)
    F.case('softmax/float32', 'softmax', {'dim': 1}, [In('x', x.float(), rg=True)], lambda x: torch.softmax(x, 1), gout=seeded)
    F.case('sum/float32', 'sum', {'dim': 2}, [In('x', x.float(), rg=True)], lambda x: x.sum(2), gout=seeded)

    # Products.
    for sa, sb in (([4], [4]), ([3, 4], [4]), ([4], [4, 2]), ([2, 3], [3, 4]), ([2, 2, 3], [2, 3, 2]),
                   ([2, 1, 2, 3], [3, 3, 2]), ([2, 2, 3], [3]), ([3], [2, 3, 2])):
        a, b = gvals(sa, 'mm/a%s' % sa), gvals(sb, 'mm/b%s' % sb)
        F.case('matmul/%s-%s' % (sfmt(sa), sfmt(sb)), 'matmul', {}, [In('a', a, rg=True), In('b', b, rg=True)], torch.matmul,
               gout=seeded)
    a, b = gvals([3, 4], 'mm/a'), gvals([4, 2], 'mm/b')
    F.case('mm/0', 'mm', {}, [In('a', a, rg=True), In('b', b, rg=True)], torch.mm, gout=seeded)
    F.case('mm/one_side', 'mm', {}, [In('a', a, rg=True), In('b', b)], torch.mm, gout=seeded)
    F.case('mm/float32', 'mm', {}, [In('a', a.float(), rg=True), In('b', b.float(), rg=True)], torch.mm, gout=seeded)

    # Views, joins.
    x = gvals([2, 3, 4], 'views')
    vw = [('reshape', {'shape': [4, 6]}, lambda x: x.reshape(4, 6)), ('view', {'shape': [6, -1]}, lambda x: x.view(6, -1)),
          ('flatten', {'start': 1}, lambda x: x.flatten(1)), ('permute', {'dims': [2, 0, 1]}, lambda x: x.permute(2, 0, 1)),
          ('transpose', {'d0': 0, 'd1': 2}, lambda x: x.transpose(0, 2)), ('unsqueeze', {'dim': 1}, lambda x: x.unsqueeze(1)),
          ('narrow', {'dim': 2, 'start': 1, 'length': 2}, lambda x: x.narrow(2, 1, 2)),
          ('select', {'dim': 1, 'index': -1}, lambda x: x.select(1, -1)),
          ('expand', {'shape': [3, 2, 3, 4]}, lambda x: x.expand(3, 2, 3, 4)),
          ('slice', {'dim': 2, 'start': 0, 'stop': 4, 'step': 3}, lambda x: x[:, :, 0:4:3]),
          ('contiguous', {}, lambda x: x.contiguous()), ('clone', {}, lambda x: x.clone())]
    for op, args, fn in vw:
        F.case('%s/0' % op, op, args, [In('x', x, rg=True)], fn, gout=seeded)
    F.case('squeeze/0', 'squeeze', {}, [In('x', gvals([1, 3, 1], 'sq'), rg=True)], lambda x: x.squeeze(), gout=seeded)
    F.case('squeeze/1', 'squeeze', {'dim': 0}, [In('x', gvals([1, 3, 1], 'sq'), rg=True)], lambda x: x.squeeze(0), gout=seeded)
    F.case('t/0', 't', {}, [In('x', gvals([2, 3], 't'), rg=True)], lambda x: x.t(), gout=seeded)
    F.case('expand/1', 'expand', {'shape': [2, 3]}, [In('x', gvals([2, 1], 'ex1'), rg=True)], lambda x: x.expand(2, 3), gout=seeded)
    F.case('cat/0', 'cat', {'dim': 1}, [In('t0', gvals([2, 3], 'c0'), rg=True), In('t1', gvals([2, 1], 'c1'), rg=True)],
           lambda *t: torch.cat(t, 1), gout=seeded)
    F.case('cat/one_side', 'cat', {'dim': 0}, [In('t0', gvals([2, 3], 'c0')), In('t1', gvals([1, 3], 'c2'), rg=True)],
           lambda *t: torch.cat(t, 0), gout=seeded)
    F.case('stack/0', 'stack', {'dim': 1}, [In('t0', gvals([2, 3], 's0'), rg=True), In('t1', gvals([2, 3], 's1'), rg=True)],
           lambda *t: torch.stack(t, 1), gout=seeded)
    F.case('to/float32', 'to', {'dtype': 'float32'}, [In('x', gvals([3], 'to'), rg=True)], lambda x: x.to(torch.float32), gout=seeded)
    # A same-input-twice graph: the gradients add up.
    F.case('mul/same_input', 'mul_self', {}, [In('x', gvals([4], 'self'), rg=True)], lambda x: x * x, gout=seeded)
    return F


# ---- losses -------------------------------------------------------------------------------------

def gen_losses():
    F = Family('losses')
    import torch.nn.functional as Fn
    reductions = ('mean', 'sum', 'none')

    def seeded(out):
        if out.dim() == 0:
            return torch.tensor(1.0, dtype=out.dtype)
        r = rng_for('lgout/%s' % (list(out.shape),))
        return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], NAME[out.dtype], list(out.shape))

    for red in reductions:
        for d in ('float32', 'float64'):
            x, y = gvals([3, 4], 'mse/x').to(DT[d]), gvals([3, 4], 'mse/y').to(DT[d])
            F.case('mse_loss/%s/%s' % (red, d), 'mse_loss', {'reduction': red}, [In('input', x), In('target', y)],
                   lambda x, y, red=red: Fn.mse_loss(x, y, reduction=red))
        x, y = gvals([2, 3], 'mse/gx'), gvals([2, 3], 'mse/gy')
        F.case('mse_loss/grad/%s' % red, 'mse_loss', {'reduction': red}, [In('input', x, rg=True), In('target', y, rg=True)],
               lambda x, y, red=red: Fn.mse_loss(x, y, reduction=red), gout=seeded)
        F.case('mse_loss/0dim/%s' % red, 'mse_loss', {'reduction': red},
               [In('input', torch.tensor(1.5)), In('target', torch.tensor(-0.5))], lambda x, y, red=red: Fn.mse_loss(x, y, reduction=red))
        F.case('mse_loss/empty/%s' % red, 'mse_loss', {'reduction': red},
               [In('input', torch.zeros([0, 2])), In('target', torch.zeros([0, 2]))],
               lambda x, y, red=red: Fn.mse_loss(x, y, reduction=red))
    F.case('mse_loss/view', 'mse_loss', {'reduction': 'sum'}, [In('input', gvals([3, 4], 'mv/x').float(), 't'),
                                                              In('target', gvals([3, 4], 'mv/y').float(), 'step2')],
           lambda x, y: Fn.mse_loss(x, y, reduction='sum'))

    lp = torch.log_softmax(gvals([4, 5], 'nll/x'), 1)
    logits = gvals([4, 5], 'ce/x', -3, 3)
    targets = {'plain': [1, 0, 4, 2], 'default_ignored': [1, -100, 4, 2], 'custom_ignored': [1, 3, 3, 2],
               'all_ignored': [-100, -100, -100, -100]}
    for name, fn in (('nll_loss', Fn.nll_loss), ('cross_entropy', Fn.cross_entropy)):
        src = lp if name == 'nll_loss' else logits
        for red in reductions:
            for key, tg in targets.items():
                ii = 3 if key == 'custom_ignored' else -100
                args = {'reduction': red}
                if ii != -100:
                    args['ignore_index'] = ii
                t = T(tg, 'int64')
                F.case('%s/%s/%s' % (name, key, red), name, args, [In('input', src, rg=True), In('target', t)],
                       lambda x, t, fn=fn, red=red, ii=ii: fn(x, t, reduction=red, ignore_index=ii), gout=seeded)
            # Unbatched: input [C], target 0-dim.
            F.case('%s/unbatched/%s' % (name, red), name, {'reduction': red},
                   [In('input', src[1].clone(), rg=True), In('target', torch.tensor(3))],
                   lambda x, t, fn=fn, red=red: fn(x, t, reduction=red), gout=seeded)
            # [N, C, d1, d2] with target [N, d1, d2].
            x4 = gvals([2, 3, 2, 2], 'nd/' + name)
            if name == 'nll_loss':
                x4 = torch.log_softmax(x4, 1)
            t4 = T([0, 2, 1, 1, -100, 0, 2, 2], 'int64', [2, 2, 2])
            F.case('%s/spatial/%s' % (name, red), name, {'reduction': red}, [In('input', x4, rg=True), In('target', t4)],
                   lambda x, t, fn=fn, red=red: fn(x, t, reduction=red), gout=seeded)
        F.case('%s/float32' % name, name, {}, [In('input', src.float()), In('target', T(targets['plain'], 'int64'))],
               lambda x, t, fn=fn: fn(x, t))
        F.case('%s/empty_batch' % name, name, {}, [In('input', torch.zeros([0, 5])), In('target', torch.zeros([0], dtype=torch.int64))],
               lambda x, t, fn=fn: fn(x, t))
        F.case('%s/target_out_of_range_error' % name, name, {}, [In('input', src), In('target', T([1, 5, 0, 0], 'int64'))],
               lambda x, t, fn=fn: fn(x, t))
        F.case('%s/target_negative_error' % name, name, {}, [In('input', src), In('target', T([1, -1, 0, 0], 'int64'))],
               lambda x, t, fn=fn: fn(x, t))
        F.case('%s/int32_target_error' % name, name, {}, [In('input', src), In('target', T([1, 2, 0, 0], 'int32'))],
               lambda x, t, fn=fn: fn(x, t))
        F.case('%s/batch_mismatch_error' % name, name, {}, [In('input', src), In('target', T([1, 2, 0], 'int64'))],
               lambda x, t, fn=fn: fn(x, t))
        F.case('%s/view' % name, name, {'reduction': 'sum'}, [In('input', src.float(), 't'), In('target', T(targets['plain'], 'int64'), 'step2')],
               lambda x, t, fn=fn: fn(x, t, reduction='sum'))
    # Class probabilities as targets (cross_entropy only).
    probs = torch.softmax(gvals([4, 5], 'ce/p'), 1)
    for red in reductions:
        F.case('cross_entropy/probs/%s' % red, 'cross_entropy', {'reduction': red},
               [In('input', logits, rg=True), In('target', probs, rg=True)],
               lambda x, t, red=red: Fn.cross_entropy(x, t, reduction=red), gout=seeded)
        p4 = torch.softmax(gvals([2, 3, 2, 2], 'ce/p4'), 1)
        F.case('cross_entropy/probs_spatial/%s' % red, 'cross_entropy', {'reduction': red},
               [In('input', gvals([2, 3, 2, 2], 'nd/cross_entropy'), rg=True), In('target', p4)],
               lambda x, t, red=red: Fn.cross_entropy(x, t, reduction=red), gout=seeded)
    F.case('cross_entropy/probs_unbatched', 'cross_entropy', {}, [In('input', logits[0].clone(), rg=True), In('target', probs[0].clone())],
           lambda x, t: Fn.cross_entropy(x, t), gout=seeded)
    F.case('cross_entropy/probs_float32', 'cross_entropy', {}, [In('input', logits.float()), In('target', probs.float())],
           lambda x, t: Fn.cross_entropy(x, t))
    F.case('cross_entropy/probs_shape_error', 'cross_entropy', {}, [In('input', logits), In('target', probs[:3].clone())],
           lambda x, t: Fn.cross_entropy(x, t))
    F.case('nll_loss/float_target_error', 'nll_loss', {}, [In('input', lp), In('target', probs)], lambda x, t: Fn.nll_loss(x, t))
    return F


# ---- optimizers ---------------------------------------------------------------------------------

def gen_optim():
    F = Family('optim')
    steps = 3

    def run_opt(cls, kw, d):
        def f(*ts):
            params = [t.detach().clone().requires_grad_(True) for t in ts[:2]]
            opt = cls(params, **kw)
            outs = []
            for s in range(steps):
                for i, p in enumerate(params):
                    p.grad = ts[2 + s * 2 + i].clone()
                opt.step()
                outs.extend(p.detach().clone() for p in params)
            return tuple(outs)
        return f

    def ins_for(d, key):
        ins = [In('p0', gvals([2, 3], key + '/p0').to(DT[d])), In('p1', gvals([4], key + '/p1').to(DT[d]))]
        for s in range(steps):
            ins.append(In('g%d.0' % (s + 1), gvals([2, 3], key + '/g0/%d' % s).to(DT[d])))
            ins.append(In('g%d.1' % (s + 1), gvals([4], key + '/g1/%d' % s).to(DT[d])))
        return ins

    sgd = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, dampening=0.5),
           dict(lr=0.1, momentum=0.9, nesterov=True), dict(lr=0.1, weight_decay=0.01),
           dict(lr=0.1, momentum=0.8, weight_decay=0.1, nesterov=True), dict(lr=0.0, momentum=0.5)]
    adam = [dict(), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6), dict(lr=0.01, weight_decay=0.1), dict(lr=0.1, eps=1e-3)]
    adamw = [dict(), dict(lr=0.01, weight_decay=0.1, betas=(0.5, 0.99)), dict(lr=0.1, eps=1e-3, weight_decay=0.0)]

    def args_of(kw):
        a = {}
        for k, v in kw.items():
            if k == 'betas':
                a['beta1'], a['beta2'] = float(v[0]), float(v[1])
            elif k == 'nesterov':
                a[k] = v
            else:
                a[k] = float(v)
        return a

    for name, cls, table in (('sgd', torch.optim.SGD, sgd), ('adam', torch.optim.Adam, adam), ('adamw', torch.optim.AdamW, adamw)):
        for k, kw in enumerate(table):
            for d in ('float32', 'float64'):
                F.case('%s/%d/%s' % (name, k, d), name, args_of(kw), ins_for(d, '%s/%d' % (name, k)), run_opt(cls, kw, d))
    errors = [('sgd', torch.optim.SGD, dict(lr=-0.1)), ('sgd', torch.optim.SGD, dict(lr=0.1, momentum=-0.5)),
              ('sgd', torch.optim.SGD, dict(lr=0.1, nesterov=True)),
              ('sgd', torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)),
              ('sgd', torch.optim.SGD, dict(lr=0.1, weight_decay=-1.0)),
              ('adam', torch.optim.Adam, dict(lr=-1.0)), ('adam', torch.optim.Adam, dict(eps=-1e-8)),
              ('adam', torch.optim.Adam, dict(betas=(1.0, 0.999))), ('adam', torch.optim.Adam, dict(betas=(0.9, -0.1))),
              ('adam', torch.optim.Adam, dict(weight_decay=-0.1)), ('adamw', torch.optim.AdamW, dict(lr=-1.0)),
              ('adamw', torch.optim.AdamW, dict(betas=(0.9, 1.0))), ('adamw', torch.optim.AdamW, dict(weight_decay=-0.1))]
    for k, (name, cls, kw) in enumerate(errors):
        F.case('%s/error/%d' % (name, k), name, args_of(kw), ins_for('float32', 'err'), run_opt(cls, kw, 'float32'))
    return F


def extension_families():
    """The families of tests/golden/gen_<family>.py: each module's generate() returns a Family.
    They `import generate` for the helpers here, which must be this very module (ids stay unique
    across all families)."""
    import glob
    import importlib
    sys.modules.setdefault('generate', sys.modules[__name__])
    sys.path.insert(0, HERE)
    for path in sorted(glob.glob(os.path.join(HERE, 'gen_*.py'))):
        yield importlib.import_module(os.path.basename(path)[:-3]).generate


def main():
    total = 0
    for gen in (gen_elementwise, gen_reduce, gen_shape, gen_factories, gen_autograd, gen_losses, gen_optim,
                *extension_families()):
        total += gen().write()
    print('total %d bytes' % total)
    print('left out (PyTorch paths disagree or PyTorch is far off):',
          ', '.join('%s %d' % kv for kv in sorted(DROPPED.items())))


if __name__ == '__main__':
    main()
