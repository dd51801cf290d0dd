"""Golden cases of the reductions of the op table beyond sum and mean: prod, amax, amin,
logsumexp, norm, var, std, var_mean, std_mean, any, all, count_nonzero; values on every dtype,
NaN/inf, empty slices, strided views, negative and repeated dims, errors, float64 gradients."""

import math

import torch

import generate as g

nan, inf = math.nan, math.inf
In, T = g.In, g.T


def seeded(out):
    r = g.rng_for('rgout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], g.NAME[out.dtype], list(out.shape))


def sixteen(d):
    return d in ('float16', 'bfloat16')


def generate():
    F = g.Family('reduce_more')
    for d in g.ALL:
        x = T(g.red_values(d, 24, 'rm/' + d), d, [2, 3, 4])
        small = T(g.red_values(d, 12, 'rmp/' + d), d, [3, 4])
        if g.is_float(d):  # products of small values only: no overflow to compare
            small = (small / 4).to(g.DT[d])
        elif d not in ('bool', 'uint8'):
            small = torch.clamp(small, -3, 3)
        elif d == 'uint8':
            small = small % 4
        ins = [In('x', x)]
        F.case('prod/all/%s' % d, 'prod', {}, [In('x', small)], torch.prod)
        F.case('prod/dim1/%s' % d, 'prod', {'dim': 1}, [In('x', small)], lambda x: x.prod(1))
        F.case('prod/dim-1_keepdim/%s' % d, 'prod', {'dim': -1, 'keepdim': True}, [In('x', small)],
               lambda x: x.prod(-1, keepdim=True))
        F.case('prod/view_t/%s' % d, 'prod', {'dim': 0}, [In('x', small, 't')], lambda x: x.prod(0))
        F.case('prod/empty/%s' % d, 'prod', {}, [In('x', torch.zeros([0], dtype=g.DT[d]))], torch.prod)
        for name in ('amax', 'amin'):
            f = getattr(torch, name)
            F.case('%s/all/%s' % (name, d), name, {}, ins, f)
            F.case('%s/dims02/%s' % (name, d), name, {'dims': [0, 2]}, ins, lambda x, f=f: f(x, [0, 2]))
            F.case('%s/dim-1_keepdim/%s' % (name, d), name, {'dim': -1, 'keepdim': True}, ins,
                   lambda x, f=f: f(x, -1, keepdim=True))
            F.case('%s/view_step2/%s' % (name, d), name, {'dim': 1}, [In('x', small, 'step2')], lambda x, f=f: f(x, 1))
            F.case('%s/empty/%s' % (name, d), name, {}, [In('x', torch.zeros([0], dtype=g.DT[d]))], f)
            F.case('%s/empty_other_dim/%s' % (name, d), name, {'dim': 1}, [In('x', torch.zeros([0, 3], dtype=g.DT[d]))],
                   lambda x, f=f: f(x, 1))
        for name in ('any', 'all'):
            f = getattr(torch, name)
            F.case('%s/all/%s' % (name, d), name, {}, ins, f)
            F.case('%s/dim1/%s' % (name, d), name, {'dim': 1}, ins, lambda x, f=f: f(x, 1))
            F.case('%s/dim0_keepdim/%s' % (name, d), name, {'dim': 0, 'keepdim': True}, ins,
                   lambda x, f=f: f(x, 0, keepdim=True))
            F.case('%s/empty/%s' % (name, d), name, {}, [In('x', torch.zeros([0], dtype=g.DT[d]))], f)
        F.case('count_nonzero/all/%s' % d, 'count_nonzero', {}, ins, torch.count_nonzero)
        F.case('count_nonzero/dims01/%s' % d, 'count_nonzero', {'dims': [0, 1]}, ins,
               lambda x: torch.count_nonzero(x, dim=[0, 1]))
        F.case('count_nonzero/dim-1/%s' % d, 'count_nonzero', {'dim': -1}, ins, lambda x: torch.count_nonzero(x, dim=-1))
        # 16-bit floats: Locus (and PyTorch's CUDA kernels) fold in float32 and round once; PyTorch's
        # CPU composes logsumexp and norm from 16-bit ops, rounding each.
        F.case('logsumexp/dim1/%s' % d, 'logsumexp', {'dim': 1}, ins, lambda x: torch.logsumexp(x, 1), upcast=sixteen(d))
        for name in ('var', 'std'):
            f = getattr(torch, name)
            F.case('%s/all/%s' % (name, d), name, {}, ins, f)
            F.case('%s/dims12_biased/%s' % (name, d), name, {'dims': [1, 2], 'unbiased': False}, ins,
                   lambda x, f=f: f(x, [1, 2], unbiased=False))
            F.case('%s/dim0_keepdim/%s' % (name, d), name, {'dims': [0], 'keepdim': True}, ins,
                   lambda x, f=f: f(x, [0], keepdim=True))
        F.case('norm/2/%s' % d, 'norm', {'p': 2.0}, ins, lambda x: torch.norm(x), upcast=sixteen(d))
    for d in g.FLOATS:
        r = g.rng_for('rmr/' + d)
        xr = T([r.gauss(0, 3) for _ in range(30)], d, [5, 6])
        ins = [In('x', xr)]
        for p in (1.0, 2.0, 3.0, 0.5, 0.0, inf, -inf):
            F.case('norm/p%s/%s' % (g.ffmt(p), d), 'norm', {'p': p, 'dims': [1]}, ins, lambda x, p=p: torch.norm(x, p, dim=1),
                   upcast=sixteen(d))
        F.case('norm/fro_keepdim/%s' % d, 'norm', {'p': 'fro', 'dims': [0], 'keepdim': True}, ins,
               lambda x: torch.norm(x, 'fro', dim=[0], keepdim=True), upcast=sixteen(d))
        F.case('norm/all_view_t/%s' % d, 'norm', {'p': 2.0}, [In('x', xr, 't')], lambda x: torch.norm(x), upcast=sixteen(d))
        F.case('norm/empty/%s' % d, 'norm', {'p': 2.0}, [In('x', torch.zeros([0], dtype=g.DT[d]))], lambda x: torch.norm(x))
        for c in (0, 1, 2):
            F.case('var/correction%d/%s' % (c, d), 'var', {'dims': [1], 'correction': c}, ins,
                   lambda x, c=c: torch.var(x, 1, correction=c))
            F.case('std/correction%d/%s' % (c, d), 'std', {'dims': [0], 'correction': c}, ins,
                   lambda x, c=c: torch.std(x, 0, correction=c))
        F.case('var_mean/dim1/%s' % d, 'var_mean', {'dims': [1]}, ins, lambda x: torch.var_mean(x, 1))
        F.case('std_mean/all_biased/%s' % d, 'std_mean', {'unbiased': False}, ins, lambda x: torch.std_mean(x, unbiased=False))
        F.case('var/one_element/%s' % d, 'var', {}, [In('x', T([2.5], d))], torch.var)
        F.case('var/empty/%s' % d, 'var', {}, [In('x', torch.zeros([0], dtype=g.DT[d]))], torch.var)
        far = T([1e4 + 0.25 * i for i in range(8)], d)  # far from 0: naive sum-of-squares cancels
        F.case('var/far_from_zero/%s' % d, 'var', {}, [In('x', far)], torch.var)
        F.case('logsumexp/random/%s' % d, 'logsumexp', {'dims': [0, 1]}, ins, lambda x: torch.logsumexp(x, [0, 1]), upcast=sixteen(d))
        F.case('logsumexp/view_t/%s' % d, 'logsumexp', {'dim': -1, 'keepdim': True}, [In('x', xr, 't')],
               lambda x: torch.logsumexp(x, -1, keepdim=True), upcast=sixteen(d))
        sp = T([1000.0, 1001.0, 1002.0, -inf, -inf, -inf, 0.0, -inf, 2.0, nan, 1.0, 2.0, inf, 1.0, inf, -65000.0],
               d, [4, 4])
        for name in ('logsumexp', 'amax', 'amin', 'prod'):
            f = getattr(torch, name)
            F.case('%s/special/%s' % (name, d), name, {'dim': 1}, [In('x', sp)], lambda x, f=f: f(x, 1),
                   upcast=sixteen(d) and name == 'logsumexp')
        for name in ('var', 'std', 'any', 'all', 'count_nonzero'):
            f = getattr(torch, name)
            F.case('%s/special/%s' % (name, d), name, {'dim': 1}, [In('x', sp)], lambda x, f=f: f(x, 1))
        F.case('norm/special/%s' % d, 'norm', {'p': 2.0, 'dims': [1]}, [In('x', sp)], lambda x: torch.norm(x, 2, dim=1), upcast=sixteen(d))
        F.case('logsumexp/empty/%s' % d, 'logsumexp', {'dim': 0}, [In('x', torch.zeros([0], dtype=g.DT[d]))],
               lambda x: torch.logsumexp(x, 0))
    # 16-bit inputs accumulate in float32 and round once.
    for d in ('float16', 'bfloat16'):
        x = T([0.1] * 2048, d)
        F.case('norm/accumulate/%s' % d, 'norm', {'p': 2.0}, [In('x', x)], lambda x: torch.norm(x), upcast=True)
        F.case('var/accumulate/%s' % d, 'var', {}, [In('x', x)], torch.var)
    # Errors.
    xi = T([1, 2, 3, 4], 'int64', [2, 2])
    x = T([1.0, 2.0, 3.0, 4.0], 'float32', [2, 2])
    F.case('norm/int_error', 'norm', {'p': 2.0}, [In('x', xi)], lambda x: torch.norm(x))
    F.case('var/int_error', 'var', {}, [In('x', xi)], torch.var)
    F.case('std/bool_error', 'std', {}, [In('x', T([1, 0], 'bool'))], torch.std)
    F.case('amax/dim_out_of_range', 'amax', {'dim': 2}, [In('x', x)], lambda x: torch.amax(x, 2))
    F.case('amax/dim_repeated', 'amax', {'dims': [0, 0]}, [In('x', x)], lambda x: torch.amax(x, [0, 0]))
    F.case('logsumexp/dim_out_of_range', 'logsumexp', {'dim': -3}, [In('x', x)], lambda x: torch.logsumexp(x, -3))
    F.case('prod/0dim', 'prod', {'dim': 0}, [In('x', torch.tensor(2.5))], lambda x: x.prod(0))
    F.case('amax/0dim', 'amax', {}, [In('x', torch.tensor(2.5))], torch.amax)
    F.case('var/0dim', 'var', {}, [In('x', torch.tensor(2.5))], torch.var)

    # Float64 gradients, dims negative and kept.
    G = [([3, 4], {}, {}), ([3, 4], {'dim': 1}, {}), ([2, 3, 4], {'dims': [0, 2]}, {}),
         ([2, 3, 4], {'dims': [-1], 'keepdim': True}, {})]
    def call(name, args):
        dims = args.get('dims', [args['dim']] if 'dim' in args else None)
        keep = args.get('keepdim', False)
        if name == 'prod':
            return lambda x: torch.prod(x) if dims is None else torch.prod(x, dims[0], keepdim=keep)
        if name in ('amax', 'amin', 'logsumexp'):
            f = getattr(torch, name)
            return lambda x: f(x, dims if dims is not None else (list(range(x.dim())) if name == 'logsumexp' else []),
                               keepdim=keep)
        if name in ('var', 'std'):
            f = getattr(torch, name)
            return lambda x: f(x) if dims is None else f(x, dims, keepdim=keep)
        if name == 'norm':
            return lambda x: torch.norm(x, args['p'], dim=dims, keepdim=keep)
        raise ValueError(name)
    for name in ('prod', 'amax', 'amin', 'logsumexp', 'var', 'std'):
        for k, (shape, args, _) in enumerate(G):
            if name == 'prod' and 'dims' in args and len(args['dims']) > 1:
                continue
            a = dict(args)
            if name == 'logsumexp' and not ('dim' in a or 'dims' in a):
                a['dims'] = list(range(len(shape)))
            x = g.gvals(shape, 'rg/%s/%d' % (name, k))
            F.case('grad/%s/%d' % (name, k), name, a, [In('x', x, rg=True)], call(name, a), gout=seeded)
    for p in (1.0, 2.0, 3.0, inf):
        for k, (shape, args, _) in enumerate(G[:3]):
            a = dict(args, p=p)
            x = g.gvals(shape, 'rgn/%s/%d' % (g.ffmt(p), k))
            F.case('grad/norm_p%s/%d' % (g.ffmt(p), k), 'norm', a, [In('x', x, rg=True)], call('norm', a), gout=seeded)
    # Ties and zeros, where the gradient is a convention.
    ties = T([1.0, 3.0, 3.0, 2.0, -1.0, -1.0, 0.5, 0.0], 'float64', [2, 4])
    for name in ('amax', 'amin'):
        F.case('grad/%s/ties' % name, name, {'dim': 1}, [In('x', ties, rg=True)], call(name, {'dim': 1}), gout=seeded)
    zeros = T([1.5, 0.0, 2.0, -1.0, 0.0, 0.0, 3.0, 2.0, 0.5], 'float64', [3, 3])
    F.case('grad/prod/zeros', 'prod', {'dim': 1}, [In('x', zeros, rg=True)], call('prod', {'dim': 1}), gout=seeded)
    F.case('grad/prod/zeros_all', 'prod', {}, [In('x', T([1.5, 0.0, 2.0], 'float64'), rg=True)], torch.prod, gout=seeded)
    F.case('grad/norm_p2/zero', 'norm', {'p': 2.0}, [In('x', T([0.0, 0.0], 'float64'), rg=True)], lambda x: torch.norm(x),
           gout=seeded)
    F.case('grad/var/correction0', 'var', {'dims': [1], 'correction': 0}, [In('x', g.gvals([2, 3], 'rgv0'), rg=True)],
           lambda x: torch.var(x, 1, correction=0), gout=seeded)
    return F
