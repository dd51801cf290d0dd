"""The elementwise_more family: the elementwise ops and activations added after the first op set
(trigonometric and hyperbolic functions, log2/log10/exp2, reciprocal, square, frac, atan2, hypot,
isnan/isinf/isfinite, nan_to_num, clamp_min/clamp_max, lerp, addcmul, addcdiv, and the
activations), against PyTorch 1.13: every op over every dtype with the float edge values, 0-dim,
empty and strided inputs, broadcasting, PyTorch's errors, the in-place forms, and float64
gradients (non-default activation parameters and the points where a derivative is a convention
included). Run through generate.py, which imports this module."""

import math

import torch
import torch.nn.functional as Fn

import generate as G
from generate import ALL, DT, FLOATS, In, Num, T, gvals, is_float, is_int, keep, note_dropped, pool, rng_for, sfmt

nan, inf = math.nan, math.inf

# name -> the PyTorch call (with its parameters bound) and the arguments written for the case.
UNARY = {
    'tan': torch.tan, 'sinh': torch.sinh, 'cosh': torch.cosh, 'asin': torch.asin, 'acos': torch.acos,
    'atan': torch.atan, 'log2': torch.log2, 'log10': torch.log10, 'exp2': torch.exp2,
    'reciprocal': torch.reciprocal, 'square': torch.square, 'frac': torch.frac, 'isnan': torch.isnan,
    'isinf': torch.isinf, 'isfinite': torch.isfinite, 'nan_to_num': torch.nan_to_num,
    'silu': Fn.silu, 'mish': Fn.mish, 'hardsigmoid': Fn.hardsigmoid, 'hardswish': Fn.hardswish,
    'logsigmoid': Fn.logsigmoid, 'selu': torch.selu, 'relu6': Fn.relu6, 'elu': Fn.elu,
    'leaky_relu': Fn.leaky_relu, 'softplus': Fn.softplus, 'hardtanh': Fn.hardtanh,
    'gelu_tanh': lambda x: Fn.gelu(x, approximate='tanh'),
}

# Non-default parameters: (key, arguments, call).
PARAMS = {
    'nan_to_num': [('given', {'nan': 1.5, 'posinf': 100.0, 'neginf': -200.0},
                    lambda x: torch.nan_to_num(x, nan=1.5, posinf=100.0, neginf=-200.0)),
                   ('nan_only', {'nan': -3.0}, lambda x: torch.nan_to_num(x, nan=-3.0))],
    'leaky_relu': [('slope', {'negative_slope': 0.2}, lambda x: Fn.leaky_relu(x, 0.2)),
                   ('negative_slope', {'negative_slope': -1.5}, lambda x: Fn.leaky_relu(x, -1.5))],
    'elu': [('alpha', {'alpha': 0.5}, lambda x: Fn.elu(x, 0.5)), ('negative_alpha', {'alpha': -1.25}, lambda x: Fn.elu(x, -1.25))],
    'softplus': [('beta2_t5', {'beta': 2.0, 'threshold': 5.0}, lambda x: Fn.softplus(x, 2.0, 5.0)),
                 ('beta0.5_t1', {'beta': 0.5, 'threshold': 1.0}, lambda x: Fn.softplus(x, 0.5, 1.0))],
    'hardtanh': [('float_bounds', {'min_val': -2.5, 'max_val': 0.5}, lambda x: Fn.hardtanh(x, -2.5, 0.5)),
                 ('int_bounds', {'min_val': 0.0, 'max_val': 5.0}, lambda x: Fn.hardtanh(x, 0.0, 5.0)),
                 ('min_gt_max', {'min_val': 2.0, 'max_val': 1.0}, lambda x: Fn.hardtanh(x, 2.0, 1.0))],
}

EXTRA = G.UNARY_EXTRA + [0.9, -0.9, 3.0, -3.0, 6.0, 5.0, 1e-30, 4.0, 0.125]


def unary_values(name, d):
    vals = pool(d)
    if is_float(d):
        vals = vals + EXTRA
    elif name == 'square' and d in ('int32', 'int64'):
        lo, hi = G.irange(d)
        vals = [v for v in vals if v * v <= hi]  # signed overflow is undefined in C++
    return vals


def _elu(alpha, scale=1.0):
    return lambda x: scale * (x if x > 0 else alpha * math.expm1(x))


def _gelu_tanh(x):
    if abs(x) > 10:  # the tanh is +-1 to double precision
        return x if x > 0 else -0.0
    return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


# Float64 references of the activations where PyTorch's 16-bit CPU kernels are far off (elu's
# exp(x) - 1 is 0 for tiny x, bfloat16 tanh-GELU rounds its steps): such elements are left out,
# as generate.py leaves out the unary results more than 1% off the correctly rounded value.
REF = {
    'elu': _elu(1.0), 'elu/alpha': _elu(0.5), 'elu/negative_alpha': _elu(-1.25),
    'selu': _elu(1.6732632423543772848170429916717, 1.0507009873554804934193349852946),
    'gelu_tanh': _gelu_tanh,
}


def accurate(ref, vals, d, out):
    if ref is None or not is_float(d) or out is None:
        return [True] * len(vals)
    got = out[0].reshape(-1).tolist()
    mask = []
    for x, g in zip(T(vals, d).double().tolist(), got):
        if math.isnan(x):
            mask.append(True)
            continue
        want = torch.tensor([ref(x)], dtype=torch.float64).to(out[0].dtype).item()
        mask.append(G.same_value(g, want, G.NAME[out[0].dtype], rel=1e-2) or (g == 0 and want == 0))
    return mask


def masked(fn, vals, d, name, ref=None):
    mask = G.stable_mask(fn, [vals], [d])
    out, _, _ = G.Family.run(fn, [T(vals, d)])
    mask = [m and a for m, a in zip(mask, accurate(ref, vals, d, out))]
    note_dropped(name, len(vals) - sum(mask))
    return keep(vals, mask)


def seeded(out):
    r = rng_for('more/gout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], G.NAME[out.dtype], list(out.shape))


def gen_unary(F):
    for name, fn in UNARY.items():
        variants = [('', {}, fn)] + [('/' + k, a, f) for k, a, f in PARAMS.get(name, [])]
        for key, args, f in variants:
            for d in ALL:
                vals = masked(f, unary_values(name, d), d, name, REF.get(name + key))
                F.case('%s%s/%s' % (name, key, d), name, args, [In('x', T(vals, d))], f)
        for view in ('t', 'step2'):
            x = T([0.5, -1.25, 2.0, 3.5, -0.0, 7.0], 'float32', [2, 3])
            F.case('%s/view/%s' % (name, view), name, {}, [In('x', x, view)], fn)
        F.case('%s/empty' % name, name, {}, [In('x', torch.zeros([0, 2]))], fn)
        F.case('%s/0dim' % name, name, {}, [In('x', torch.tensor(-0.75))], fn)

    # clamp_min / clamp_max: the number takes part in type promotion, as clamp's bounds.
    for name, fn in (('clamp_min', torch.clamp_min), ('clamp_max', torch.clamp_max)):
        for d in ALL:
            if d == 'float16':
                continue  # PyTorch's CPU has no float16 clamp_min; clamp's cases cover float16
            for num in (Num(1), Num(-0.5), Num(True)):
                if d == 'bool' and num.tok() == 'b:1':
                    continue  # PyTorch clamps bool by bool; Locus refuses it (elementwise.h, clamp)
                F.case('%s/%s/%s' % (name, d, num.tok()), name, {'bound': num}, [In('x', T(pool(d), d))],
                       lambda x, fn=fn, v=num.v: fn(x, v))
        F.case('%s/view' % name, name, {'bound': Num(0.5)}, [In('x', T([0.5, -1.25, 2.0, 3.5, -0.0, nan], 'float32', [2, 3]), 't')],
               lambda x, fn=fn: fn(x, 0.5))

    # hardtanh's refusal of unsigned tensors with negative bounds (bool: every dtype's case above).
    F.case('hardtanh/uint8_negative_bound', 'hardtanh', {}, [In('x', T([1, 2], 'uint8'))], Fn.hardtanh)


def gen_binary(F):
    for name, fn in (('atan2', torch.atan2), ('hypot', torch.hypot)):
        for da in ALL:
            for db in ALL:
                rt = G.result_type(da, db)
                pairs = G.pick_pairs(name, da, db, rt, 12, 'more/tt/%s/%s/%s' % (name, da, db), fn=fn)
                if rt in ('float16', 'bfloat16'):
                    # An integer operand is converted to the 16-bit result type first (100000 is inf
                    # in float16), which the float32 reference of PyTorch's missing CPU kernel
                    # skips: integers the 16-bit type holds exactly.
                    pairs = [(a, b) for a, b in pairs if (is_float(da) or abs(a) <= 256) and (is_float(db) or abs(b) <= 256)]
                a = T([p[0] for p in pairs], da, [3, 4] if len(pairs) == 12 else None)
                b = T([p[1] for p in pairs], db, [3, 4] if len(pairs) == 12 else None)
                F.case('%s/tt/%s-%s' % (name, da, db), name, {}, [In('a', a), In('b', b)], fn)
        for d in ('float32', 'float64'):
            p = pool(d)
            xs, ys = [x for x in p for _ in p], [y for _ in p for y in p]
            mask = G.stable_mask(fn, [xs, ys], [d, d])
            note_dropped(name, len(xs) - sum(mask))
            F.case('%s/edges/%s' % (name, d), name, {}, [In('a', T(keep(xs, mask), d)), In('b', T(keep(ys, mask), d))], fn)
        for sa, sb in (([2, 3], [3]), ([2, 1, 3], [4, 1]), ([], [2, 3]), ([3, 1], [1, 3])):
            a = gvals(sa, 'more/bc/a/%s/%s' % (name, sa), -3.0, 3.0)
            b = gvals(sb, 'more/bc/b/%s/%s' % (name, sb), -3.0, 3.0)
            F.case('%s/bcast/%s-%s' % (name, sfmt(sa), sfmt(sb)), name, {}, [In('a', a.float()), In('b', b.float())], fn)
        for va, vb in (('t', None), ('step2', 't'), ('expand', 'step2')):
            x = [1.5, -2.0, 3.25, 0.5] * 3
            y = [0.5, 4.0, -1.0, 2.5, -3.0, 1.0, 0.25, -0.5, 2.0, 8.0, -7.0, 3.0]
            F.case('%s/view/%s-%s' % (name, va, vb or 'c'), name, {},
                   [In('a', T(x, 'float32', [3, 4]), va), In('b', T(y, 'float32', [3, 4]), vb)], fn)
        F.case('%s/empty' % name, name, {}, [In('a', torch.zeros([0, 3])), In('b', torch.ones([3]))], fn)
        F.case('%s/bcast_error' % name, name, {}, [In('a', torch.ones([2, 3])), In('b', torch.ones([4]))], fn)


def gen_ternary(F):
    # lerp with a number weight: both branches of PyTorch's formula, every floating dtype.
    for d in FLOATS:
        r = rng_for('more/lerp/%s' % d)
        s = [r.choice([-2.5, -1.0, 0.0, 0.5, 1.5, 3.25, 100.0]) for _ in range(10)] + [nan, inf]
        e = [r.choice([-3.0, -0.5, 0.25, 1.0, 2.0, 7.5]) for _ in range(10)] + [1.0, 2.0]
        for w in (Num(0.3), Num(0.5), Num(0.7), Num(-0.25), Num(1.5), Num(1), Num(0)):
            F.case('lerp/scalar/%s/%s' % (d, w.tok()), 'lerp', {'weight': w}, [In('start', T(s, d)), In('end', T(e, d))],
                   lambda a, b, w=w.v: torch.lerp(a, b, w))
        wt = [r.choice([-0.5, 0.0, 0.25, 0.49, 0.5, 0.75, 1.0, 2.0]) for _ in range(12)]
        F.case('lerp/tensor/%s' % d, 'lerp', {}, [In('start', T(s, d)), In('end', T(e, d)), In('weight', T(wt, d))], torch.lerp)
    for ss, se, sw in (([2, 3], [3], [2, 1]), ([3], [2, 3], []), ([], [], [4])):
        a, b = gvals(ss, 'more/lb/a/%s' % ss).float(), gvals(se, 'more/lb/b/%s' % se).float()
        w = gvals(sw, 'more/lb/w/%s' % sw, -0.5, 1.5).float()
        F.case('lerp/bcast/%s-%s-%s' % (sfmt(ss), sfmt(se), sfmt(sw)), 'lerp', {},
               [In('start', a), In('end', b), In('weight', w)], torch.lerp)
    F.case('lerp/view', 'lerp', {'weight': Num(0.6)}, [In('start', T([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 'float32', [2, 3]), 't'),
                                                        In('end', T([0.5] * 6, 'float32', [2, 3]), 'expand')],
           lambda a, b: torch.lerp(a, b, 0.6))
    F.case('lerp/int_error', 'lerp', {'weight': Num(0.5)}, [In('start', T([1, 2], 'int64')), In('end', T([3, 4], 'int64'))],
           lambda a, b: torch.lerp(a, b, 0.5))
    F.case('lerp/dtype_error', 'lerp', {'weight': Num(0.5)}, [In('start', T([1.0], 'float32')), In('end', T([3.0], 'float64'))],
           lambda a, b: torch.lerp(a, b, 0.5))
    F.case('lerp/weight_dtype_error', 'lerp', {}, [In('start', T([1.0], 'float32')), In('end', T([3.0], 'float32')),
                                                    In('weight', T([0.5], 'float64'))], torch.lerp)

    # addcmul / addcdiv: every dtype, mixed dtypes, numbers, broadcasting, errors.
    small = {'bool': [0, 1], 'uint8': [0, 1, 2, 3, 7, 9], 'int8': [-7, -3, -1, 0, 2, 5], 'int16': [-100, -3, 0, 2, 9, 50],
             'int32': [-1000, -3, 0, 2, 9, 500], 'int64': [-1000, -3, 0, 2, 9, 500]}
    fvals = [-2.5, -1.0, 0.0, -0.0, 0.5, 1.5, 3.25, 100.0, nan, inf, -inf, 1e-3]
    for name, fn in (('addcmul', torch.addcmul), ('addcdiv', torch.addcdiv)):
        for d in ALL:
            r = rng_for('more/%s/%s' % (name, d))
            base = small[d] if d in small else fvals
            vals = [[r.choice(base) for _ in range(12)] for _ in range(3)]
            if name == 'addcdiv' and is_float(d):
                vals[2] = [v if v != 0 else 2.0 for v in vals[2]][:10] + [0.0, -0.0]
            ins = [In('self', T(vals[0], d, [3, 4])), In('tensor1', T(vals[1], d, [3, 4])), In('tensor2', T(vals[2], d, [3, 4]))]
            for v in (Num(1), Num(2), Num(-0.75), Num(True)):
                if d == 'bool' and v.tok() != 'i:1':
                    continue
                F.case('%s/%s/%s' % (name, d, v.tok()), name, {'value': v}, ins, lambda a, b, c, fn=fn, v=v.v: fn(a, b, c, value=v))
        for da, d1, d2 in (('float32', 'int64', 'int64'), ('int32', 'float64', 'int8'), ('float16', 'float32', 'float16'),
                           ('bfloat16', 'bfloat16', 'float16'), ('int64', 'int32', 'float32'), ('uint8', 'int8', 'int16')):
            r = rng_for('more/%s/mixed/%s%s%s' % (name, da, d1, d2))
            def vals(d):
                return [r.choice(small[d] if d in small else [-2.5, -1.0, 0.5, 1.5, 3.25]) for _ in range(6)]
            t2 = vals(d2)
            if name == 'addcdiv':
                t2 = [v if v != 0 else 3 for v in t2]
            F.case('%s/mixed/%s-%s-%s' % (name, da, d1, d2), name, {'value': Num(2)},
                   [In('self', T(vals(da), da)), In('tensor1', T(vals(d1), d1)), In('tensor2', T(t2, d2))],
                   lambda a, b, c, fn=fn: fn(a, b, c, value=2))
        for ss, s1, s2 in (([2, 3], [3], [2, 1]), ([], [2, 2], [2]), ([3, 1], [1, 4], [])):
            a, b = gvals(ss, 'more/ab/a/%s/%s' % (name, ss)).float(), gvals(s1, 'more/ab/b/%s/%s' % (name, s1)).float()
            c = gvals(s2, 'more/ab/c/%s/%s' % (name, s2), 0.5, 2.0).float()
            F.case('%s/bcast/%s-%s-%s' % (name, sfmt(ss), sfmt(s1), sfmt(s2)), name, {'value': Num(0.5)},
                   [In('self', a), In('tensor1', b), In('tensor2', c)], lambda a, b, c, fn=fn: fn(a, b, c, value=0.5))
        F.case('%s/view' % name, name, {'value': Num(1)},
               [In('self', T([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 'float32', [2, 3]), 't'),
                In('tensor1', T([0.5, 1.5, -2.0, 0.5, 1.5, -2.0], 'float32', [2, 3]), 'expand'),
                In('tensor2', T([2.0, 4.0, 8.0, -1.0, 0.5, 3.0], 'float32', [2, 3]), 'step2')], fn)
        F.case('%s/empty' % name, name, {'value': Num(1)},
               [In('self', torch.zeros([0, 3])), In('tensor1', torch.ones([3])), In('tensor2', torch.ones([1, 3]))], fn)
        F.case('%s/bcast_error' % name, name, {'value': Num(1)},
               [In('self', torch.ones([2, 3])), In('tensor1', torch.ones([4])), In('tensor2', torch.ones([3]))], fn)


def gen_inplace(F):
    methods = {'tan_': 'tan_', 'reciprocal_': 'reciprocal_', 'square_': 'square_', 'frac_': 'frac_',
               'nan_to_num_': 'nan_to_num_', 'clamp_min_': None, 'atan2_': 'atan2_', 'hypot_': 'hypot_',
               'lerp_': None, 'addcmul_': 'addcmul_', 'addcdiv_': 'addcdiv_'}
    for name in methods:
        for d in ('float32', 'int64', 'float64', 'bool'):
            x = T([1.5, -2.0, 0.25, nan, inf, 0.0], d) if is_float(d) else T([1, 0, 3, 1], d)
            ins = [In('x', x)]
            if name in ('atan2_', 'hypot_'):
                ins.append(In('other', T([2.0], 'float32')))
                f = lambda a, b, m=name: getattr(a.clone(), m)(b)
            elif name == 'lerp_':
                ins.append(In('end', T([2.0], d) if is_float(d) else T([2], d)))
                f = lambda a, b: a.clone().lerp_(b, 0.25)
            elif name in ('addcmul_', 'addcdiv_'):
                ins += [In('tensor1', T([2.0], 'float32')), In('tensor2', T([4.0], 'float32'))]
                f = lambda a, b, c, m=name: getattr(a.clone(), m)(b, c, value=0.5)
            elif name == 'clamp_min_':
                f = lambda a: a.clone().clamp_min_(1)
            else:
                f = lambda a, m=name: getattr(a.clone(), m)()
            F.case('inplace/%s/%s' % (name, d), name, {}, ins, f)


def gen_grads(F):
    avoid = (0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1, 2, -1, -2, 3, -3)
    ranges = {'asin': (-0.9, 0.9), 'acos': (-0.9, 0.9), 'log2': (0.1, 3.0), 'log10': (0.1, 3.0),
              'reciprocal': (0.2, 3.0), 'tan': (-1.2, 1.2)}
    no_grad = {'isnan', 'isinf', 'isfinite'}
    for name, fn in UNARY.items():
        if name in no_grad:
            continue
        variants = [('', {}, fn)] + [('/' + k, a, f) for k, a, f in PARAMS.get(name, [])]
        for key, args, f in variants:
            lo, hi = ranges.get(name, (-4.0, 4.0))
            x = gvals([2, 3], 'more/g/%s%s' % (name, key), lo, hi, avoid=avoid)
            F.case('grad/%s%s' % (name, key), name, args, [In('x', x, rg=True)], f, gout=seeded)
    # The points where the derivative is a convention, or a formula switches branch.
    edges = {
        'leaky_relu': [0.0, -0.0, 1.0, -1.0], 'elu': [0.0, -0.0, 1.0, -1.0], 'selu': [0.0, -1.0, 1.0],
        'relu6': [0.0, 6.0, -1.0, 3.0, 7.0], 'hardtanh': [-1.0, 1.0, 0.0, -2.0, 2.0],
        'hardsigmoid': [-3.0, 3.0, 0.0, -4.0, 4.0], 'hardswish': [-3.0, 3.0, 0.0, -4.0, 4.0],
        'softplus': [20.0, 20.5, 19.5, 0.0, -30.0], 'logsigmoid': [0.0, -0.0, 40.0, -40.0],
        'nan_to_num': [1.0, nan, inf, -inf, -2.0], 'frac': [0.0, -1.5, 2.25], 'silu': [0.0, -50.0, 50.0],
        'mish': [0.0, -30.0, 30.0], 'gelu_tanh': [0.0, -5.0, 5.0],
    }
    for name, vals in edges.items():
        F.case('grad/%s/edge' % name, name, {}, [In('x', T(vals, 'float64'), rg=True)], UNARY[name], gout=seeded)
    for key, args, f in PARAMS['softplus']:
        F.case('grad/softplus/%s/edge' % key, 'softplus', args,
               [In('x', T([args['threshold'] / args['beta'], 0.0, 10.0, -10.0], 'float64'), rg=True)], f, gout=seeded)
    for key, args, f in PARAMS['hardtanh'][:1]:
        F.case('grad/hardtanh/%s/edge' % key, 'hardtanh', args, [In('x', T([-2.5, 0.5, 0.0, -3.0, 1.0], 'float64'), rg=True)],
               f, gout=seeded)
    for name, fn in (('clamp_min', torch.clamp_min), ('clamp_max', torch.clamp_max)):
        F.case('grad/%s' % name, name, {'bound': Num(0.5)}, [In('x', T([-1.0, 0.5, 2.0, 0.25], 'float64'), rg=True)],
               lambda x, fn=fn: fn(x, 0.5), gout=seeded)
    for name, fn in (('atan2', torch.atan2), ('hypot', torch.hypot)):
        for sa, sb in (([2, 3], [2, 3]), ([2, 3], [3]), ([2, 1], [1, 3]), ([], [2, 2])):
            a = gvals(sa, 'more/g/a/%s/%s' % (name, sa), avoid=(0.0,))
            b = gvals(sb, 'more/g/b/%s/%s' % (name, sb), avoid=(0.0,))
            F.case('grad/%s/%s-%s' % (name, sfmt(sa), sfmt(sb)), name, {}, [In('a', a, rg=True), In('b', b, rg=True)], fn,
                   gout=seeded)
    for w in (Num(0.25), Num(0.75)):
        a, b = gvals([2, 3], 'more/g/lerp/a'), gvals([3], 'more/g/lerp/b')
        F.case('grad/lerp/scalar/%s' % w.tok(), 'lerp', {'weight': w}, [In('start', a, rg=True), In('end', b, rg=True)],
               lambda a, b, w=w.v: torch.lerp(a, b, w), gout=seeded)
    a, b, w = gvals([2, 3], 'more/g/lerpt/a'), gvals([2, 3], 'more/g/lerpt/b'), gvals([3], 'more/g/lerpt/w', -0.5, 1.5)
    F.case('grad/lerp/tensor', 'lerp', {}, [In('start', a, rg=True), In('end', b, rg=True), In('weight', w, rg=True)],
           torch.lerp, gout=seeded)
    for name, fn in (('addcmul', torch.addcmul), ('addcdiv', torch.addcdiv)):
        a, b = gvals([2, 3], 'more/g/%s/a' % name), gvals([2, 1], 'more/g/%s/b' % name)
        c = gvals([3], 'more/g/%s/c' % name, 0.5, 2.0)
        F.case('grad/%s' % name, name, {'value': Num(-1.5)},
               [In('self', a, rg=True), In('tensor1', b, rg=True), In('tensor2', c, rg=True)],
               lambda a, b, c, fn=fn: fn(a, b, c, value=-1.5), gout=seeded)


def generate():
    F = G.Family('elementwise_more')
    gen_unary(F)
    gen_binary(F)
    gen_ternary(F)
    gen_inplace(F)
    gen_grads(F)
    return F
