"""Golden cases of sorting, selection and scans: sort, argsort, topk, kthvalue, median, cumsum,
cumprod; values and positions on every dtype (ties only where PyTorch's order is defined: the
stable sort), NaN, -0.0, empty and 0-dim inputs, errors, float64 gradients."""

import math

import torch

import generate as g

nan, inf = math.nan, math.inf
In, T = g.In, g.T


def seeded(out):
    r = g.rng_for('ssgout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], g.NAME[out.dtype], list(out.shape))


def distinct(d, shape, key):
    """Values without ties, so that every position PyTorch returns is defined."""
    n = math.prod(shape)
    r = g.rng_for(key)
    if d == 'bool':
        return None
    lo, hi = (0, 200) if d == 'uint8' else (-100, 100)
    vals = r.sample(range(lo, hi), n)
    if g.is_float(d):
        vals = [v / 4 for v in vals]
    return T(vals, d, shape)


def generate():
    F = g.Family('sort_scan')
    for d in g.ALL:
        ties = T(g.red_values(d, 24, 'sst/' + d), d, [2, 3, 4])
        # Stable sort: ties keep their order, so positions are defined even with ties.
        for dim in (-1, 1, 0):
            for desc in (False, True):
                F.case('sort/dim%d%s/%s' % (dim, '_desc' if desc else '', d), 'sort', {'dim': dim, 'descending': desc},
                       [In('x', ties)], lambda x, dim=dim, desc=desc: tuple(torch.sort(x, dim=dim, descending=desc, stable=True)))
        F.case('argsort/dim1/%s' % d, 'argsort', {'dim': 1}, [In('x', ties)],
               lambda x: torch.sort(x, dim=1, stable=True)[1])
        F.case('sort/view_t/%s' % d, 'sort', {'dim': 0}, [In('x', ties.reshape(4, 6), 't')],
               lambda x: tuple(torch.sort(x, dim=0, stable=True)))
        F.case('sort/empty/%s' % d, 'sort', {'dim': 1}, [In('x', torch.zeros([2, 0], dtype=g.DT[d]))],
               lambda x: tuple(torch.sort(x, dim=1, stable=True)))
        x = distinct(d, [3, 5], 'ssd/' + d)
        if x is not None and d != 'float16':  # PyTorch 1.13's CPU has no float16 kthvalue or median (or topk's)
            for k in (1, 3, 5):
                F.case('topk/k%d/%s' % (k, d), 'topk', {'k': k, 'dim': 1}, [In('x', x)], lambda x, k=k: tuple(torch.topk(x, k, 1)))
                F.case('topk/k%d_smallest/%s' % (k, d), 'topk', {'k': k, 'dim': 1, 'largest': False}, [In('x', x)],
                       lambda x, k=k: tuple(torch.topk(x, k, 1, largest=False)))
            F.case('topk/dim0/%s' % d, 'topk', {'k': 2, 'dim': 0}, [In('x', x)], lambda x: tuple(torch.topk(x, 2, 0)))
            F.case('topk/k0/%s' % d, 'topk', {'k': 0, 'dim': 1}, [In('x', x)], lambda x: tuple(torch.topk(x, 0, 1)))
            for k in (1, 3):
                F.case('kthvalue/k%d/%s' % (k, d), 'kthvalue', {'k': k, 'dim': 1}, [In('x', x)],
                       lambda x, k=k: tuple(torch.kthvalue(x, k, 1)))
            F.case('kthvalue/dim0_keepdim/%s' % d, 'kthvalue', {'k': 2, 'dim': 0, 'keepdim': True}, [In('x', x)],
                   lambda x: tuple(torch.kthvalue(x, 2, 0, keepdim=True)))
            F.case('median/dim1/%s' % d, 'median', {'dim': 1}, [In('x', x)], lambda x: tuple(torch.median(x, 1)))
            xe = distinct(d, [3, 4], 'sse/' + d)
            F.case('median/dim1_even/%s' % d, 'median', {'dim': 1}, [In('x', xe)], lambda x: tuple(torch.median(x, 1)))
            F.case('median/all/%s' % d, 'median', {}, [In('x', x)], torch.median)
        if d != 'bool':
            small = T(g.red_values(d, 12, 'ssc/' + d), d, [3, 4])
            if g.is_float(d):
                small = (small / 4).to(g.DT[d])
            elif d != 'uint8':
                small = torch.clamp(small, -3, 3)
            else:
                small = small % 4
        else:
            small = T(g.red_values(d, 12, 'ssc/' + d), d, [3, 4])
        for name in ('cumsum', 'cumprod'):
            f = getattr(torch, name)
            F.case('%s/dim1/%s' % (name, d), name, {'dim': 1}, [In('x', small)], lambda x, f=f: f(x, 1))
            F.case('%s/dim0/%s' % (name, d), name, {'dim': 0}, [In('x', small)], lambda x, f=f: f(x, 0))
            F.case('%s/view_t/%s' % (name, d), name, {'dim': -1}, [In('x', small, 't')], lambda x, f=f: f(x, -1))
            F.case('%s/empty/%s' % (name, d), name, {'dim': 0}, [In('x', torch.zeros([0, 2], dtype=g.DT[d]))],
                   lambda x, f=f: f(x, 0))
            F.case('%s/dtype_float64/%s' % (name, d), name, {'dim': 1, 'dtype': 'float64'}, [In('x', small)],
                   lambda x, f=f: f(x, 1, dtype=torch.float64))
    for d in g.FLOATS:
        sp = T([3.0, nan, -0.0, 0.0, -inf, inf, 1.0, nan, 2.0, 0.0, -0.0, -1.0], d, [2, 6])
        for desc in (False, True):
            F.case('sort/special%s/%s' % ('_desc' if desc else '', d), 'sort', {'dim': 1, 'descending': desc}, [In('x', sp)],
                   lambda x, desc=desc: tuple(torch.sort(x, dim=1, descending=desc, stable=True)))
        if d != 'float16':
            F.case('median/nan/%s' % d, 'median', {'dim': 1}, [In('x', T([3.0, nan, 1.0, 2.0, 5.0, 4.0], d, [2, 3]))],
                   lambda x: tuple(torch.median(x, 1)))
        F.case('cumsum/special/%s' % d, 'cumsum', {'dim': 1}, [In('x', sp)], lambda x: torch.cumsum(x, 1))
        r = g.rng_for('ssr/' + d)
        xr = T([r.gauss(0, 1) for _ in range(600)], d, [2, 300])  # rows longer than a CUDA block
        F.case('cumsum/long/%s' % d, 'cumsum', {'dim': 1}, [In('x', xr)], lambda x: torch.cumsum(x, 1))
    # nonzero and unique (values decide the shapes).
    for d in g.ALL:
        x = T(g.red_values(d, 24, 'ssu/' + d), d, [2, 3, 4])
        if d not in ('bool',):
            x = (x % 3) if g.is_int(d) else x  # repeats, so unique has something to do
        F.case('nonzero/%s' % d, 'nonzero', {}, [In('x', x)], torch.nonzero)
        if d == 'float16':
            continue  # PyTorch 1.13's CPU has no float16 unique
        F.case('unique/%s' % d, 'unique', {}, [In('x', x)], lambda x: torch.unique(x))
        F.case('unique/inverse_counts/%s' % d, 'unique', {'return_inverse': True, 'return_counts': True}, [In('x', x)],
               lambda x: tuple(torch.unique(x, return_inverse=True, return_counts=True)))
        F.case('unique/counts_view_t/%s' % d, 'unique', {'return_counts': True}, [In('x', x.reshape(4, 6), 't')],
               lambda x: tuple(torch.unique(x, return_counts=True)))
    F.case('nonzero/0dim', 'nonzero', {}, [In('x', torch.tensor(2.5))], torch.nonzero)
    F.case('nonzero/0dim_zero', 'nonzero', {}, [In('x', torch.tensor(0.0))], torch.nonzero)
    F.case('nonzero/empty', 'nonzero', {}, [In('x', torch.zeros([0, 3]))], torch.nonzero)
    F.case('nonzero/special', 'nonzero', {}, [In('x', T([0.0, -0.0, nan, inf, 1.0, 0.0], 'float32', [2, 3]))], torch.nonzero)
    F.case('unique/empty', 'unique', {'return_inverse': True, 'return_counts': True}, [In('x', torch.zeros([0]))],
           lambda x: tuple(torch.unique(x, return_inverse=True, return_counts=True)))
    # 0-dim and errors.
    F.case('sort/0dim', 'sort', {'dim': 0}, [In('x', torch.tensor(2.5))], lambda x: tuple(torch.sort(x, 0)))
    F.case('cumsum/0dim', 'cumsum', {'dim': 0}, [In('x', torch.tensor(2.5))], lambda x: torch.cumsum(x, 0))
    x = T([1.0, 2.0, 3.0, 4.0], 'float32', [2, 2])
    F.case('topk/k_too_large', 'topk', {'k': 3, 'dim': 1}, [In('x', x)], lambda x: tuple(torch.topk(x, 3, 1)))
    F.case('kthvalue/k0', 'kthvalue', {'k': 0, 'dim': 1}, [In('x', x)], lambda x: tuple(torch.kthvalue(x, 0, 1)))
    F.case('sort/dim_out_of_range', 'sort', {'dim': 2}, [In('x', x)], lambda x: tuple(torch.sort(x, 2)))
    F.case('cumsum/dim_out_of_range', 'cumsum', {'dim': -3}, [In('x', x)], lambda x: torch.cumsum(x, -3))
    F.case('median/empty', 'median', {}, [In('x', torch.zeros([0]))], torch.median)
    F.case('median/empty_dim', 'median', {'dim': 1}, [In('x', torch.zeros([0, 3]))], lambda x: tuple(torch.median(x, 1)))

    # Float64 gradients.
    for k, (name, args, fn) in enumerate([
            ('sort', {'dim': 1}, lambda x: torch.sort(x, 1)[0]),
            ('sort', {'dim': 0, 'descending': True}, lambda x: torch.sort(x, 0, descending=True)[0]),
            ('topk', {'k': 2, 'dim': 1}, lambda x: torch.topk(x, 2, 1)[0]),
            ('topk', {'k': 1, 'dim': 0, 'largest': False}, lambda x: torch.topk(x, 1, 0, largest=False)[0]),
            ('kthvalue', {'k': 2, 'dim': 1}, lambda x: torch.kthvalue(x, 2, 1)[0]),
            ('median', {'dim': 0, 'keepdim': True}, lambda x: torch.median(x, 0, keepdim=True)[0]),
            ('median', {}, torch.median),
            ('cumsum', {'dim': 1}, lambda x: torch.cumsum(x, 1)),
            ('cumprod', {'dim': 1}, lambda x: torch.cumprod(x, 1)),
            ('cumprod', {'dim': 0}, lambda x: torch.cumprod(x, 0))]):
        x = distinct('float64', [3, 4], 'ssg/%d' % k)
        F.case('grad/%s/%d' % (name, k), name, args, [In('x', x, rg=True)], fn, gout=seeded)
    zeros = T([1.5, 0.0, 2.0, -1.0, 0.0, 0.0, 3.0, 2.0, 0.5, 0.0, 1.0, 2.0], 'float64', [3, 4])
    F.case('grad/cumprod/zeros', 'cumprod', {'dim': 1}, [In('x', zeros, rg=True)], lambda x: torch.cumprod(x, 1), gout=seeded)
    F.case('grad/cumprod/zeros_dim0', 'cumprod', {'dim': 0}, [In('x', zeros, rg=True)], lambda x: torch.cumprod(x, 0),
           gout=seeded)
    return F
