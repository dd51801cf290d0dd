"""The products family: bmm, addmm, baddbmm, mv, dot, outer/ger, broadcast matmul and einsum
against PyTorch 1.13: dtypes, strided and broadcast operands, empty dims, alpha/beta, float64
gradients and errors. Run through generate.py."""

import torch

import generate as G
from generate import In, Num, T, sfmt

nan, inf = float('nan'), float('inf')
FLOATS = ('float32', 'float64', 'bfloat16', 'float16')


def vals(d, shape, key):
    """Small values: exact in every dtype, so integer products stay exact too."""
    return G.small(d, shape, 'products/' + key)


def rnd(d, shape, key):
    return G.randf(d, shape, 'products/' + key)


def seeded(out):
    r = G.rng_for('products/gout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], G.NAME[out.dtype], list(out.shape))


def up(d):
    # bfloat16 products: the float32 result rounded once (generate.py's README, ref=f32).
    return d == 'bfloat16'


def gen_bmm(F):
    for d in FLOATS + ('int64', 'int32', 'int16', 'uint8'):
        for sa, sb in (([2, 3, 4], [2, 4, 5]), ([1, 2, 3], [1, 3, 1]), ([3, 2, 0], [3, 0, 4]), ([0, 2, 3], [0, 3, 4]),
                       ([2, 0, 3], [2, 3, 2])):
            a, b = vals(d, sa, 'bmm/a/%s/%s' % (d, sa)), vals(d, sb, 'bmm/b/%s/%s' % (d, sb))
            F.case('bmm/%s/%s-%s' % (d, sfmt(sa), sfmt(sb)), 'bmm', {}, [In('a', a), In('b', b)], torch.bmm, upcast=up(d))
    for d in ('float32', 'float64', 'bfloat16'):
        a, b = rnd(d, [3, 5, 4], 'bmmv/a' + d), rnd(d, [3, 4, 6], 'bmmv/b' + d)
        F.case('bmm/views/%s' % d, 'bmm', {}, [In('a', a, 't'), In('b', b, 'step2')], torch.bmm, upcast=up(d))
        F.case('bmm/expand/%s' % d, 'bmm', {}, [In('a', a[0:1].expand(3, 5, 4).contiguous(), 'expand'), In('b', b)],
               torch.bmm, upcast=up(d))
    f = torch.ones
    for name, (sa, sb) in {'2d': ([3, 4], [4, 5]), 'batch': ([2, 3, 4], [3, 4, 5]), 'inner': ([2, 3, 4], [2, 5, 5]),
                           '4d': ([1, 2, 3, 4], [1, 2, 4, 5])}.items():
        F.case('bmm/error/%s' % name, 'bmm', {}, [In('a', f(sa)), In('b', f(sb))], torch.bmm)
    F.case('bmm/error/dtype', 'bmm', {}, [In('a', f([2, 2, 2])), In('b', f([2, 2, 2], dtype=torch.float64))], torch.bmm)
    F.case('bmm/error/bool', 'bmm', {}, [In('a', f([2, 2, 2], dtype=torch.bool)), In('b', f([2, 2, 2], dtype=torch.bool))],
           torch.bmm)


SCALINGS = {'default': (None, None), 'scaled': (Num(0.5), Num(-2.0)), 'beta0': (Num(0.0), Num(1.5)),
            'alpha0': (Num(2.0), Num(0.0)), 'int': (Num(2), Num(3))}


def scaled(fn, beta, alpha):
    kw = {}
    if beta is not None:
        kw['beta'] = G.pyval(beta)
    if alpha is not None:
        kw['alpha'] = G.pyval(alpha)
    return lambda s, a, b: fn(s, a, b, **kw)


def scale_args(beta, alpha):
    args = {}
    if beta is not None:
        args['beta'] = beta
    if alpha is not None:
        args['alpha'] = alpha
    return args


def gen_addmm(F):
    for d in ('float32', 'float64', 'bfloat16', 'int64', 'int32'):
        for sname, (beta, alpha) in SCALINGS.items():
            if G.is_int(d) and sname in ('scaled', 'beta0'):
                continue
            for ss in ([2, 4], [4], [1, 1], []):
                s = vals(d, ss, 'addmm/s/%s/%s' % (d, ss))
                a, b = vals(d, [2, 3], 'addmm/a/' + d), vals(d, [3, 4], 'addmm/b/' + d)
                F.case('addmm/%s/%s/%s' % (d, sname, sfmt(ss)), 'addmm', scale_args(beta, alpha),
                       [In('self', s), In('a', a), In('b', b)], scaled(torch.addmm, beta, alpha), upcast=up(d))
        # k = 0: beta * self, and zeros when beta is 0.
        for sname in ('default', 'int') if G.is_int(d) else ('default', 'scaled', 'beta0'):
            beta, alpha = SCALINGS[sname]
            s = vals(d, [2, 3], 'addmm/k0/' + d)
            F.case('addmm/%s/k0/%s' % (d, sname), 'addmm', scale_args(beta, alpha),
                   [In('self', s), In('a', vals(d, [2, 0], 'e')), In('b', vals(d, [0, 3], 'e'))],
                   scaled(torch.addmm, beta, alpha), upcast=up(d))
    # beta = 0 ignores NaN and inf in self.
    for d in ('float32', 'float64', 'bfloat16'):
        s = T([nan, inf, -inf, 1.0, nan, 2.0], d, [2, 3])
        a, b = rnd(d, [2, 5], 'addmm/nan/a'), rnd(d, [5, 3], 'addmm/nan/b')
        F.case('addmm/%s/beta0_nan' % d, 'addmm', {'beta': Num(0.0)}, [In('self', s), In('a', a), In('b', b)],
               lambda s, a, b: torch.addmm(s, a, b, beta=0.0), upcast=up(d))
        F.case('addmm/%s/views' % d, 'addmm', {'beta': Num(0.25), 'alpha': Num(3.0)},
               [In('self', rnd(d, [2, 3], 'addmm/v/s'), 't'), In('a', rnd(d, [2, 5], 'addmm/v/a'), 'step2'),
                In('b', rnd(d, [5, 3], 'addmm/v/b'), 't')],
               lambda s, a, b: torch.addmm(s, a, b, beta=0.25, alpha=3.0), upcast=up(d))
    f = torch.ones
    for name, shapes in {'mat1_3d': ([2, 3], [2, 3, 1], [3, 3]), 'inner': ([2, 3], [2, 3], [4, 3]),
                         'self_shape': ([4], [2, 3], [3, 3]), 'mat2_1d': ([2, 3], [2, 3], [3])}.items():
        F.case('addmm/error/%s' % name, 'addmm', {}, [In('self', f(shapes[0])), In('a', f(shapes[1])), In('b', f(shapes[2]))],
               torch.addmm)
    F.case('addmm/error/self_dtype', 'addmm', {},
           [In('self', f([2, 3], dtype=torch.float64)), In('a', f([2, 3])), In('b', f([3, 3]))], torch.addmm)
    F.case('addmm/error/dtype', 'addmm', {},
           [In('self', f([2, 3])), In('a', f([2, 3])), In('b', f([3, 3], dtype=torch.float64))], torch.addmm)


def gen_baddbmm(F):
    for d in ('float32', 'float64', 'bfloat16', 'int64'):
        for sname, (beta, alpha) in SCALINGS.items():
            if G.is_int(d) and sname in ('scaled', 'beta0'):
                continue
            for ss in ([2, 3, 4], [3, 4], [4], [2, 1, 1]):
                s = vals(d, ss, 'baddbmm/s/%s/%s' % (d, ss))
                a, b = vals(d, [2, 3, 5], 'baddbmm/a/' + d), vals(d, [2, 5, 4], 'baddbmm/b/' + d)
                F.case('baddbmm/%s/%s/%s' % (d, sname, sfmt(ss)), 'baddbmm', scale_args(beta, alpha),
                       [In('self', s), In('a', a), In('b', b)], scaled(torch.baddbmm, beta, alpha), upcast=up(d))
        s = vals(d, [2, 3, 4], 'baddbmm/k0/' + d)
        F.case('baddbmm/%s/k0' % d, 'baddbmm', {'beta': Num(2) if G.is_int(d) else Num(0.5)},
               [In('self', s), In('a', vals(d, [2, 3, 0], 'e')), In('b', vals(d, [2, 0, 4], 'e'))],
               lambda s, a, b, d=d: torch.baddbmm(s, a, b, beta=2 if G.is_int(d) else 0.5), upcast=up(d))
    s = T([nan] * 8, 'float32', [2, 2, 2])
    F.case('baddbmm/float32/beta0_nan', 'baddbmm', {'beta': Num(0.0)},
           [In('self', s), In('a', rnd('float32', [2, 2, 3], 'bn/a')), In('b', rnd('float32', [2, 3, 2], 'bn/b'))],
           lambda s, a, b: torch.baddbmm(s, a, b, beta=0.0))
    f = torch.ones
    for name, shapes in {'batch1_2d': ([2, 3], [2, 3], [3, 3]), 'batch': ([2, 2, 3], [2, 2, 3], [3, 3, 3]),
                         'self_shape': ([4, 2, 3], [2, 2, 3], [2, 3, 3])}.items():
        F.case('baddbmm/error/%s' % name, 'baddbmm', {},
               [In('self', f(shapes[0])), In('a', f(shapes[1])), In('b', f(shapes[2]))], torch.baddbmm)


def gen_vectors(F):
    for d in FLOATS + ('int64', 'int32', 'int8'):
        m, v = vals(d, [3, 4], 'mv/m/' + d), vals(d, [4], 'mv/v/' + d)
        F.case('mv/%s' % d, 'mv', {}, [In('m', m), In('v', v)], torch.mv, upcast=up(d))
        a, b = vals(d, [5], 'dot/a/' + d), vals(d, [5], 'dot/b/' + d)
        F.case('dot/%s' % d, 'dot', {}, [In('a', a), In('b', b)], torch.dot, upcast=up(d))
        F.case('outer/%s' % d, 'outer', {}, [In('a', a), In('b', vals(d, [3], 'outer/b/' + d))], torch.outer)
    for d in ('float32', 'float64'):
        m = rnd(d, [3, 4], 'mvv/m/' + d)
        F.case('mv/views/%s' % d, 'mv', {}, [In('m', m, 't'), In('v', rnd(d, [4], 'mvv/v'), 'step2')], torch.mv)
        F.case('dot/views/%s' % d, 'dot', {}, [In('a', rnd(d, [6], 'dv/a'), 'step2'), In('b', rnd(d, [6], 'dv/b'), 'step2')],
               torch.dot)
        F.case('mv/empty/%s' % d, 'mv', {}, [In('m', vals(d, [3, 0], 'e')), In('v', vals(d, [0], 'e'))], torch.mv)
        F.case('mv/empty_rows/%s' % d, 'mv', {}, [In('m', vals(d, [0, 3], 'e')), In('v', vals(d, [3], 'e3'))], torch.mv)
        F.case('dot/empty/%s' % d, 'dot', {}, [In('a', vals(d, [0], 'e')), In('b', vals(d, [0], 'e'))], torch.dot)
        F.case('outer/empty/%s' % d, 'outer', {}, [In('a', vals(d, [0], 'e')), In('b', vals(d, [3], 'e3'))], torch.outer)
    # outer promotes (it is a multiply), bool included; ger is its old name.
    for da, db in (('float32', 'float64'), ('int8', 'bool'), ('bool', 'bool'), ('int64', 'float32')):
        F.case('outer/%s-%s' % (da, db), 'outer', {}, [In('a', vals(da, [3], 'op/' + da)), In('b', vals(db, [2], 'op/' + db))],
               torch.outer)
    F.case('ger/float32', 'ger', {}, [In('a', vals('float32', [3], 'ger/a')), In('b', vals('float32', [2], 'ger/b'))], torch.ger)
    f = torch.ones
    for name, (op, fn, sa, sb) in {
            'mv_size': ('mv', torch.mv, [2, 3], [4]), 'mv_dim': ('mv', torch.mv, [2, 3], [3, 1]),
            'mv_vec': ('mv', torch.mv, [3], [3]), 'dot_size': ('dot', torch.dot, [3], [4]),
            'dot_dim': ('dot', torch.dot, [3, 1], [3]), 'outer_dim': ('outer', torch.outer, [3], [4, 1])}.items():
        F.case('%s/error/%s' % (op, name), op, {}, [In('a', f(sa)), In('b', f(sb))], fn)
    F.case('dot/error/dtype', 'dot', {}, [In('a', f([3])), In('b', f([3], dtype=torch.float64))], torch.dot)
    F.case('dot/error/bool', 'dot', {}, [In('a', f([3], dtype=torch.bool)), In('b', f([3], dtype=torch.bool))], torch.dot)
    F.case('mv/error/dtype', 'mv', {}, [In('a', f([2, 3])), In('b', f([3], dtype=torch.float64))], torch.mv)


def gen_matmul(F):
    # Broadcast batch dims and 1-D promotion (the shape family has the basic cases).
    for d in ('float32', 'float64', 'int64'):
        for sa, sb in (([2, 2, 3], [3, 2, 3, 5]), ([3], [2, 3, 5]), ([2, 2, 3], [3]), ([5, 1, 2, 3], [4, 3, 2]),
                       ([1, 3], [2, 3, 1]), ([4, 1, 3], [1, 3, 2]), ([2, 0, 3], [3, 4]), ([3], [0, 3, 2])):
            a, b = vals(d, sa, 'mmb/a/%s/%s' % (d, sa)), vals(d, sb, 'mmb/b/%s/%s' % (d, sb))
            F.case('matmul/broadcast/%s/%s-%s' % (d, sfmt(sa), sfmt(sb)), 'matmul', {}, [In('a', a), In('b', b)],
                   torch.matmul)
    f = torch.ones
    for sa, sb in (([3], [2, 4, 5]), ([2, 2, 3], [4]), ([2, 2, 3], [3, 3, 5])):
        F.case('matmul/broadcast_error/%s-%s' % (sfmt(sa), sfmt(sb)), 'matmul', {}, [In('a', f(sa)), In('b', f(sb))],
               torch.matmul)


# einsum: (equation, operand shapes); values are random floats.
EINSUM = [
    ('ij,jk->ik', [[2, 3], [3, 4]]), ('ij,jk', [[2, 3], [3, 4]]), ('bij,bjk->bik', [[2, 3, 4], [2, 4, 5]]),
    ('ii', [[3, 3]]), ('ii->i', [[3, 3]]), ('ij->ji', [[2, 3]]), ('ij', [[2, 3]]), ('ji', [[2, 3]]),
    ('i,j->ij', [[3], [4]]), ('i,j', [[3], [4]]), ('i,i->', [[4], [4]]), ('i,i', [[4], [4]]), ('i,i->i', [[4], [4]]),
    ('bn,anm,bm->ba', [[2, 3], [4, 3, 5], [2, 5]]), ('...ij,...jk', [[2, 1, 2, 3], [4, 3, 5]]),
    ('...ij,...jk->...ik', [[3, 2, 3], [3, 3, 2]]), ('ij->', [[2, 3]]), ('ij->i', [[2, 3]]), ('ij->j', [[2, 3]]),
    ('ij,jk,kl,lm->im', [[2, 3], [3, 4], [4, 2], [2, 5]]), ('ab,bc,cd,de', [[2, 2], [2, 3], [3, 2], [2, 2]]),
    ('iij->j', [[3, 3, 2]]), ('iji->j', [[2, 3, 2]]), ('aab,bcc->ac', [[2, 2, 3], [3, 4, 4]]), ('i...->...', [[2, 3, 4]]),
    ('...i->...', [[2, 3, 4]]), ('...', [[2, 3]]), ('a...a', [[3, 2, 3]]), ('ij...,jk...', [[2, 3, 4], [3, 5, 4]]),
    ('...i,...i->...', [[2, 3], [4, 1, 3]]), ('i,->i', [[3], []]), (',->', [[], []]), ('->', [[]]), ('', [[]]),
    ('Ab,bc', [[2, 3], [3, 4]]), ('ba,b', [[2, 3], [2]]), ('ij, jk -> ik', [[2, 3], [3, 2]]),
    ('bhqd,bhkd->bhqk', [[2, 2, 3, 4], [2, 2, 5, 4]]), ('bhqk,bhkd->bhqd', [[2, 2, 3, 5], [2, 2, 5, 4]]),
    ('ijk,ijk->ij', [[2, 3, 4], [2, 3, 4]]), ('ijk,ikl->ijl', [[2, 3, 4], [2, 4, 5]]), ('ij,ij,ij->', [[2, 3]] * 3),
    ('i,j,k->ijk', [[2], [3], [2]]), ('i,j,k,l->ijkl', [[2], [2], [3], [2]]), ('ij,jk->ki', [[2, 3], [3, 4]]),
    ('ij,kj->ik', [[2, 3], [4, 3]]), ('abc,cd->abd', [[2, 3, 4], [4, 2]]), ('ii,i->i', [[3, 3], [3]]),
    ('ij,jk', [[2, 1], [3, 4]]), ('i,i', [[1], [3]]), ('ij,jk->ik', [[2, 0], [0, 3]]), ('ij,jk->ik', [[0, 3], [3, 2]]),
    ('bij->b', [[0, 2, 3]]), ('ii->', [[0, 0]]),
]

EINSUM_ERRORS = [
    ('ii', [[2, 3]]), ('ij', [[2, 3, 4]]), ('ij', [[2]]), ('...ij', [[2]]), ('ij,jk', [[2, 3]]), ('ij', [[2, 3], [3, 4]]),
    ('ij->ii', [[2, 3]]), ('ij->k', [[2, 3]]), ('i$', [[2, 3]]), ('i.j', [[2, 3]]), ('..i', [[2]]), ('i->i->i', [[2]]),
    ('ij,jk', [[2, 2], [3, 4]]), ('...i,...i', [[2, 3], [4, 5, 3]]), ('i,i', [[2], [3]]),
]


def einsum_case(F, k, eq, shapes, d, grad):
    ins = [In('x%d' % i, rnd(d, s, 'ein/%d/%d/%s' % (k, i, d)), rg=grad) for i, s in enumerate(shapes)]
    fn = lambda *ts, eq=eq: torch.einsum(eq, *ts)  # noqa: E731
    F.case('einsum/%s/%d%s' % (d, k, '/grad' if grad else ''), 'einsum', {'eq': eq.replace(' ', '_')}, ins, fn,
           gout=seeded if grad else None)


def gen_einsum(F):
    for k, (eq, shapes) in enumerate(EINSUM):
        for d in ('float32', 'float64'):
            einsum_case(F, k, eq, shapes, d, False)
        einsum_case(F, k, eq, shapes, 'float64', True)
    for k, (eq, shapes) in enumerate(EINSUM[:12]):
        ins = [In('x%d' % i, vals('int64', s, 'eini/%d/%d' % (k, i))) for i, s in enumerate(shapes)]
        F.case('einsum/int64/%d' % k, 'einsum', {'eq': eq.replace(' ', '_')}, ins, lambda *ts, eq=eq: torch.einsum(eq, *ts))
    for k, (eq, shapes) in enumerate(EINSUM_ERRORS):
        ins = [In('x%d' % i, torch.ones(s)) for i, s in enumerate(shapes)]
        F.case('einsum/error/%d' % k, 'einsum', {'eq': eq}, ins, lambda *ts, eq=eq: torch.einsum(eq, *ts))


def gen_grads(F):
    d = 'float64'
    g = lambda shape, key: G.gvals(shape, 'products/grad/' + key)  # noqa: E731
    F.case('grad/bmm', 'bmm', {}, [In('a', g([2, 3, 4], 'bmm/a'), rg=True), In('b', g([2, 4, 2], 'bmm/b'), rg=True)],
           torch.bmm, gout=seeded)
    for ss in ([2, 4], [4], []):
        F.case('grad/addmm/%s' % sfmt(ss), 'addmm', {'beta': Num(0.5), 'alpha': Num(-1.5)},
               [In('self', g(ss, 'am/s%s' % ss), rg=True), In('a', g([2, 3], 'am/a'), rg=True),
                In('b', g([3, 4], 'am/b'), rg=True)],
               lambda s, a, b: torch.addmm(s, a, b, beta=0.5, alpha=-1.5), gout=seeded)
    F.case('grad/addmm/beta0', 'addmm', {'beta': Num(0.0)},
           [In('self', g([2, 4], 'am0/s'), rg=True), In('a', g([2, 3], 'am0/a'), rg=True), In('b', g([3, 4], 'am0/b'), rg=True)],
           lambda s, a, b: torch.addmm(s, a, b, beta=0.0), gout=seeded)
    F.case('grad/addmm/views', 'addmm', {},
           [In('self', g([2, 4], 'amv/s'), 't', rg=True), In('a', g([2, 3], 'amv/a'), 't', rg=True),
            In('b', g([3, 4], 'amv/b'), 'step2', rg=True)], torch.addmm, gout=seeded)
    F.case('grad/baddbmm', 'baddbmm', {'beta': Num(2.0), 'alpha': Num(0.5)},
           [In('self', g([3, 4], 'bb/s'), rg=True), In('a', g([2, 3, 2], 'bb/a'), rg=True),
            In('b', g([2, 2, 4], 'bb/b'), rg=True)],
           lambda s, a, b: torch.baddbmm(s, a, b, beta=2.0, alpha=0.5), gout=seeded)
    F.case('grad/mv', 'mv', {}, [In('m', g([3, 4], 'mv/m'), rg=True), In('v', g([4], 'mv/v'), rg=True)], torch.mv,
           gout=seeded)
    F.case('grad/dot', 'dot', {}, [In('a', g([4], 'dot/a'), rg=True), In('b', g([4], 'dot/b'), rg=True)], torch.dot,
           gout=seeded)
    F.case('grad/outer', 'outer', {}, [In('a', g([3], 'o/a'), rg=True), In('b', g([2], 'o/b'), rg=True)], torch.outer,
           gout=seeded)
    for sa, sb in (([2, 2, 3], [3, 2, 3, 5]), ([3], [2, 3, 5]), ([2, 2, 3], [3]), ([4, 1, 3], [1, 3, 2])):
        F.case('grad/matmul/%s-%s' % (sfmt(sa), sfmt(sb)), 'matmul', {},
               [In('a', g(sa, 'mm/a%s' % sa), rg=True), In('b', g(sb, 'mm/b%s' % sb), rg=True)], torch.matmul, gout=seeded)
    del d


def generate():
    F = G.Family('products', prefix='products/')
    gen_bmm(F)
    gen_addmm(F)
    gen_baddbmm(F)
    gen_vectors(F)
    gen_matmul(F)
    gen_einsum(F)
    gen_grads(F)
    return F
