"""Golden family `cnn`: convolutions (conv1d, conv2d, conv_transpose2d), im2col (unfold, fold),
pooling (max, average, adaptive; values and int64 indices), normalization (batch_norm with its
running statistics, group_norm, instance_norm), F.pad's circular mode, a BatchNorm2d module
over a few training steps, and the state_dict names of CNN models.

Values: float32 and float64 cases hold small dyadic values (k / 4), so that a convolution's sums
are exact in either order; float64 gradient cases (input, weight, bias) use generate.gvals; max
pooling uses distinct values (no ties, so every index and gradient is defined). Arguments keep
PyTorch's names: per-dim sizes are `stride=2` (every dim) or `stride=2,1`; conv padding may be
`padding=same` or `padding=valid`."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as Fn

import generate as g
from generate import In, T

DTYPES = ('float32', 'float64')
NO_GRAD = ('running_mean', 'running_var')  # buffers, never differentiated


def seeded(out):
    """The gradient fed to backward: fixed pseudo-random values."""
    if out.dim() == 0:
        return torch.tensor(1.0, dtype=out.dtype)
    r = g.rng_for('cnngout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], g.NAME[out.dtype], list(out.shape))


def exact(d, shape, key):
    """Dyadic values k / 4 in [-4, 4]: products and sums of a few hundred are exact."""
    return g.small(d, shape, 'cnn/' + key)


def positive(d, shape, key):
    """Positive values k / 4 in [0.25, 4] (running variances)."""
    r = g.rng_for('cnnpos/' + key)
    return T([r.randint(1, 16) / 4 for _ in range(math.prod(shape))], d, shape)


def distinct(d, shape, key):
    """Values without ties (k / 8), so that every maximum and its index are defined."""
    n = math.prod(shape)
    r = g.rng_for('cnndist/' + key)
    return T([v / 8 for v in r.sample(range(-400, 400), n)], d, shape)


def gvals(shape, key):
    return g.gvals(shape, 'cnng/' + key)


def first(r):
    return r[0] if isinstance(r, (tuple, list)) else r


def tup(v):
    return tuple(v) if isinstance(v, (list, tuple)) else v


class Spec:
    """One input of a family of cases: its name, shape, strided view and kind of values."""

    def __init__(self, name, shape, view=None, kind='x'):
        self.name, self.shape, self.view, self.kind = name, shape, view, kind

    def make(self, d, key, grad=False):
        k = '%s/%s' % (key, self.name)
        if self.kind == 'distinct':
            return distinct(d, self.shape, k)
        if self.kind == 'pos':
            return positive(d, self.shape, k)
        if grad and self.name not in NO_GRAD:
            return gvals(self.shape, k)
        return exact(d, self.shape, k)


def variants(F, cid, op, args, specs, fn, grad=True, dtypes=DTYPES):
    """float32 and float64 values, and a float64 gradient case (every input but the running
    statistics requires grad; only the first output is compared)."""
    for d in dtypes:
        F.case('%s/%s' % (cid, d), op, args, [In(s.name, s.make(d, cid), s.view) for s in specs], fn)
    if grad:
        gargs = {k: v for k, v in args.items() if k != 'indices'}
        ins = [In(s.name, s.make('float64', cid, True), s.view, rg=s.name not in NO_GRAD) for s in specs]
        F.case('%s/grad' % cid, op, gargs, ins, lambda *a: first(fn(*a)), gout=seeded)


def error(F, cid, op, args, specs, fn, d='float32'):
    F.case(cid, op, args, [In(s.name, s.make(d, cid), s.view) for s in specs], fn)


# ---- convolutions -------------------------------------------------------------------------------

def conv_kwargs(args):
    kw = {}
    for k in ('stride', 'padding', 'dilation', 'groups', 'output_padding'):
        if k in args:
            kw[k] = tup(args[k])
    return kw


def conv_fn(torch_fn, args):
    kw = conv_kwargs(args)

    def f(x, w, *b):
        return torch_fn(x, w, b[0] if b else None, **kw)
    return f


def convolutions(F):
    # conv2d: (id, x shape, weight shape, bias, args)
    c2 = [
        ('basic', [2, 3, 5, 6], [4, 3, 3, 3], True, {}),
        ('stride2_pad1', [2, 3, 5, 6], [4, 3, 3, 3], True, {'stride': 2, 'padding': 1}),
        ('per_dim', [2, 3, 6, 7], [4, 3, 3, 2], True, {'stride': [2, 1], 'padding': [1, 2], 'dilation': [1, 2]}),
        ('same_odd', [2, 3, 5, 6], [4, 3, 3, 3], True, {'padding': 'same'}),
        ('same_even', [2, 3, 5, 6], [4, 3, 2, 4], True, {'padding': 'same'}),
        ('same_even_dilated', [1, 3, 5, 6], [2, 3, 2, 4], True, {'padding': 'same', 'dilation': [1, 3]}),
        ('same_odd_dilated', [1, 3, 6, 5], [2, 3, 3, 3], False, {'padding': 'same', 'dilation': 2}),
        ('valid', [2, 3, 5, 6], [4, 3, 3, 3], True, {'padding': 'valid'}),
        ('valid_stride2', [1, 3, 6, 7], [2, 3, 3, 3], True, {'padding': 'valid', 'stride': 2}),
        ('dilation2', [1, 2, 7, 7], [3, 2, 3, 3], True, {'dilation': 2, 'padding': 1}),
        ('groups2', [2, 4, 5, 5], [6, 2, 3, 3], True, {'groups': 2, 'padding': 1}),
        ('depthwise', [2, 3, 5, 5], [3, 1, 3, 3], True, {'groups': 3, 'padding': 1}),
        ('depthwise_x2', [1, 3, 5, 6], [6, 1, 3, 3], False, {'groups': 3, 'stride': 2}),
        ('no_bias', [2, 3, 5, 6], [4, 3, 3, 3], False, {'padding': 1}),
        ('unbatched', [3, 5, 6], [4, 3, 3, 3], True, {'padding': [0, 1]}),
        ('pointwise', [2, 3, 4, 5], [5, 3, 1, 1], True, {'stride': 2}),
        ('kernel_as_input', [2, 2, 3, 3], [3, 2, 3, 3], True, {}),
        ('kernel_fits_padding', [1, 2, 2, 2], [3, 2, 3, 3], True, {'padding': 1}),
    ]
    for name, xs, ws, bias, args in c2:
        specs = [Spec('input', xs), Spec('weight', ws)] + ([Spec('bias', [ws[0]])] if bias else [])
        variants(F, 'conv2d/' + name, 'conv2d', args, specs, conv_fn(Fn.conv2d, args))
    # Strided operands.
    for view in ('t', 'step2'):
        args = {'stride': 2, 'padding': 1}
        variants(F, 'conv2d/view_%s' % view, 'conv2d', args,
                 [Spec('input', [2, 3, 5, 6], view), Spec('weight', [4, 3, 3, 3]), Spec('bias', [4])],
                 conv_fn(Fn.conv2d, args))
    variants(F, 'conv2d/weight_view_t', 'conv2d', {'groups': 2},
             [Spec('input', [1, 4, 4, 5]), Spec('weight', [4, 2, 3, 2], 't'), Spec('bias', [4], 'step2')],
             conv_fn(Fn.conv2d, {'groups': 2}))
    # Errors.
    errs = [
        ('rank5', [1, 2, 3, 5, 5], [4, 3, 3, 3], False, {}),
        ('rank2', [5, 5], [4, 3, 3, 3], False, {}),
        ('channel_mismatch', [2, 2, 5, 5], [4, 3, 3, 3], False, {}),
        ('kernel_too_large', [2, 3, 2, 2], [4, 3, 3, 3], False, {}),
        ('kernel_too_large_dilated', [2, 3, 4, 4], [4, 3, 3, 3], False, {'dilation': 2}),
        ('stride0', [2, 3, 5, 5], [4, 3, 3, 3], False, {'stride': 0}),
        ('negative_padding', [2, 3, 5, 5], [4, 3, 3, 3], False, {'padding': -1}),
        ('same_stride2', [2, 3, 5, 5], [4, 3, 3, 3], False, {'padding': 'same', 'stride': 2}),
        ('same_stride_1_2', [2, 3, 5, 5], [4, 3, 3, 3], False, {'padding': 'same', 'stride': [1, 2]}),
        ('bias_size', [2, 3, 5, 5], [4, 3, 3, 3], [5], {}),
        ('bias_2d', [2, 3, 5, 5], [4, 3, 3, 3], [4, 1], {}),
        ('dilation0', [2, 3, 5, 5], [4, 3, 3, 3], False, {'dilation': 0}),
        ('groups0', [2, 3, 5, 5], [4, 3, 3, 3], False, {'groups': 0}),
        ('groups_input_channels', [2, 4, 5, 5], [6, 2, 3, 3], False, {'groups': 3}),
        ('groups_output_channels', [2, 4, 5, 5], [5, 2, 3, 3], False, {'groups': 2}),
        ('weight_rank', [2, 3, 5, 5], [4, 3, 3], False, {}),
    ]
    for name, xs, ws, bias, args in errs:
        specs = [Spec('input', xs), Spec('weight', ws)] + ([Spec('bias', bias)] if bias else [])
        error(F, 'conv2d/error/' + name, 'conv2d', args, specs, conv_fn(Fn.conv2d, args))
    F.case('conv2d/error/dtype_mismatch', 'conv2d', {},
           [In('input', exact('float32', [1, 3, 4, 4], 'c2dt/x')), In('weight', exact('float64', [2, 3, 3, 3], 'c2dt/w'))],
           conv_fn(Fn.conv2d, {}))

    c1 = [
        ('basic', [2, 3, 7], [4, 3, 3], True, {}),
        ('stride2_pad1', [2, 3, 8], [4, 3, 3], True, {'stride': 2, 'padding': 1}),
        ('same_odd', [2, 3, 7], [4, 3, 3], True, {'padding': 'same'}),
        ('same_even', [2, 3, 7], [4, 3, 4], True, {'padding': 'same'}),
        ('same_even_dilated', [2, 3, 9], [2, 3, 2], True, {'padding': 'same', 'dilation': 3}),
        ('same_odd_dilated', [1, 2, 9], [3, 2, 3], True, {'padding': 'same', 'dilation': 2}),
        ('valid', [2, 3, 7], [4, 3, 3], True, {'padding': 'valid'}),
        ('dilation2', [2, 3, 9], [4, 3, 3], True, {'dilation': 2, 'padding': 2, 'stride': 2}),
        ('groups2', [2, 4, 7], [6, 2, 3], True, {'groups': 2, 'padding': 1}),
        ('depthwise', [2, 4, 7], [4, 1, 3], True, {'groups': 4}),
        ('no_bias', [2, 3, 7], [4, 3, 2], False, {'stride': 3}),
        ('unbatched', [3, 7], [4, 3, 3], True, {'padding': 1}),
    ]
    for name, xs, ws, bias, args in c1:
        specs = [Spec('input', xs), Spec('weight', ws)] + ([Spec('bias', [ws[0]])] if bias else [])
        variants(F, 'conv1d/' + name, 'conv1d', args, specs, conv_fn(Fn.conv1d, args))
    for view in ('t', 'step2'):
        variants(F, 'conv1d/view_%s' % view, 'conv1d', {'padding': 1},
                 [Spec('input', [2, 3, 6], view), Spec('weight', [4, 3, 3]), Spec('bias', [4])], conv_fn(Fn.conv1d, {'padding': 1}))
    errs = [
        ('rank4', [2, 3, 5, 5], [4, 3, 3], False, {}),
        ('rank1', [7], [4, 3, 3], False, {}),
        ('channel_mismatch', [2, 2, 7], [4, 3, 3], False, {}),
        ('kernel_too_large', [2, 3, 2], [4, 3, 3], False, {}),
        ('stride0', [2, 3, 7], [4, 3, 3], False, {'stride': 0}),
        ('negative_padding', [2, 3, 7], [4, 3, 3], False, {'padding': -1}),
        ('same_stride2', [2, 3, 7], [4, 3, 3], False, {'padding': 'same', 'stride': 2}),
        ('bias_size', [2, 3, 7], [4, 3, 3], [3], {}),
        ('groups_input_channels', [2, 3, 7], [4, 2, 3], False, {'groups': 2}),
    ]
    for name, xs, ws, bias, args in errs:
        specs = [Spec('input', xs), Spec('weight', ws)] + ([Spec('bias', bias)] if bias else [])
        error(F, 'conv1d/error/' + name, 'conv1d', args, specs, conv_fn(Fn.conv1d, args))

    ct = [
        ('stride2_pad1_outpad1', [2, 4, 3, 3], [4, 3, 3, 3], True, {'stride': 2, 'padding': 1, 'output_padding': 1}),
        ('basic', [2, 3, 3, 4], [3, 2, 3, 3], True, {}),
        ('per_dim', [1, 2, 3, 3], [2, 3, 3, 2], True,
         {'stride': [2, 3], 'padding': [0, 1], 'output_padding': [1, 2], 'dilation': [1, 2]}),
        ('groups2', [2, 4, 3, 3], [4, 2, 3, 3], True, {'groups': 2, 'stride': 2}),
        ('depthwise', [1, 3, 3, 3], [3, 1, 2, 2], True, {'groups': 3, 'stride': 2}),
        ('dilation2_outpad', [1, 2, 3, 3], [2, 2, 3, 3], True, {'dilation': 2, 'output_padding': 1}),
        ('stride2_k2', [2, 2, 3, 3], [2, 3, 2, 2], False, {'stride': 2}),
        ('no_bias', [2, 3, 3, 3], [3, 2, 3, 3], False, {'padding': 1}),
        ('unbatched', [3, 3, 4], [3, 2, 3, 3], True, {'stride': 2, 'padding': 1}),
    ]
    for name, xs, ws, bias, args in ct:
        cout = ws[1] * args.get('groups', 1)
        specs = [Spec('input', xs), Spec('weight', ws)] + ([Spec('bias', [cout])] if bias else [])
        variants(F, 'conv_transpose2d/' + name, 'conv_transpose2d', args, specs, conv_fn(Fn.conv_transpose2d, args))
    for view in ('t', 'step2'):
        args = {'stride': 2, 'padding': 1, 'output_padding': 1}
        variants(F, 'conv_transpose2d/view_%s' % view, 'conv_transpose2d', args,
                 [Spec('input', [2, 3, 3, 4], view), Spec('weight', [3, 2, 3, 3]), Spec('bias', [2])],
                 conv_fn(Fn.conv_transpose2d, args))
    errs = [
        ('output_padding_eq_stride', [2, 4, 3, 3], [4, 3, 3, 3], False, {'stride': 2, 'output_padding': 2}),
        ('output_padding_stride1', [2, 4, 3, 3], [4, 3, 3, 3], False, {'output_padding': 1}),
        ('output_padding_both', [2, 4, 3, 3], [4, 3, 3, 3], False, {'stride': 2, 'dilation': 2, 'output_padding': 2}),
        ('channel_mismatch', [2, 3, 3, 3], [4, 3, 3, 3], False, {}),
        ('bias_size', [2, 4, 3, 3], [4, 3, 3, 3], [4], {}),
        ('rank2', [3, 3], [4, 3, 3, 3], False, {}),
        ('output_too_small', [2, 4, 3, 3], [4, 3, 3, 3], False, {'padding': 3}),
        ('stride0', [2, 4, 3, 3], [4, 3, 3, 3], False, {'stride': 0}),
        ('negative_padding', [2, 4, 3, 3], [4, 3, 3, 3], False, {'padding': -1}),
    ]
    for name, xs, ws, bias, args in errs:
        specs = [Spec('input', xs), Spec('weight', ws)] + ([Spec('bias', bias)] if bias else [])
        error(F, 'conv_transpose2d/error/' + name, 'conv_transpose2d', args, specs, conv_fn(Fn.conv_transpose2d, args))


# ---- unfold and fold ---------------------------------------------------------------------------

def im2col_kwargs(args):
    return {k: tup(args[k]) for k in ('kernel_size', 'dilation', 'padding', 'stride', 'output_size') if k in args}


def pair(v):
    return list(v) if isinstance(v, (list, tuple)) else [v, v]


def blocks(size, args):
    k, dl, p, s = pair(args['kernel_size']), pair(args.get('dilation', 1)), pair(args.get('padding', 0)), pair(args.get('stride', 1))
    n = 1
    for i in range(2):
        n *= (size[i] + 2 * p[i] - dl[i] * (k[i] - 1) - 1) // s[i] + 1
    return n


def im2col(F):
    un = [
        ('k2', [2, 3, 5, 6], {'kernel_size': 2}),
        ('per_dim', [2, 2, 5, 6], {'kernel_size': [2, 3], 'dilation': [1, 2], 'padding': [1, 0], 'stride': [2, 1]}),
        ('k3_pad1_stride2', [1, 3, 6, 5], {'kernel_size': 3, 'padding': 1, 'stride': 2}),
        ('dilation2', [1, 2, 6, 6], {'kernel_size': 2, 'dilation': 2}),
        ('unbatched', [3, 4, 5], {'kernel_size': [3, 2], 'stride': [1, 2]}),
        ('k1', [2, 2, 3, 3], {'kernel_size': 1}),
    ]
    for name, xs, args in un:
        kw = im2col_kwargs(args)
        variants(F, 'unfold/' + name, 'unfold', args, [Spec('input', xs)], lambda x, kw=kw: Fn.unfold(x, **kw))
    for view in ('t', 'step2'):
        args = {'kernel_size': 2, 'padding': 1, 'stride': 2}
        kw = im2col_kwargs(args)
        variants(F, 'unfold/view_%s' % view, 'unfold', args, [Spec('input', [2, 2, 4, 5], view)],
                 lambda x, kw=kw: Fn.unfold(x, **kw))
    for name, xs, args in (('kernel_too_large', [1, 2, 3, 3], {'kernel_size': 4}),
                           ('stride0', [1, 2, 3, 3], {'kernel_size': 2, 'stride': 0}),
                           ('negative_padding', [1, 2, 3, 3], {'kernel_size': 2, 'padding': -1}),
                           ('rank5', [1, 1, 2, 3, 3], {'kernel_size': 2})):
        kw = im2col_kwargs(args)
        error(F, 'unfold/error/' + name, 'unfold', args, [Spec('input', xs)], lambda x, kw=kw: Fn.unfold(x, **kw))

    fo = [
        ('k2', 2, 3, [5, 6], {'kernel_size': 2}),
        ('per_dim', 2, 2, [5, 6], {'kernel_size': [2, 3], 'dilation': [1, 2], 'padding': [1, 0], 'stride': [2, 1]}),
        ('k3_pad1_stride2', 1, 3, [6, 5], {'kernel_size': 3, 'padding': 1, 'stride': 2}),
        ('overlap_stride1', 1, 2, [4, 4], {'kernel_size': 3, 'padding': 1}),
        ('gaps_stride3', 2, 1, [7, 5], {'kernel_size': 2, 'stride': 3}),
        ('unbatched', None, 2, [4, 5], {'kernel_size': [3, 2], 'stride': [1, 2]}),
    ]
    for name, n, c, size, args in fo:
        args = dict(args, output_size=size)
        kk = pair(args['kernel_size'])
        shape = [c * kk[0] * kk[1], blocks(size, args)]
        if n is not None:
            shape = [n] + shape
        kw = im2col_kwargs(args)
        variants(F, 'fold/' + name, 'fold', args, [Spec('input', shape)], lambda x, kw=kw: Fn.fold(x, **kw))
    for view in ('t', 'step2'):
        args = {'output_size': [4, 5], 'kernel_size': 2, 'padding': 1, 'stride': 2}
        kw = im2col_kwargs(args)
        variants(F, 'fold/view_%s' % view, 'fold', args, [Spec('input', [2, 8, blocks([4, 5], args)], view)],
                 lambda x, kw=kw: Fn.fold(x, **kw))
    for name, shape, args in (('wrong_L', [2, 12, 21], {'output_size': [5, 6], 'kernel_size': 2}),
                              ('wrong_L_unbatched', [12, 19], {'output_size': [5, 6], 'kernel_size': 2}),
                              ('channels_not_divisible', [2, 13, 20], {'output_size': [5, 6], 'kernel_size': 2}),
                              ('rank4', [1, 2, 12, 20], {'output_size': [5, 6], 'kernel_size': 2}),
                              ('rank1', [12], {'output_size': [5, 6], 'kernel_size': 2})):
        kw = im2col_kwargs(args)
        error(F, 'fold/error/' + name, 'fold', args, [Spec('input', shape)], lambda x, kw=kw: Fn.fold(x, **kw))


# ---- pooling ------------------------------------------------------------------------------------

def pool_kwargs(args):
    kw = {k: tup(args[k]) for k in ('kernel_size', 'stride', 'padding', 'dilation', 'output_size') if k in args}
    for k in ('ceil_mode', 'count_include_pad', 'divisor_override'):
        if k in args:
            kw[k] = args[k]
    return kw


def pooling(F):
    mp2 = [
        ('k2', [2, 3, 6, 7], {'kernel_size': 2}),
        ('k3_s2_p1', [2, 2, 6, 7], {'kernel_size': 3, 'stride': 2, 'padding': 1}),
        ('per_dim', [1, 2, 7, 8], {'kernel_size': [3, 2], 'stride': [2, 1], 'padding': [1, 0], 'dilation': [1, 2]}),
        ('ceil', [1, 2, 6, 7], {'kernel_size': 3, 'stride': 2, 'ceil_mode': True}),
        ('ceil_pad', [1, 2, 5, 6], {'kernel_size': 3, 'stride': 2, 'padding': 1, 'ceil_mode': True}),
        # ceil_mode's last window would start in the right padding: dropped (5 + 2 - 2 = 5: 3 windows, not 4).
        ('ceil_last_window_dropped', [1, 2, 5, 5], {'kernel_size': 2, 'stride': 2, 'padding': 1, 'ceil_mode': True}),
        ('dilation2', [1, 2, 7, 7], {'kernel_size': 3, 'dilation': 2, 'stride': 1}),
        ('stride_gt_kernel', [1, 2, 7, 8], {'kernel_size': 2, 'stride': 3}),
        ('stride1_overlap', [1, 2, 4, 5], {'kernel_size': 2, 'stride': 1}),
        ('unbatched', [3, 5, 6], {'kernel_size': 2, 'padding': 1}),
        ('global', [2, 2, 3, 4], {'kernel_size': [3, 4]}),
    ]
    for name, xs, args in mp2:
        kw = pool_kwargs(args)
        variants(F, 'max_pool2d/' + name, 'max_pool2d', dict(args, indices=True), [Spec('input', xs, kind='distinct')],
                 lambda x, kw=kw: tuple(Fn.max_pool2d(x, return_indices=True, **kw)))
        F.case('max_pool2d/%s/values_only' % name, 'max_pool2d', args, [In('input', distinct('float32', xs, 'mpv/' + name))],
               lambda x, kw=kw: Fn.max_pool2d(x, **kw))
    for view in ('t', 'step2'):
        args = {'kernel_size': 2, 'stride': 2, 'padding': 1}
        kw = pool_kwargs(args)
        variants(F, 'max_pool2d/view_%s' % view, 'max_pool2d', dict(args, indices=True),
                 [Spec('input', [2, 2, 5, 6], view, 'distinct')], lambda x, kw=kw: tuple(Fn.max_pool2d(x, return_indices=True, **kw)))
    nanx = distinct('float32', [1, 1, 4, 4], 'mpnan')
    nanx[0, 0, 1, 1] = g.nan
    nanx[0, 0, 3, 2] = g.nan
    nanx[0, 0, 2, 3] = -g.inf
    F.case('max_pool2d/nan', 'max_pool2d', {'kernel_size': 2, 'indices': True}, [In('input', nanx)],
           lambda x: tuple(Fn.max_pool2d(x, 2, return_indices=True)))
    for name, xs, args in (('pad_over_half', [1, 2, 5, 6], {'kernel_size': 3, 'padding': 2}),
                           ('pad_over_half_even', [1, 2, 5, 6], {'kernel_size': 2, 'padding': 2}),
                           ('output_too_small', [1, 1, 2, 2], {'kernel_size': 3}),
                           ('output_too_small_dilated', [1, 1, 4, 4], {'kernel_size': 3, 'dilation': 2}),
                           ('stride0', [1, 2, 5, 6], {'kernel_size': 2, 'stride': 0}),
                           ('dilation0', [1, 2, 5, 6], {'kernel_size': 2, 'dilation': 0}),
                           ('rank2', [5, 6], {'kernel_size': 2}),
                           ('rank5', [1, 1, 1, 5, 6], {'kernel_size': 2})):
        kw = pool_kwargs(args)
        for ind in (False, True):
            a = dict(args, indices=True) if ind else args
            error(F, 'max_pool2d/error/%s%s' % (name, '/indices' if ind else ''), 'max_pool2d', a, [Spec('input', xs)],
                  lambda x, kw=kw, ind=ind: Fn.max_pool2d(x, return_indices=ind, **kw))

    mp1 = [
        ('k2', [2, 3, 8], {'kernel_size': 2}),
        ('k3_s2_p1', [2, 2, 9], {'kernel_size': 3, 'stride': 2, 'padding': 1}),
        ('ceil', [1, 2, 8], {'kernel_size': 3, 'stride': 2, 'ceil_mode': True}),
        ('ceil_last_window_dropped', [1, 2, 5], {'kernel_size': 2, 'stride': 2, 'padding': 1, 'ceil_mode': True}),
        ('dilation2', [1, 2, 9], {'kernel_size': 3, 'dilation': 2, 'stride': 2, 'padding': 1}),
        ('stride_gt_kernel', [1, 2, 10], {'kernel_size': 2, 'stride': 3}),
        ('unbatched', [3, 7], {'kernel_size': 3, 'stride': 1}),
    ]
    for name, xs, args in mp1:
        kw = pool_kwargs(args)
        variants(F, 'max_pool1d/' + name, 'max_pool1d', dict(args, indices=True), [Spec('input', xs, kind='distinct')],
                 lambda x, kw=kw: tuple(Fn.max_pool1d(x, return_indices=True, **kw)))
        F.case('max_pool1d/%s/values_only' % name, 'max_pool1d', args, [In('input', distinct('float32', xs, 'mp1v/' + name))],
               lambda x, kw=kw: Fn.max_pool1d(x, **kw))
    for view in ('t', 'step2'):
        args = {'kernel_size': 3, 'stride': 2, 'padding': 1}
        kw = pool_kwargs(args)
        variants(F, 'max_pool1d/view_%s' % view, 'max_pool1d', dict(args, indices=True),
                 [Spec('input', [2, 3, 7], view, 'distinct')], lambda x, kw=kw: tuple(Fn.max_pool1d(x, return_indices=True, **kw)))
    # PyTorch 1.13's max_pool1d without indices returns an empty [1, 2, 0] where the output is too
    # small (its _with_indices form and max_pool2d raise): only the raising form is recorded.
    for name, xs, args, ind in (('pad_over_half', [1, 2, 6], {'kernel_size': 2, 'padding': 2}, False),
                                ('pad_over_half', [1, 2, 6], {'kernel_size': 2, 'padding': 2}, True),
                                ('output_too_small', [1, 2, 2], {'kernel_size': 3}, True),
                                ('stride0', [1, 2, 6], {'kernel_size': 2, 'stride': 0}, True),
                                ('rank1', [6], {'kernel_size': 2}, False),
                                ('rank4', [1, 1, 1, 6], {'kernel_size': 2}, False)):
        kw = pool_kwargs(args)
        a = dict(args, indices=True) if ind else args
        error(F, 'max_pool1d/error/%s%s' % (name, '/indices' if ind else ''), 'max_pool1d', a, [Spec('input', xs)],
              lambda x, kw=kw, ind=ind: Fn.max_pool1d(x, return_indices=ind, **kw))

    ap2 = [
        ('k2', [2, 3, 6, 7], {'kernel_size': 2}),
        ('k3_s2_p1', [2, 2, 5, 7], {'kernel_size': 3, 'stride': 2, 'padding': 1}),
        ('k3_s2_p1_exclude_pad', [2, 2, 5, 7], {'kernel_size': 3, 'stride': 2, 'padding': 1, 'count_include_pad': False}),
        ('ceil', [1, 2, 6, 7], {'kernel_size': 3, 'stride': 2, 'ceil_mode': True}),
        ('ceil_pad', [1, 2, 5, 6], {'kernel_size': 3, 'stride': 2, 'padding': 1, 'ceil_mode': True}),
        ('ceil_pad_exclude_pad', [1, 2, 5, 6], {'kernel_size': 3, 'stride': 2, 'padding': 1, 'ceil_mode': True,
                                                'count_include_pad': False}),
        ('ceil_last_window_dropped', [1, 2, 5, 5], {'kernel_size': 2, 'stride': 2, 'padding': 1, 'ceil_mode': True}),
        ('per_dim', [1, 2, 6, 7], {'kernel_size': [3, 2], 'stride': [1, 2], 'padding': [1, 1]}),
        ('divisor_override', [1, 2, 5, 6], {'kernel_size': 3, 'stride': 2, 'padding': 1, 'divisor_override': 5}),
        ('divisor_override_ceil', [1, 2, 5, 6], {'kernel_size': 2, 'ceil_mode': True, 'divisor_override': 3,
                                                 'count_include_pad': False}),
        ('stride_gt_kernel', [1, 2, 7, 8], {'kernel_size': 2, 'stride': 3}),
        ('unbatched', [3, 5, 6], {'kernel_size': 2, 'padding': 1}),
    ]
    for name, xs, args in ap2:
        kw = pool_kwargs(args)
        variants(F, 'avg_pool2d/' + name, 'avg_pool2d', args, [Spec('input', xs)], lambda x, kw=kw: Fn.avg_pool2d(x, **kw))
    for view in ('t', 'step2'):
        args = {'kernel_size': 3, 'stride': 2, 'padding': 1, 'count_include_pad': False}
        kw = pool_kwargs(args)
        variants(F, 'avg_pool2d/view_%s' % view, 'avg_pool2d', args, [Spec('input', [2, 2, 5, 6], view)],
                 lambda x, kw=kw: Fn.avg_pool2d(x, **kw))
    for name, xs, args in (('pad_over_half', [1, 2, 5, 6], {'kernel_size': 3, 'padding': 2}),
                           ('output_too_small', [1, 1, 2, 2], {'kernel_size': 3}),
                           ('divisor_override0', [1, 2, 5, 6], {'kernel_size': 2, 'divisor_override': 0}),
                           ('stride0', [1, 2, 5, 6], {'kernel_size': 2, 'stride': 0}),
                           ('rank5', [1, 1, 1, 5, 6], {'kernel_size': 2})):
        kw = pool_kwargs(args)
        error(F, 'avg_pool2d/error/' + name, 'avg_pool2d', args, [Spec('input', xs)], lambda x, kw=kw: Fn.avg_pool2d(x, **kw))

    ap1 = [
        ('k2', [2, 3, 8], {'kernel_size': 2}),
        ('k3_s2_p1', [2, 2, 9], {'kernel_size': 3, 'stride': 2, 'padding': 1}),
        ('k3_s2_p1_exclude_pad', [2, 2, 9], {'kernel_size': 3, 'stride': 2, 'padding': 1, 'count_include_pad': False}),
        ('ceil', [1, 2, 8], {'kernel_size': 3, 'stride': 2, 'ceil_mode': True}),
        ('ceil_pad_exclude_pad', [1, 2, 6], {'kernel_size': 3, 'stride': 2, 'padding': 1, 'ceil_mode': True,
                                             'count_include_pad': False}),
        ('ceil_last_window_dropped', [1, 2, 5], {'kernel_size': 2, 'stride': 2, 'padding': 1, 'ceil_mode': True}),
        ('unbatched', [3, 7], {'kernel_size': 3, 'stride': 1, 'padding': 1}),
    ]
    for name, xs, args in ap1:
        kw = pool_kwargs(args)
        variants(F, 'avg_pool1d/' + name, 'avg_pool1d', args, [Spec('input', xs)], lambda x, kw=kw: Fn.avg_pool1d(x, **kw))
    for view in ('t', 'step2'):
        args = {'kernel_size': 2, 'stride': 1, 'padding': 1}
        kw = pool_kwargs(args)
        variants(F, 'avg_pool1d/view_%s' % view, 'avg_pool1d', args, [Spec('input', [2, 3, 5], view)],
                 lambda x, kw=kw: Fn.avg_pool1d(x, **kw))
    for name, xs, args in (('pad_over_half', [1, 2, 6], {'kernel_size': 2, 'padding': 2}),
                           ('output_too_small', [1, 2, 2], {'kernel_size': 3}),
                           ('stride0', [1, 2, 6], {'kernel_size': 2, 'stride': 0}),
                           ('rank1', [6], {'kernel_size': 2}),
                           ('rank4', [1, 1, 1, 6], {'kernel_size': 2})):
        kw = pool_kwargs(args)
        error(F, 'avg_pool1d/error/' + name, 'avg_pool1d', args, [Spec('input', xs)], lambda x, kw=kw: Fn.avg_pool1d(x, **kw))

    ad = [
        ('divisible', [2, 3, 6, 4], [3, 2]),
        ('non_divisible', [2, 2, 5, 7], [3, 2]),
        ('non_divisible_2', [1, 2, 7, 5], [4, 3]),
        ('one', [2, 3, 5, 7], 1),
        ('same_size', [1, 2, 3, 4], [3, 4]),
        ('larger', [1, 2, 3, 2], [5, 4]),
        ('unbatched', [3, 5, 7], [2, 3]),
    ]
    for name, xs, osz in ad:
        args = {'output_size': osz}
        variants(F, 'adaptive_avg_pool2d/' + name, 'adaptive_avg_pool2d', args, [Spec('input', xs)],
                 lambda x, o=tup(osz): Fn.adaptive_avg_pool2d(x, o))
        variants(F, 'adaptive_max_pool2d/' + name, 'adaptive_max_pool2d', dict(args, indices=True),
                 [Spec('input', xs, kind='distinct')], lambda x, o=tup(osz): tuple(Fn.adaptive_max_pool2d(x, o, return_indices=True)))
        F.case('adaptive_max_pool2d/%s/values_only' % name, 'adaptive_max_pool2d', args,
               [In('input', distinct('float32', xs, 'amv/' + name))], lambda x, o=tup(osz): Fn.adaptive_max_pool2d(x, o))
    for view in ('t', 'step2'):
        variants(F, 'adaptive_avg_pool2d/view_%s' % view, 'adaptive_avg_pool2d', {'output_size': [2, 3]},
                 [Spec('input', [2, 2, 5, 7], view)], lambda x: Fn.adaptive_avg_pool2d(x, (2, 3)))
        variants(F, 'adaptive_max_pool2d/view_%s' % view, 'adaptive_max_pool2d', {'output_size': [2, 3], 'indices': True},
                 [Spec('input', [2, 2, 5, 7], view, 'distinct')],
                 lambda x: tuple(Fn.adaptive_max_pool2d(x, (2, 3), return_indices=True)))
    # Output size 0 is allowed (an empty result), negative ones are not.
    F.case('adaptive_avg_pool2d/output_0', 'adaptive_avg_pool2d', {'output_size': 0}, [In('input', exact('float32', [2, 3, 5, 7], 'aa0'))],
           lambda x: Fn.adaptive_avg_pool2d(x, 0))
    F.case('adaptive_max_pool2d/output_0', 'adaptive_max_pool2d', {'output_size': 0, 'indices': True},
           [In('input', exact('float32', [2, 3, 5, 7], 'am0'))], lambda x: tuple(Fn.adaptive_max_pool2d(x, 0, return_indices=True)))
    for op, fn in (('adaptive_avg_pool2d', Fn.adaptive_avg_pool2d), ('adaptive_max_pool2d', Fn.adaptive_max_pool2d)):
        for name, xs, osz in (('negative_output', [1, 2, 5, 6], -1), ('rank2', [5, 6], 2), ('rank5', [1, 1, 2, 5, 6], 2),
                              ('empty_plane', [1, 2, 0, 6], 2)):
            error(F, '%s/error/%s' % (op, name), op, {'output_size': osz}, [Spec('input', xs)],
                  lambda x, o=osz, fn=fn: fn(x, o))


# ---- normalization ------------------------------------------------------------------------------

def norm_fn(torch_fn, names, fixed, returns_stats):
    """torch_fn(input, **inputs by name, **fixed); the running statistics are cloned (PyTorch
    updates them in place) and returned after the output when returns_stats says so."""
    def f(*ts):
        kw = dict(zip(names, ts))
        x = kw.pop('input')
        for k in NO_GRAD:
            if k in kw and not kw[k].requires_grad:
                kw[k] = kw[k].clone()
        y = torch_fn(x, **kw, **fixed)
        if returns_stats and 'running_mean' in kw:
            return (y, kw['running_mean'], kw['running_var'])
        return y
    return f


def bn_call(x, running_mean=None, running_var=None, weight=None, bias=None, **kw):
    return Fn.batch_norm(x, running_mean, running_var, weight=weight, bias=bias, **kw)


def normalization(F):
    bn = [  # (id, x shape, training, running stats, weight/bias, extra args)
        ('2d/train_stats_affine', [4, 3], True, True, True, {}),
        ('2d/train_stats', [4, 3], True, True, False, {'momentum': 0.3}),
        ('2d/train_no_stats', [4, 3], True, False, True, {}),
        ('2d/eval', [4, 3], False, True, True, {}),
        ('2d/eval_one_row', [1, 3], False, True, False, {}),
        ('3d/train_stats_affine', [2, 3, 4], True, True, True, {'eps': 1e-3}),
        ('3d/train_no_stats', [2, 3, 4], True, False, False, {}),
        ('3d/eval', [2, 3, 4], False, True, True, {'eps': 0.5}),
        ('4d/train_stats_affine', [2, 3, 2, 2], True, True, True, {}),
        ('4d/train_stats', [2, 3, 2, 2], True, True, False, {'momentum': 1.0}),
        ('4d/train_momentum0', [2, 3, 2, 2], True, True, True, {'momentum': 0.0}),
        ('4d/train_no_stats_affine', [2, 3, 2, 2], True, False, True, {}),
        ('4d/eval', [2, 3, 2, 2], False, True, True, {}),
        ('4d/eval_no_affine', [2, 3, 2, 2], False, True, False, {}),
        ('4d/train_one_per_batch', [1, 3, 2, 2], True, True, True, {}),
    ]
    for name, xs, training, stats, affine, extra in bn:
        c = xs[1]
        specs = [Spec('input', xs)]
        if stats:
            specs += [Spec('running_mean', [c]), Spec('running_var', [c], kind='pos')]
        if affine:
            specs += [Spec('weight', [c]), Spec('bias', [c])]
        args = dict({'training': training}, **extra)
        fixed = {'training': training, 'momentum': extra.get('momentum', 0.1), 'eps': extra.get('eps', 1e-5)}
        variants(F, 'batch_norm/' + name, 'batch_norm', args, specs,
                 norm_fn(bn_call, [s.name for s in specs], fixed, training))
    for view in ('t', 'step2'):
        specs = [Spec('input', [2, 3, 4, 2], view), Spec('running_mean', [3]), Spec('running_var', [3], kind='pos'),
                 Spec('weight', [3]), Spec('bias', [3])]
        variants(F, 'batch_norm/view_%s' % view, 'batch_norm', {'training': True}, specs,
                 norm_fn(bn_call, [s.name for s in specs], {'training': True}, True))
    stats = [Spec('running_mean', [3]), Spec('running_var', [3], kind='pos')]
    for name, specs, training in (('one_value_per_channel_2d', [Spec('input', [1, 3])] + stats, True),
                                  ('one_value_per_channel_4d', [Spec('input', [1, 3, 1, 1])], True),
                                  ('one_value_per_channel_3d', [Spec('input', [1, 3, 1])] + stats, True),
                                  ('running_mean_size', [Spec('input', [4, 3]), Spec('running_mean', [4]),
                                                         Spec('running_var', [4], kind='pos')], True),
                                  ('weight_size', [Spec('input', [4, 3])] + stats + [Spec('weight', [4])], True),
                                  ('bias_size', [Spec('input', [4, 3])] + stats + [Spec('weight', [3]), Spec('bias', [2])], False),
                                  ('eval_no_stats', [Spec('input', [4, 3])], False)):
        error(F, 'batch_norm/error/' + name, 'batch_norm', {'training': training}, specs,
              norm_fn(bn_call, [s.name for s in specs], {'training': training}, training))

    gn = [
        ('3d/g2_affine', [2, 4, 4], 2, True, {}),
        ('3d/g4', [2, 4, 4], 4, False, {}),
        ('4d/g3_affine', [2, 6, 2, 2], 3, True, {}),
        ('4d/g1_affine', [2, 6, 2, 2], 1, True, {'eps': 1e-3}),
        ('4d/g6', [2, 6, 2, 2], 6, False, {}),
        ('2d/g2_affine', [4, 4], 2, True, {}),
    ]
    for name, xs, groups, affine, extra in gn:
        specs = [Spec('input', xs)] + ([Spec('weight', [xs[1]]), Spec('bias', [xs[1]])] if affine else [])
        args = dict({'num_groups': groups}, **extra)
        variants(F, 'group_norm/' + name, 'group_norm', args, specs,
                 norm_fn(lambda x, **kw: Fn.group_norm(x, **kw), [s.name for s in specs], args, False))
    for view in ('t', 'step2'):
        specs = [Spec('input', [2, 4, 3, 4], view), Spec('weight', [4]), Spec('bias', [4])]
        variants(F, 'group_norm/view_%s' % view, 'group_norm', {'num_groups': 2}, specs,
                 norm_fn(lambda x, **kw: Fn.group_norm(x, **kw), [s.name for s in specs], {'num_groups': 2}, False))
    for name, specs, groups in (('groups_not_dividing', [Spec('input', [2, 6, 4])], 4),
                                ('weight_size', [Spec('input', [2, 6, 4]), Spec('weight', [5])], 3),
                                ('bias_size', [Spec('input', [2, 6, 4]), Spec('weight', [6]), Spec('bias', [3])], 3)):
        error(F, 'group_norm/error/' + name, 'group_norm', {'num_groups': groups}, specs,
              norm_fn(lambda x, **kw: Fn.group_norm(x, **kw), [s.name for s in specs], {'num_groups': groups}, False))

    inn = [  # (id, x shape, use_input_stats, running stats, weight/bias, extra args)
        ('3d/plain', [2, 3, 4], True, False, False, {}),
        ('3d/affine', [2, 3, 4], True, False, True, {'eps': 1e-3}),
        ('4d/plain', [2, 3, 2, 4], True, False, False, {}),
        ('4d/affine', [2, 3, 2, 4], True, False, True, {}),
        ('4d/running_stats', [2, 3, 2, 4], True, True, True, {}),
        ('3d/running_stats', [2, 3, 4], True, True, False, {'momentum': 0.25}),
        ('4d/eval_stats', [2, 3, 2, 4], False, True, True, {}),
        ('3d/eval_stats', [2, 3, 4], False, True, False, {}),
    ]
    for name, xs, use, stats, affine, extra in inn:
        c = xs[1]
        specs = [Spec('input', xs)]
        if stats:
            specs += [Spec('running_mean', [c]), Spec('running_var', [c], kind='pos')]
        if affine:
            specs += [Spec('weight', [c]), Spec('bias', [c])]
        args = dict({'use_input_stats': use}, **extra)
        fixed = {'use_input_stats': use, 'momentum': extra.get('momentum', 0.1), 'eps': extra.get('eps', 1e-5)}
        variants(F, 'instance_norm/' + name, 'instance_norm', args, specs,
                 norm_fn(lambda x, **kw: Fn.instance_norm(x, **kw), [s.name for s in specs], fixed, use))
    for view in ('t', 'step2'):
        specs = [Spec('input', [2, 3, 4, 3], view), Spec('weight', [3]), Spec('bias', [3])]
        variants(F, 'instance_norm/view_%s' % view, 'instance_norm', {'use_input_stats': True}, specs,
                 norm_fn(lambda x, **kw: Fn.instance_norm(x, **kw), [s.name for s in specs], {'use_input_stats': True}, True))
    for name, specs, use in (('one_spatial_element', [Spec('input', [2, 3, 1])], True),
                             ('2d_input', [Spec('input', [2, 3])], True),
                             ('eval_no_stats', [Spec('input', [2, 3, 4])], False),
                             ('weight_size', [Spec('input', [2, 3, 4]), Spec('weight', [4])], True),
                             ('running_mean_size', [Spec('input', [2, 3, 4]), Spec('running_mean', [2]),
                                                    Spec('running_var', [2], kind='pos')], True)):
        error(F, 'instance_norm/error/' + name, 'instance_norm', {'use_input_stats': use}, specs,
              norm_fn(lambda x, **kw: Fn.instance_norm(x, **kw), [s.name for s in specs], {'use_input_stats': use}, use))


def batchnorm_module(F):
    """nn.BatchNorm2d(3) with fixed weight and bias: three training steps on fixed inputs (their
    outputs), then the running statistics and num_batches_tracked, then an eval-mode output."""
    for momentum in (0.1, None, 0.5):
        for d in DTYPES:
            key = 'bnm/%s' % momentum
            ins = [In('x1', exact(d, [2, 3, 2, 2], key + '/x1')), In('x2', exact(d, [4, 3, 1, 2], key + '/x2')),
                   In('x3', exact(d, [2, 3, 2, 2], key + '/x3')), In('x_eval', exact(d, [2, 3, 2, 2], key + '/xe')),
                   In('weight', exact(d, [3], key + '/w')), In('bias', exact(d, [3], key + '/b'))]

            def f(x1, x2, x3, xe, w, b, momentum=momentum):
                m = nn.BatchNorm2d(3, momentum=momentum).to(w.dtype)
                with torch.no_grad():
                    m.weight.copy_(w)
                    m.bias.copy_(b)
                ys = [m(x).detach() for x in (x1, x2, x3)]
                stats = [m.running_mean.clone(), m.running_var.clone(), m.num_batches_tracked.clone()]
                m.eval()
                return tuple(ys + stats + [m(xe).detach()])
            F.case('BatchNorm2d/momentum_%s/%s' % ('none' if momentum is None else momentum, d), 'BatchNorm2d',
                   {'num_features': 3, 'momentum': 'none' if momentum is None else momentum}, ins, f)


def padding(F):
    cases = [
        ('3d/2_1', [1, 2, 5], [2, 1]),
        ('3d/full_size', [2, 1, 3], [3, 3]),
        ('3d/crop_left', [1, 2, 6], [-1, 2]),
        ('3d/crop_right', [1, 2, 6], [2, -1]),
        ('4d/1_2_2_1', [1, 2, 3, 4], [1, 2, 2, 1]),
        ('4d/one_side', [2, 1, 3, 4], [4, 0, 0, 3]),
        ('4d/zero', [1, 1, 3, 4], [0, 0, 0, 0]),
        ('5d/1_1_1_0_2_1', [1, 1, 2, 3, 2], [1, 1, 1, 0, 2, 1]),
    ]
    for name, xs, pads in cases:
        variants(F, 'pad_circular/' + name, 'pad_circular', {'pad': pads}, [Spec('input', xs)],
                 lambda x, p=pads: Fn.pad(x, p, mode='circular'))
    for view in ('t', 'step2'):
        variants(F, 'pad_circular/view_%s' % view, 'pad_circular', {'pad': [1, 2, 2, 1]}, [Spec('input', [1, 2, 3, 4], view)],
                 lambda x: Fn.pad(x, [1, 2, 2, 1], mode='circular'))
    # PyTorch 1.13's circular mode wants exactly a batch and a channel dim before the padded ones.
    for name, xs, pads in (('wraps_twice', [1, 1, 3], [4, 0]), ('wraps_twice_2d', [1, 1, 2, 3], [0, 0, 3, 0]),
                           ('unbatched_3d_4_pads', [1, 2, 3], [1, 1, 1, 1]), ('unbatched_2d_2_pads', [2, 3], [1, 1]),
                           ('1d', [3], [1, 1]), ('4d_2_pads', [1, 1, 2, 3], [1, 2]), ('4d_6_pads', [1, 1, 2, 3], [1, 1, 1, 1, 1, 1]),
                           ('odd', [1, 1, 2, 3], [1, 1, 1])):
        error(F, 'pad_circular/error/' + name, 'pad_circular', {'pad': pads}, [Spec('input', xs)],
              lambda x, p=pads: Fn.pad(x, p, mode='circular'))


def state_dicts(F):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(4)
            self.pool = nn.MaxPool2d(2)
            self.features = nn.Sequential(nn.Conv2d(4, 8, 3, groups=2, bias=False), nn.GroupNorm(4, 8), nn.ReLU(),
                                          nn.AdaptiveAvgPool2d(1))
            self.head = nn.Linear(8, 10)

    models = {
        'seq': lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2)),
        'mixed': lambda: nn.Sequential(
            nn.Conv1d(2, 4, 3, bias=False), nn.BatchNorm1d(4, affine=False), nn.GroupNorm(2, 4), nn.MaxPool1d(2),
            nn.AvgPool1d(2), nn.ConvTranspose2d(4, 2, 3), nn.InstanceNorm2d(2),
            nn.InstanceNorm2d(2, affine=True, track_running_stats=True),
            nn.BatchNorm2d(2, momentum=None, track_running_stats=False), nn.AvgPool2d(2), nn.AdaptiveMaxPool2d(1),
            nn.Dropout2d()),
        'net': Net,
    }
    for name, make in models.items():
        sd = make().state_dict()
        F.case('cnn_state_dict/%s' % name, 'cnn_state_dict', {'model': name, 'keys': list(sd.keys())}, [],
               lambda sd=sd: torch.tensor([v.numel() for v in sd.values()], dtype=torch.int64))


def interp_kwargs(args):
    kw = {'mode': args['mode']}
    one_or_tuple = lambda v: v[0] if len(v) == 1 else tuple(v)  # one number: every spatial dim
    if 'size' in args:
        kw['size'] = one_or_tuple(args['size'])
    if 'scale' in args:
        kw['scale_factor'] = one_or_tuple(args['scale'])
    if 'align_corners' in args:
        kw['align_corners'] = bool(args['align_corners'])
    if 'recompute' in args:
        kw['recompute_scale_factor'] = bool(args['recompute'])
    return kw


def interpolation(F):
    """F.interpolate: nearest over 3-d and 4-d inputs, linear over 3-d, bilinear over 4-d; sizes,
    scale factors (the 2x fast path, fractional, downsampling, recomputed), align_corners."""
    cases = [
        ('nearest/size', [2, 3, 3, 4], {'mode': 'nearest', 'size': [5, 7]}),
        ('nearest/size_one_number', [1, 2, 3, 4], {'mode': 'nearest', 'size': [8]}),
        ('nearest/scale2', [1, 2, 3, 4], {'mode': 'nearest', 'scale': [2.0]}),
        ('nearest/scale1.5', [1, 2, 3, 4], {'mode': 'nearest', 'scale': [1.5]}),
        ('nearest/scale_mixed_down', [1, 2, 5, 4], {'mode': 'nearest', 'scale': [0.5, 1.75]}),
        ('nearest/scale_recompute', [1, 2, 3, 4], {'mode': 'nearest', 'scale': [1.7], 'recompute': True}),
        ('nearest/1d_size', [2, 3, 4], {'mode': 'nearest', 'size': [7]}),
        ('nearest/1d_scale', [2, 3, 4], {'mode': 'nearest', 'scale': [2.5]}),
        ('linear/size', [2, 3, 4], {'mode': 'linear', 'size': [7]}),
        ('linear/size_align', [2, 3, 4], {'mode': 'linear', 'size': [7], 'align_corners': True}),
        ('linear/scale1.5', [2, 3, 4], {'mode': 'linear', 'scale': [1.5]}),
        ('linear/down', [2, 3, 9], {'mode': 'linear', 'scale': [0.6]}),
        ('bilinear/size', [2, 3, 3, 4], {'mode': 'bilinear', 'size': [5, 7]}),
        ('bilinear/size_align', [2, 3, 3, 4], {'mode': 'bilinear', 'size': [5, 7], 'align_corners': True}),
        ('bilinear/scale2', [1, 2, 3, 4], {'mode': 'bilinear', 'scale': [2.0]}),
        ('bilinear/scale_mixed_recompute', [1, 2, 3, 4], {'mode': 'bilinear', 'scale': [1.5, 2.5], 'recompute': True}),
        ('bilinear/down', [1, 2, 6, 7], {'mode': 'bilinear', 'size': [2, 3]}),
        ('bilinear/to_one_align', [1, 2, 3, 4], {'mode': 'bilinear', 'size': [1, 1], 'align_corners': True}),
        ('bilinear/align_false_explicit', [1, 2, 3, 4], {'mode': 'bilinear', 'scale': [1.25], 'align_corners': False}),
    ]
    for name, xs, args in cases:
        variants(F, 'interpolate/' + name, 'interpolate', args, [Spec('input', xs)],
                 lambda x, a=args: Fn.interpolate(x, **interp_kwargs(a)))
    for view in ('t', 'step2'):
        for mode in ('nearest', 'bilinear'):
            args = {'mode': mode, 'size': [5, 6]}
            variants(F, 'interpolate/view_%s/%s' % (view, mode), 'interpolate', args, [Spec('input', [1, 2, 3, 4], view)],
                     lambda x, a=args: Fn.interpolate(x, **interp_kwargs(a)))
    errors = [
        ('neither', [1, 2, 3, 4], {'mode': 'nearest'}),
        ('both', [1, 2, 3, 4], {'mode': 'nearest', 'size': [5, 6], 'scale': [2.0]}),
        ('align_with_nearest', [1, 2, 3, 4], {'mode': 'nearest', 'size': [5, 6], 'align_corners': True}),
        ('bilinear_3d', [1, 2, 3], {'mode': 'bilinear', 'scale': [2.0]}),
        ('linear_4d', [1, 2, 3, 4], {'mode': 'linear', 'scale': [2.0]}),
        ('size_length', [1, 2, 3, 4], {'mode': 'nearest', 'size': [5, 6, 7]}),
        ('size_zero', [1, 2, 3, 4], {'mode': 'nearest', 'size': [0, 6]}),
    ]
    for name, xs, args in errors:
        error(F, 'interpolate/error/' + name, 'interpolate', args, [Spec('input', xs)],
              lambda x, a=args: Fn.interpolate(x, **interp_kwargs(a)))


def generate():
    F = g.Family('cnn')
    convolutions(F)
    im2col(F)
    pooling(F)
    normalization(F)
    batchnorm_module(F)
    padding(F)
    state_dicts(F)
    interpolation(F)
    return F
