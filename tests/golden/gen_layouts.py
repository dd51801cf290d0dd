"""Golden family `layouts`: the cases the layout runs (README.md, "Layouts") cannot make from the
other families, for the ops with kernels of their own: inputs whose rows along dim 0 are all equal,
recorded with `view=expand` so that Locus builds them as row 0 expanded with stride 0 (data,
weights, biases, and index tensors where equal rows are valid), forward and float64 backward; and
empty batches (N = 0, or no rows of an index or source), forward and backward, or the error
PyTorch 1.13 raises. Ops: conv1d, conv2d (groups with stride and padding, dilation),
conv_transpose2d, linear (which has its cases here only: plain too, 2-d, 3-d and 1-d inputs, no
bias, no input features, errors), batch_norm (training with running statistics, eval),
group_norm, instance_norm, layer_norm, rms_norm, max/avg pooling 1d and 2d, adaptive avg/max
pooling, interpolate (nearest, bilinear), embedding, scaled_dot_product_attention, the losses
(cross_entropy, nll_loss, binary_cross_entropy with and without logits, mse, l1, smooth l1,
kl_div), sort, topk, cumsum, cumprod, gather, scatter, scatter_add, index_select, index_add, bmm,
matmul, einsum, softmax and log_softmax.

Ids are `<op>[/<variant>]/<expand|empty|plain>/<fwd|bwd>`. Forward cases hold float32 values
(dyadic k / 4 where the op only sums, so any summation order gives the same result), backward
cases float64 generate.gvals with every floating input requiring grad (not the running
statistics, which batch norm writes in place, nor BCE's weights, which PyTorch does not
differentiate) and a plain `gout`. Sorted, pooled and top-k rows hold distinct values, so every
index and gradient is defined. The optimizers' cases are the `optim` and `optimizers` families':
the layout runs lay their parameters and gradients out already."""

import math

import torch
import torch.nn.functional as Fn

import gen_cnn as cnn
import gen_transformer as tr
import generate as g
from generate import In, T

FLOAT_KINDS = ('x', 'distinct', 'pos', 'prob', 'target01', 'logp', 'softmax')
N_EXPANDED = 2  # the batch of the expanded cases: the smallest with a row to repeat


def seeded(out):
    """The gradient fed to backward: 1 for a 0-dim result, fixed pseudo-random values otherwise."""
    if out.dim() == 0:
        return torch.tensor(1.0, dtype=out.dtype)
    r = g.rng_for('layoutsgout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], g.NAME[out.dtype], list(out.shape))


class Spec:
    """One input: its name, its shape ('N' for the batch dim), the kind of its values, whether the
    expanded cases expand it and whether the backward cases differentiate it (both by default for
    floating inputs only), and for integer kinds the bound of their values."""

    def __init__(self, name, shape, kind='x', expand=None, rg=None, hi=None):
        self.name, self.shape, self.kind, self.hi = name, shape, kind, hi
        is_float = kind in FLOAT_KINDS
        self.expand = is_float if expand is None else expand
        self.rg = is_float if rg is None else rg

    def shape_for(self, n):
        return [n if s == 'N' else s for s in self.shape]

    def values(self, d, shape, key, grad):
        k, n = self.kind, math.prod(shape)
        if k == 'ids':  # integers in [0, hi)
            r = g.rng_for('layoutsids/' + key)
            return T([r.randrange(self.hi) for _ in range(n)], 'int64', shape)
        if k == 'perm':  # distinct integers in [0, hi) along the last dim (scatter's targets)
            r = g.rng_for('layoutsperm/' + key)
            rows = n // shape[-1] if shape[-1] else 0
            return T([v for _ in range(rows) for v in r.sample(range(self.hi), shape[-1])], 'int64', shape)
        if k == 'mask':
            return tr.bool_mask(shape, 'layouts/' + key)
        if k == 'distinct':
            return cnn.distinct(d, shape, 'layouts/' + key)
        if k == 'pos':
            return cnn.positive(d, shape, 'layouts/' + key)
        if k == 'x':
            return g.gvals(shape, 'layoutsg/' + key) if grad else g.small(d, shape, 'layouts/' + key)
        lo, hi = {'prob': (0.05, 0.95), 'target01': (0.0, 1.0)}.get(k, (-2.0, 2.0))
        v = g.gvals(shape, 'layoutsg/' + key, lo, hi)
        if k == 'logp':
            v = torch.log_softmax(v, 1)
        elif k == 'softmax':
            v = torch.softmax(v, 1)
        return v.to(g.DT[d])

    def make(self, d, n, key, expand, grad):
        shape, key = self.shape_for(n), '%s/%s' % (key, self.name)
        rg = grad and self.rg
        if expand and self.expand and shape and shape[0] >= 2:
            # One row, repeated: the values `view=expand` stands for.
            row = self.values(d, [1] + shape[1:], key, grad)
            return In(self.name, row.expand(shape).contiguous(), 'expand', rg=rg)
        return In(self.name, self.values(d, shape, key, grad), rg=rg)


def first(r):
    return r[0] if isinstance(r, (tuple, list)) else r


def by_name(f, specs):
    """f taking the inputs by name, as F.case's positional call."""
    names = [s.name for s in specs]
    return lambda *ts: f(**dict(zip(names, ts)))


def positional(f):
    """A call taking the inputs in order (gen_cnn's and gen_transformer's) as one taking them by name."""
    return lambda **kw: f(*kw.values())


def cases(F, cid, op, args, specs, f, expand=True, empty=True, plain=False, grad=True):
    """The forward (float32) and float64 backward cases of op: with the expandable inputs
    expanded (`<cid>/expand/...`, batch N_EXPANDED), with a batch of 0 (`<cid>/empty/...`), and
    with plain values (`<cid>/plain/...`, for ops no other family has)."""
    fn = by_name(f, specs)
    gargs = {k: v for k, v in args.items() if k != 'indices'}  # the gradient is the values' only
    variants = [('expand', N_EXPANDED, True)] if expand else []
    variants += [('plain', N_EXPANDED, False)] if plain else []
    variants += [('empty', 0, False)] if empty else []
    for kind, n, ex in variants:
        key = '%s/%s' % (cid, kind)
        F.case(key + '/fwd', op, args, [s.make('float32', n, key, ex, False) for s in specs], fn)
        if grad:
            F.case(key + '/bwd', op, gargs, [s.make('float64', n, key, ex, True) for s in specs],
                   lambda *ts: first(fn(*ts)), gout=seeded)


# ---- convolutions and linear --------------------------------------------------------------------

def convolutions(F):
    table = [  # (op, variant, input, weight, bias, args)
        ('conv1d', '', ['N', 3, 7], [4, 3, 3], [4], {'padding': 1}),
        ('conv1d', 'groups2_stride2', ['N', 4, 7], [6, 2, 3], [6], {'groups': 2, 'stride': 2, 'padding': 1}),
        ('conv2d', '', ['N', 3, 5, 5], [4, 3, 3, 3], [4], {'padding': 1}),
        ('conv2d', 'groups2_stride2', ['N', 4, 5, 5], [6, 2, 3, 3], [6], {'groups': 2, 'stride': 2, 'padding': 1}),
        ('conv2d', 'dilation2', ['N', 2, 6, 6], [3, 2, 3, 3], [3], {'dilation': 2, 'padding': 1}),
        ('conv2d', 'no_bias', ['N', 2, 4, 5], [3, 2, 2, 3], None, {'stride': [1, 2]}),
        ('conv_transpose2d', '', ['N', 4, 3, 3], [4, 3, 3, 3], [3], {'stride': 2, 'padding': 1, 'output_padding': 1}),
        ('conv_transpose2d', 'groups2', ['N', 4, 2, 2], [4, 2, 3, 3], [4], {'groups': 2, 'stride': 2}),
    ]
    torch_fns = {'conv1d': Fn.conv1d, 'conv2d': Fn.conv2d, 'conv_transpose2d': Fn.conv_transpose2d}
    for op, variant, xs, ws, bs, args in table:
        specs = [Spec('input', xs), Spec('weight', ws)] + ([Spec('bias', bs)] if bs else [])
        conv = cnn.conv_fn(torch_fns[op], args)
        cases(F, op + ('/' + variant if variant else ''), op, args, specs,
              lambda input, weight, bias=None, conv=conv: conv(input, weight, *([bias] if bias is not None else [])))


def linear(F):
    lin = lambda input, weight, bias=None: Fn.linear(input, weight, bias)  # noqa: E731
    for variant, xs, ws, bias in (('2d', ['N', 4], [5, 4], True), ('3d', ['N', 3, 4], [5, 4], True),
                                  ('2d_no_bias', ['N', 4], [3, 4], False)):
        specs = [Spec('input', xs), Spec('weight', ws)] + ([Spec('bias', [ws[0]])] if bias else [])
        cases(F, 'linear/' + variant, 'linear', {}, specs, lin, plain=True)
    # A vector input, and no input features (the output is the bias, the weight's gradient empty).
    for variant, xs, ws in (('1d', [4], [5, 4]), ('no_features', [3, 0], [5, 0])):
        cases(F, 'linear/' + variant, 'linear', {}, [Spec('input', xs), Spec('weight', ws), Spec('bias', [5])], lin,
              expand=False, empty=False, plain=True)
    for variant, xs, ws, bs in (('features', [3, 4], [5, 3], [5]), ('bias_size', [3, 4], [5, 4], [4])):
        specs = [Spec('input', xs), Spec('weight', ws), Spec('bias', bs)]
        F.case('linear/error/' + variant, 'linear', {}, [s.make('float32', 0, 'linear/error/' + variant, False, False)
                                                        for s in specs], by_name(lin, specs))


# ---- normalization ------------------------------------------------------------------------------

def normalization(F):
    def stats(c):
        # Written in place by batch norm: never expanded, never differentiated.
        return [Spec('running_mean', [c], expand=False, rg=False), Spec('running_var', [c], 'pos', expand=False, rg=False)]

    for variant, xs, training in (('train', ['N', 3, 4], True), ('train_4d', ['N', 3, 2, 2], True),
                                  ('eval', ['N', 3, 4], False)):
        specs = [Spec('input', xs)] + stats(3) + [Spec('weight', [3]), Spec('bias', [3])]
        names = [s.name for s in specs]
        f = cnn.norm_fn(cnn.bn_call, names, {'training': training, 'momentum': 0.1, 'eps': 1e-5}, training)
        cases(F, 'batch_norm/' + variant, 'batch_norm', {'training': training}, specs, positional(f))

    specs = [Spec('input', ['N', 4, 3]), Spec('weight', [4]), Spec('bias', [4])]
    f = cnn.norm_fn(lambda x, **kw: Fn.group_norm(x, **kw), [s.name for s in specs], {'num_groups': 2}, False)
    cases(F, 'group_norm', 'group_norm', {'num_groups': 2}, specs, positional(f))

    # PyTorch 1.13 refuses an empty batch with weight or bias (an IndexError from inside its
    # instance_norm), but not without them.
    for variant, specs in (('affine', [Spec('input', ['N', 3, 4]), Spec('weight', [3]), Spec('bias', [3])]),
                           ('stats', [Spec('input', ['N', 3, 4])] + stats(3))):
        f = cnn.norm_fn(lambda x, **kw: Fn.instance_norm(x, **kw), [s.name for s in specs],
                        {'use_input_stats': True, 'momentum': 0.1, 'eps': 1e-5}, True)
        cases(F, 'instance_norm/' + variant, 'instance_norm', {'use_input_stats': True}, specs,
              positional(f))

    for variant, xs, ns in (('', ['N', 3, 5], [5]), ('two_dims', ['N', 3, 5], [3, 5])):
        specs = [Spec('input', xs), Spec('weight', ns), Spec('bias', ns)]
        f = tr.layer_norm_fn([s.name for s in specs], {'normalized_shape': ns})
        cases(F, 'layer_norm' + ('/' + variant if variant else ''), 'layer_norm', {'normalized_shape': ns}, specs,
              positional(f))
    specs = [Spec('input', ['N', 3, 5]), Spec('weight', [5])]
    f = tr.rms_norm_fn([s.name for s in specs], {'normalized_shape': [5]})
    cases(F, 'rms_norm', 'rms_norm', {'normalized_shape': [5]}, specs, positional(f))


# ---- pooling and interpolation --------------------------------------------------------------------

def pooling(F):
    table = [  # (op, input, kind, args, call); max pooling rows hold distinct values
        ('max_pool1d', ['N', 3, 8], 'distinct', {'kernel_size': 3, 'stride': 2, 'padding': 1, 'indices': True},
         lambda x, kw: tuple(Fn.max_pool1d(x, return_indices=True, **kw))),
        ('max_pool2d', ['N', 2, 5, 6], 'distinct', {'kernel_size': 2, 'stride': 2, 'padding': 1, 'indices': True},
         lambda x, kw: tuple(Fn.max_pool2d(x, return_indices=True, **kw))),
        ('avg_pool1d', ['N', 3, 8], 'x', {'kernel_size': 3, 'stride': 2, 'padding': 1, 'count_include_pad': False},
         lambda x, kw: Fn.avg_pool1d(x, **kw)),
        ('avg_pool2d', ['N', 2, 5, 6], 'x', {'kernel_size': 3, 'stride': 2, 'padding': 1},
         lambda x, kw: Fn.avg_pool2d(x, **kw)),
        ('adaptive_avg_pool2d', ['N', 2, 5, 7], 'x', {'output_size': [3, 2]},
         lambda x, kw: Fn.adaptive_avg_pool2d(x, kw['output_size'])),
        ('adaptive_max_pool2d', ['N', 2, 5, 7], 'distinct', {'output_size': [3, 2], 'indices': True},
         lambda x, kw: tuple(Fn.adaptive_max_pool2d(x, kw['output_size'], return_indices=True))),
    ]
    for op, xs, kind, args, call in table:
        kw = cnn.pool_kwargs(args)
        cases(F, op, op, args, [Spec('input', xs, kind)], lambda input, kw=kw, call=call: call(input, kw))

    for variant, args in (('nearest', {'mode': 'nearest', 'size': [5, 6]}), ('bilinear', {'mode': 'bilinear', 'size': [5, 7]}),
                          ('bilinear_align', {'mode': 'bilinear', 'scale': [1.5], 'align_corners': True})):
        kw = cnn.interp_kwargs(args)
        cases(F, 'interpolate/' + variant, 'interpolate', args, [Spec('input', ['N', 2, 3, 4])],
              lambda input, kw=kw: Fn.interpolate(input, **kw))


# ---- embedding and attention ----------------------------------------------------------------------

def embedding_attention(F):
    emb = tr.embedding_fn({})
    # Equal ids in every row; with the table expanded too, and with a plain table whose rows'
    # gradients then differ.
    for variant, expand_weight in (('', True), ('ids_only', False)):
        specs = [Spec('input', ['N', 3], 'ids', expand=True, hi=6), Spec('weight', [6, 3], expand=expand_weight)]
        cases(F, 'embedding' + ('/' + variant if variant else ''), 'embedding', {}, specs,
              lambda input, weight: emb(input, weight))

    for variant, qs, ks, vs, mask, args in (
            ('', ['N', 3, 4], ['N', 5, 4], ['N', 5, 4], None, {}),
            ('mask', ['N', 3, 4], ['N', 5, 4], ['N', 5, 2], [3, 5], {}),  # every query the same mask
            ('causal_heads', ['N', 2, 4, 4], ['N', 2, 4, 4], ['N', 2, 4, 3], None, {'is_causal': True})):
        specs = [Spec('query', qs), Spec('key', ks), Spec('value', vs)]
        if mask:
            specs.append(Spec('attn_mask', mask, 'mask', expand=True))
        f = tr.sdpa_fn([s.name for s in specs], args)
        cases(F, 'sdpa' + ('/' + variant if variant else ''), 'scaled_dot_product_attention', args, specs,
              positional(f))


# ---- losses -------------------------------------------------------------------------------------

def losses(F):
    table = [  # (op, variant, args, specs, call)
        ('cross_entropy', '', {}, [Spec('input', ['N', 5]), Spec('target', ['N'], 'ids', expand=True, hi=5)],
         lambda input, target: Fn.cross_entropy(input, target)),
        ('cross_entropy', 'probs', {'reduction': 'sum'}, [Spec('input', ['N', 5]), Spec('target', ['N', 5], 'softmax')],
         lambda input, target: Fn.cross_entropy(input, target, reduction='sum')),
        ('cross_entropy', 'spatial', {'reduction': 'none'},
         [Spec('input', ['N', 3, 2, 2]), Spec('target', ['N', 2, 2], 'ids', expand=True, hi=3)],
         lambda input, target: Fn.cross_entropy(input, target, reduction='none')),
        ('nll_loss', '', {}, [Spec('input', ['N', 5], 'logp'), Spec('target', ['N'], 'ids', expand=True, hi=5)],
         lambda input, target: Fn.nll_loss(input, target)),
        ('binary_cross_entropy', '', {},
         [Spec('input', ['N', 4], 'prob'), Spec('target', ['N', 4], 'target01'), Spec('weight', [4], 'pos', rg=False)],
         lambda input, target, weight: Fn.binary_cross_entropy(input, target, weight=weight)),
        ('binary_cross_entropy_with_logits', '', {'reduction': 'sum'},
         [Spec('input', ['N', 4]), Spec('target', ['N', 4], 'target01'), Spec('weight', [4], 'pos', rg=False),
          Spec('pos_weight', [4], 'pos', rg=False)],
         lambda input, target, weight, pos_weight: Fn.binary_cross_entropy_with_logits(
             input, target, weight=weight, pos_weight=pos_weight, reduction='sum')),
        ('mse_loss', '', {}, [Spec('input', ['N', 4]), Spec('target', ['N', 4])],
         lambda input, target: Fn.mse_loss(input, target)),
        ('l1_loss', '', {'reduction': 'sum'}, [Spec('input', ['N', 4]), Spec('target', ['N', 4])],
         lambda input, target: Fn.l1_loss(input, target, reduction='sum')),
        ('smooth_l1_loss', '', {'reduction': 'none', 'beta': 0.5}, [Spec('input', ['N', 4]), Spec('target', ['N', 4])],
         lambda input, target: Fn.smooth_l1_loss(input, target, reduction='none', beta=0.5)),
        ('kl_div', '', {'reduction': 'batchmean'}, [Spec('input', ['N', 4], 'logp'), Spec('target', ['N', 4], 'softmax')],
         lambda input, target: Fn.kl_div(input, target, reduction='batchmean')),
        ('kl_div', 'log_target', {'reduction': 'mean', 'log_target': True},
         [Spec('input', ['N', 4], 'logp'), Spec('target', ['N', 4], 'logp')],
         lambda input, target: Fn.kl_div(input, target, reduction='mean', log_target=True)),
    ]
    for op, variant, args, specs, call in table:
        cases(F, op + ('/' + variant if variant else ''), op, args, specs, call)


# ---- sorting, scans, indexing -------------------------------------------------------------------

def sort_scan_index(F):
    # Sorted rows hold distinct values: the rows along dim 0 repeat, the sorted dim never does.
    for variant, xs, args, call in (
            ('', ['N', 5], {'dim': 1}, lambda x: tuple(torch.sort(x, 1))),
            ('desc_3d', ['N', 4, 3], {'dim': 1, 'descending': True}, lambda x: tuple(torch.sort(x, 1, descending=True)))):
        cases(F, 'sort' + ('/' + variant if variant else ''), 'sort', args, [Spec('x', xs, 'distinct')], call)
    for variant, args, call in (('', {'k': 2, 'dim': 1}, lambda x: tuple(torch.topk(x, 2, 1))),
                                ('smallest', {'k': 3, 'dim': -1, 'largest': False},
                                 lambda x: tuple(torch.topk(x, 3, -1, largest=False)))):
        cases(F, 'topk' + ('/' + variant if variant else ''), 'topk', args, [Spec('x', ['N', 5], 'distinct')], call)
    # Scanning along dim 0 runs along the stride-0 dim itself.
    for op, f in (('cumsum', torch.cumsum), ('cumprod', torch.cumprod)):
        for dim in (1, 0):
            cases(F, '%s/dim%d' % (op, dim), op, {'dim': dim}, [Spec('x', ['N', 4])], lambda x, f=f, dim=dim: f(x, dim))

    table = [  # (op, variant, args, specs, call, empty)
        ('gather', 'dim1', {'dim': 1}, [Spec('x', ['N', 4]), Spec('i', ['N', 3], 'ids', expand=True, hi=4)],
         lambda x, i: torch.gather(x, 1, i), True),
        # No empty batch: x's rows are what the index picks.
        ('gather', 'dim0', {'dim': 0}, [Spec('x', [3, 4]), Spec('i', [2, 4], 'ids', expand=True, hi=3)],
         lambda x, i: torch.gather(x, 0, i), False),
        # Distinct targets in each row: scatter's result is defined.
        ('scatter', 'dim1', {'dim': 1},
         [Spec('x', ['N', 4]), Spec('i', ['N', 3], 'perm', expand=True, hi=4), Spec('s', ['N', 3])],
         lambda x, i, s: x.scatter(1, i, s), True),
        # Equal index rows: every source row adds into the same places.
        ('scatter_add', 'dim0', {'dim': 0}, [Spec('x', [3, 4]), Spec('i', ['N', 4], 'ids', expand=True, hi=3),
                                             Spec('s', ['N', 4])],
         lambda x, i, s: x.scatter_add(0, i, s), True),
        ('scatter_add', 'dim1', {'dim': 1}, [Spec('x', ['N', 4]), Spec('i', ['N', 3], 'ids', expand=True, hi=4),
                                             Spec('s', ['N', 3])],
         lambda x, i, s: x.scatter_add(1, i, s), True),
        ('index_select', 'dim1', {'dim': 1}, [Spec('x', ['N', 4]), Spec('i', [3], 'ids', expand=True, hi=4)],
         lambda x, i: torch.index_select(x, 1, i), True),
        ('index_select', 'dim0', {'dim': 0}, [Spec('x', [3, 4]), Spec('i', ['N'], 'ids', expand=True, hi=3)],
         lambda x, i: torch.index_select(x, 0, i), True),
        ('index_add', 'dim0', {'dim': 0}, [Spec('x', [3, 4]), Spec('i', ['N'], 'ids', expand=True, hi=3),
                                           Spec('s', ['N', 4])],
         lambda x, i, s: x.index_add(0, i, s), True),
        ('index_add', 'dim1', {'dim': 1}, [Spec('x', ['N', 4]), Spec('i', [2], 'ids', expand=True, hi=4),
                                           Spec('s', ['N', 2])],
         lambda x, i, s: x.index_add(1, i, s), True),
    ]
    for op, variant, args, specs, call, empty in table:
        cases(F, '%s/%s' % (op, variant), op, args, specs, call, empty=empty)


# ---- products and softmax -----------------------------------------------------------------------

def products_softmax(F):
    cases(F, 'bmm', 'bmm', {}, [Spec('a', ['N', 3, 4]), Spec('b', ['N', 4, 5])], lambda a, b: torch.bmm(a, b))
    cases(F, 'matmul/batched', 'matmul', {}, [Spec('a', ['N', 3, 4]), Spec('b', [4, 2])], lambda a, b: torch.matmul(a, b))
    cases(F, 'matmul/2d', 'matmul', {}, [Spec('a', ['N', 4]), Spec('b', [4, 3])], lambda a, b: torch.matmul(a, b))
    for variant, eq, shapes in (('bmm', 'bij,bjk->bik', (['N', 3, 4], ['N', 4, 2])),
                                ('heads', 'bhqd,bhkd->bhqk', (['N', 2, 3, 4], ['N', 2, 5, 4]))):
        specs = [Spec('x%d' % k, s) for k, s in enumerate(shapes)]
        cases(F, 'einsum/' + variant, 'einsum', {'eq': eq.replace(' ', '_')}, specs,
              lambda x0, x1, eq=eq: torch.einsum(eq, x0, x1))
    for op, f in (('softmax', torch.softmax), ('log_softmax', torch.log_softmax)):
        for dim in (1, 0):
            cases(F, '%s/dim%d' % (op, dim), op, {'dim': dim}, [Spec('x', ['N', 4])], lambda x, f=f, dim=dim: f(x, dim))


# The cases where PyTorch 1.13 raises. Any other error is a mistake in a call above, which the file
# would otherwise record as PyTorch's behaviour.
EXPECTED_ERRORS = ('linear/error/', 'instance_norm/affine/empty/')


def generate():
    F = g.Family('layouts')
    convolutions(F)
    linear(F)
    normalization(F)
    pooling(F)
    embedding_attention(F)
    losses(F)
    sort_scan_index(F)
    products_softmax(F)
    cid = None
    for line in F.lines:
        if line.startswith('case '):
            cid = line.split(' ')[1]
        elif line.startswith('err '):
            assert cid.startswith(EXPECTED_ERRORS), '%s: %s' % (cid, line)
    return F
