"""Golden family `nn`: the losses of torch.nn.functional beyond mse/nll/cross_entropy (values,
float64 gradients, every reduction, weights, errors, empty batches), cross_entropy's class
weights and label smoothing, cosine_similarity and normalize, nn.Unflatten, the state_dict names
of the containers, and nn.init.calculate_gain."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as Fn

import generate as g
from generate import In, T, gvals

REDUCTIONS = ('mean', 'sum', 'none')


def seeded(out):
    """The gradient fed to backward: 1 for a 0-dim result, fixed pseudo-random values otherwise."""
    if out.dim() == 0:
        return torch.tensor(1.0, dtype=out.dtype)
    r = g.rng_for('nngout/%s' % (list(out.shape),))
    return T([round(r.uniform(-1.5, 1.5), 2) for _ in range(out.numel())], g.NAME[out.dtype], list(out.shape))


def probs(shape, key, lo=0.05, hi=0.95):
    return gvals(shape, key, lo, hi)


def regression(F):
    """l1, smooth_l1 (beta), huber (delta), kl_div (every reduction, log_target)."""
    x, y = gvals([3, 4], 'reg/x'), gvals([3, 4], 'reg/y')
    variants = [('l1_loss', {}, lambda x, y, red: Fn.l1_loss(x, y, reduction=red))]
    for beta in (1.0, 0.5, 0.0):
        variants.append(('smooth_l1_loss', {'beta': beta},
                         lambda x, y, red, beta=beta: Fn.smooth_l1_loss(x, y, reduction=red, beta=beta)))
    for delta in (1.0, 0.7, 2.5):
        variants.append(('huber_loss', {'delta': delta},
                         lambda x, y, red, delta=delta: Fn.huber_loss(x, y, reduction=red, delta=delta)))
    for k, (op, extra, fn) in enumerate(variants):
        for red in REDUCTIONS:
            args = dict(extra, reduction=red)
            for d in ('float32', 'float64'):
                F.case('%s/%d/%s/%s' % (op, k, red, d), op, args,
                       [In('input', x.to(g.DT[d])), In('target', y.to(g.DT[d]))],
                       lambda x, y, fn=fn, red=red: fn(x, y, red))
            F.case('%s/%d/grad/%s' % (op, k, red), op, args, [In('input', x, rg=True), In('target', y, rg=True)],
                   lambda x, y, fn=fn, red=red: fn(x, y, red), gout=seeded)
        F.case('%s/%d/empty' % (op, k), op, dict(extra), [In('input', torch.zeros([0, 3])), In('target', torch.zeros([0, 3]))],
               lambda x, y, fn=fn: fn(x, y, 'mean'))
        F.case('%s/%d/view' % (op, k), op, dict(extra, reduction='sum'),
               [In('input', x.float(), 't'), In('target', y.float(), 'step2')], lambda x, y, fn=fn: fn(x, y, 'sum'))
    # Negative beta, non-positive delta.
    F.case('smooth_l1_loss/negative_beta_error', 'smooth_l1_loss', {'beta': -1.0}, [In('input', x), In('target', y)],
           lambda x, y: Fn.smooth_l1_loss(x, y, beta=-1.0))
    F.case('huber_loss/zero_delta_error', 'huber_loss', {'delta': 0.0}, [In('input', x), In('target', y)],
           lambda x, y: Fn.huber_loss(x, y, delta=0.0))

    lp = torch.log_softmax(gvals([3, 4], 'kl/x'), 1)
    p = torch.softmax(gvals([3, 4], 'kl/y'), 1)
    p[1, 2] = 0.0  # xlogy(0, 0) = 0
    for red in REDUCTIONS + ('batchmean',):
        for log_target in (False, True):
            tgt = torch.log_softmax(gvals([3, 4], 'kl/ly'), 1) if log_target else p
            args = {'reduction': red, 'log_target': log_target}
            # The target's gradient where a probability is 0 is NaN in PyTorch (d/dt t log t is
            # -inf there) and xlogy's 0 in Locus (functional.h): it is checked on a positive target.
            F.case('kl_div/%s/%d' % (red, log_target), 'kl_div', args, [In('input', lp, rg=True), In('target', tgt)],
                   lambda x, t, red=red, lt=log_target: Fn.kl_div(x, t, reduction=red, log_target=lt), gout=seeded)
            pos = torch.log_softmax(gvals([3, 4], 'kl/ly'), 1) if log_target else torch.softmax(gvals([3, 4], 'kl/y'), 1)
            F.case('kl_div/%s/%d/target_grad' % (red, log_target), 'kl_div', args,
                   [In('input', lp, rg=True), In('target', pos, rg=True)],
                   lambda x, t, red=red, lt=log_target: Fn.kl_div(x, t, reduction=red, log_target=lt), gout=seeded)
            F.case('kl_div/%s/%d/float32' % (red, log_target), 'kl_div', args,
                   [In('input', lp.float()), In('target', tgt.float())],
                   lambda x, t, red=red, lt=log_target: Fn.kl_div(x, t, reduction=red, log_target=lt))
    F.case('kl_div/0dim/batchmean', 'kl_div', {'reduction': 'batchmean'},
           [In('input', torch.tensor(-0.5, dtype=torch.float64)), In('target', torch.tensor(0.25, dtype=torch.float64))],
           lambda x, t: Fn.kl_div(x, t, reduction='batchmean'))


def binary(F):
    """binary_cross_entropy and binary_cross_entropy_with_logits: weights, pos_weight, errors."""
    x, y = probs([3, 4], 'bce/x'), probs([3, 4], 'bce/y', 0.0, 1.0)
    y[0, 0], y[1, 1] = 0.0, 1.0
    w = gvals([4], 'bce/w', 0.1, 2.0)
    logits = gvals([3, 4], 'bcel/x', -4, 4)
    logits[2, 0], logits[2, 1], logits[2, 2] = 60.0, -60.0, 0.0  # saturated both ways, and 0
    pw = gvals([4], 'bcel/pw', 0.2, 3.0)
    for red in REDUCTIONS:
        for wk, weight in (('none', None), ('w', w)):
            ins = [In('input', x, rg=True), In('target', y, rg=True)] + ([In('weight', weight)] if weight is not None else [])
            F.case('binary_cross_entropy/%s/%s' % (wk, red), 'binary_cross_entropy', {'reduction': red}, ins,
                   lambda x, t, *w, red=red: Fn.binary_cross_entropy(x, t, weight=w[0] if w else None, reduction=red),
                   gout=seeded)
            for pk, pos in (('none', None), ('pw', pw)):
                ins = [In('input', logits, rg=True), In('target', y, rg=True)]
                if weight is not None:
                    ins.append(In('weight', weight))
                if pos is not None:
                    ins.append(In('pos_weight', pos))

                def f(x, t, *rest, red=red, has_w=weight is not None, has_p=pos is not None):
                    rest = list(rest)
                    wt = rest.pop(0) if has_w else None
                    pt = rest.pop(0) if has_p else None
                    return Fn.binary_cross_entropy_with_logits(x, t, weight=wt, pos_weight=pt, reduction=red)
                F.case('binary_cross_entropy_with_logits/%s/%s/%s' % (wk, pk, red), 'binary_cross_entropy_with_logits',
                       {'reduction': red}, ins, f, gout=seeded)
    for d in ('float32',):
        F.case('binary_cross_entropy/%s' % d, 'binary_cross_entropy', {}, [In('input', x.float()), In('target', y.float())],
               lambda x, t: Fn.binary_cross_entropy(x, t))
        F.case('binary_cross_entropy_with_logits/%s' % d, 'binary_cross_entropy_with_logits', {},
               [In('input', logits.float()), In('target', y.float())], lambda x, t: Fn.binary_cross_entropy_with_logits(x, t))
    # Inputs at 0 and 1: the log clamped at -100.
    edge = T([0.0, 1.0, 0.0, 1.0], 'float64')
    F.case('binary_cross_entropy/clamped_log', 'binary_cross_entropy', {'reduction': 'none'},
           [In('input', edge), In('target', T([1.0, 0.0, 0.0, 1.0], 'float64'))],
           lambda x, t: Fn.binary_cross_entropy(x, t, reduction='none'))
    F.case('binary_cross_entropy/empty', 'binary_cross_entropy', {}, [In('input', torch.zeros([0])), In('target', torch.zeros([0]))],
           lambda x, t: Fn.binary_cross_entropy(x, t))
    F.case('binary_cross_entropy_with_logits/empty', 'binary_cross_entropy_with_logits', {'reduction': 'sum'},
           [In('input', torch.zeros([0, 2])), In('target', torch.zeros([0, 2]))],
           lambda x, t: Fn.binary_cross_entropy_with_logits(x, t, reduction='sum'))
    F.case('binary_cross_entropy/input_above_one_error', 'binary_cross_entropy', {},
           [In('input', T([0.5, 1.5], 'float64')), In('target', T([1.0, 0.0], 'float64'))],
           lambda x, t: Fn.binary_cross_entropy(x, t))
    F.case('binary_cross_entropy/input_negative_error', 'binary_cross_entropy', {},
           [In('input', T([-0.5, 0.5], 'float64')), In('target', T([1.0, 0.0], 'float64'))],
           lambda x, t: Fn.binary_cross_entropy(x, t))
    F.case('binary_cross_entropy/shape_error', 'binary_cross_entropy', {}, [In('input', x), In('target', y[0].clone())],
           lambda x, t: Fn.binary_cross_entropy(x, t))
    F.case('binary_cross_entropy_with_logits/shape_error', 'binary_cross_entropy_with_logits', {},
           [In('input', logits), In('target', y[:2].clone())], lambda x, t: Fn.binary_cross_entropy_with_logits(x, t))
    F.case('binary_cross_entropy/weight_shape_error', 'binary_cross_entropy', {},
           [In('input', x), In('target', y), In('weight', gvals([3], 'bce/w3'))],
           lambda x, t, w: Fn.binary_cross_entropy(x, t, weight=w))


def classification(F):
    """cross_entropy and nll_loss with class weights, ignore_index and label smoothing."""
    logits = gvals([5, 4], 'cel/x', -3, 3)
    w = gvals([4], 'cel/w', 0.2, 2.0)
    targets = {'plain': [1, 0, 3, 2, 1], 'default_ignored': [1, -100, 3, 2, -100], 'custom_ignored': [1, 2, 3, 2, 0],
               'all_ignored': [-100] * 5}
    for red in REDUCTIONS:
        for key, tg in targets.items():
            ii = 2 if key == 'custom_ignored' else -100
            for ls in (0.0, 0.1, 0.35):
                for wk, weight in (('none', None), ('w', w)):
                    if ls == 0.0 and weight is None:
                        continue  # the losses family has these
                    args = {'reduction': red, 'label_smoothing': ls}
                    if ii != -100:
                        args['ignore_index'] = ii
                    ins = [In('input', logits, rg=True), In('target', T(tg, 'int64'))]
                    if weight is not None:
                        ins.append(In('weight', weight))
                    F.case('cross_entropy/ls/%s/%s/%s/%s' % (key, ls, wk, red), 'F.cross_entropy', args, ins,
                           lambda x, t, *wt, red=red, ii=ii, ls=ls: Fn.cross_entropy(
                               x, t, weight=wt[0] if wt else None, reduction=red, ignore_index=ii, label_smoothing=ls),
                           gout=seeded)
            args = {'reduction': red}
            if ii != -100:
                args['ignore_index'] = ii
            lp = torch.log_softmax(logits, 1)
            F.case('nll_loss/weighted/%s/%s' % (key, red), 'F.nll_loss', args,
                   [In('input', lp, rg=True), In('target', T(tg, 'int64')), In('weight', w)],
                   lambda x, t, wt, red=red, ii=ii: Fn.nll_loss(x, t, weight=wt, reduction=red, ignore_index=ii), gout=seeded)
        # [N, C, d1, d2] with smoothing and weights; unbatched [C].
        x4 = gvals([2, 4, 2, 2], 'cel/x4')
        t4 = T([0, 3, 1, 1, -100, 0, 2, 3], 'int64', [2, 2, 2])
        F.case('cross_entropy/ls/spatial/%s' % red, 'F.cross_entropy', {'reduction': red, 'label_smoothing': 0.2},
               [In('input', x4, rg=True), In('target', t4), In('weight', w)],
               lambda x, t, wt, red=red: Fn.cross_entropy(x, t, weight=wt, reduction=red, label_smoothing=0.2), gout=seeded)
        F.case('cross_entropy/ls/unbatched/%s' % red, 'F.cross_entropy', {'reduction': red, 'label_smoothing': 0.2},
               [In('input', logits[0].clone(), rg=True), In('target', torch.tensor(2))],
               lambda x, t, red=red: Fn.cross_entropy(x, t, reduction=red, label_smoothing=0.2), gout=seeded)
        # Class probabilities with smoothing and weights.
        p = torch.softmax(gvals([5, 4], 'cel/p'), 1)
        for ls in (0.0, 0.25):
            F.case('cross_entropy/probs/ls%s/%s' % (ls, red), 'F.cross_entropy', {'reduction': red, 'label_smoothing': ls},
                   [In('input', logits, rg=True), In('target', p, rg=True), In('weight', w)],
                   lambda x, t, wt, red=red, ls=ls: Fn.cross_entropy(x, t, weight=wt, reduction=red, label_smoothing=ls),
                   gout=seeded)
    F.case('cross_entropy/ls/float32', 'F.cross_entropy', {'label_smoothing': 0.1},
           [In('input', logits.float()), In('target', T(targets['plain'], 'int64')), In('weight', w.float())],
           lambda x, t, wt: Fn.cross_entropy(x, t, weight=wt, label_smoothing=0.1))
    F.case('cross_entropy/ls/empty_batch', 'F.cross_entropy', {'label_smoothing': 0.1},
           [In('input', torch.zeros([0, 4])), In('target', torch.zeros([0], dtype=torch.int64))],
           lambda x, t: Fn.cross_entropy(x, t, label_smoothing=0.1))
    F.case('cross_entropy/label_smoothing_error', 'F.cross_entropy', {'label_smoothing': 1.5},
           [In('input', logits), In('target', T(targets['plain'], 'int64'))],
           lambda x, t: Fn.cross_entropy(x, t, label_smoothing=1.5))
    F.case('cross_entropy/weight_shape_error', 'F.cross_entropy', {},
           [In('input', logits), In('target', T(targets['plain'], 'int64')), In('weight', gvals([3], 'cel/w3'))],
           lambda x, t, wt: Fn.cross_entropy(x, t, weight=wt))
    F.case('cross_entropy/probs_ignore_index_error', 'F.cross_entropy', {'ignore_index': 1},
           [In('input', logits), In('target', torch.softmax(gvals([5, 4], 'cel/p'), 1))],
           lambda x, t: Fn.cross_entropy(x, t, ignore_index=1))


def pairs(F):
    """margin_ranking_loss, cosine_embedding_loss, cosine_similarity, normalize."""
    a, b = gvals([6], 'mr/a'), gvals([6], 'mr/b')
    y = T([1.0, -1.0, 1.0, 1.0, -1.0, -1.0], 'float64')
    for margin in (0.0, 0.5):
        for red in REDUCTIONS:
            F.case('margin_ranking_loss/%s/%s' % (margin, red), 'margin_ranking_loss', {'margin': margin, 'reduction': red},
                   [In('input1', a, rg=True), In('input2', b, rg=True), In('target', y)],
                   lambda a, b, y, m=margin, red=red: Fn.margin_ranking_loss(a, b, y, margin=m, reduction=red), gout=seeded)
    F.case('margin_ranking_loss/broadcast', 'margin_ranking_loss', {'reduction': 'none'},
           [In('input1', gvals([3, 1], 'mr/a2')), In('input2', gvals([1, 4], 'mr/b2')), In('target', T([1.0, -1.0, 1.0, -1.0], 'float64', [1, 4]))],
           lambda a, b, y: Fn.margin_ranking_loss(a, b, y, reduction='none'))
    F.case('margin_ranking_loss/dim_error', 'margin_ranking_loss', {},
           [In('input1', gvals([3, 1], 'mr/a2')), In('input2', gvals([3], 'mr/b3')), In('target', gvals([3], 'mr/y3'))],
           lambda a, b, y: Fn.margin_ranking_loss(a, b, y))

    x1, x2 = gvals([4, 5], 'ce/x1'), gvals([4, 5], 'ce/x2')
    t = T([1.0, -1.0, -1.0, 1.0], 'float64')
    for margin in (0.0, -0.3, 0.2):
        for red in REDUCTIONS:
            F.case('cosine_embedding_loss/%s/%s' % (margin, red), 'cosine_embedding_loss', {'margin': margin, 'reduction': red},
                   [In('input1', x1, rg=True), In('input2', x2, rg=True), In('target', t)],
                   lambda a, b, y, m=margin, red=red: Fn.cosine_embedding_loss(a, b, y, margin=m, reduction=red), gout=seeded)
    F.case('cosine_embedding_loss/unbatched', 'cosine_embedding_loss', {},
           [In('input1', x1[0].clone(), rg=True), In('input2', x2[0].clone(), rg=True), In('target', torch.tensor(-1.0, dtype=torch.float64))],
           lambda a, b, y: Fn.cosine_embedding_loss(a, b, y), gout=seeded)
    F.case('cosine_embedding_loss/float32', 'cosine_embedding_loss', {'margin': 0.1},
           [In('input1', x1.float()), In('input2', x2.float()), In('target', t.float())],
           lambda a, b, y: Fn.cosine_embedding_loss(a, b, y, margin=0.1))
    F.case('cosine_embedding_loss/target_2d_error', 'cosine_embedding_loss', {},
           [In('input1', x1), In('input2', x2), In('target', t.reshape(2, 2))], lambda a, b, y: Fn.cosine_embedding_loss(a, b, y))
    F.case('cosine_embedding_loss/input_dim_error', 'cosine_embedding_loss', {},
           [In('input1', x1[0].clone()), In('input2', x2[0].clone()), In('target', t)], lambda a, b, y: Fn.cosine_embedding_loss(a, b, y))

    for dim in (1, 0, -1):
        F.case('cosine_similarity/dim%d' % dim, 'cosine_similarity', {'dim': dim},
               [In('x1', x1, rg=True), In('x2', x2, rg=True)],
               lambda a, b, dim=dim: Fn.cosine_similarity(a, b, dim=dim), gout=seeded)
    F.case('cosine_similarity/broadcast', 'cosine_similarity', {'dim': 1},
           [In('x1', x1, rg=True), In('x2', x2[:1].clone(), rg=True)],
           lambda a, b: Fn.cosine_similarity(a, b, dim=1), gout=seeded)
    F.case('cosine_similarity/float32', 'cosine_similarity', {'dim': 1}, [In('x1', x1.float()), In('x2', x2.float())],
           lambda a, b: Fn.cosine_similarity(a, b, dim=1))
    F.case('cosine_similarity/dim_error', 'cosine_similarity', {'dim': 2}, [In('x1', x1), In('x2', x2)],
           lambda a, b: Fn.cosine_similarity(a, b, dim=2))

    z = x1.clone()
    z[2] = 0.0  # a zero row: the norm clamped at eps
    for p in (2.0, 1.0, 3.0, math.inf):
        for dim in (1, 0):
            F.case('normalize/p%s/dim%d' % (p, dim), 'normalize', {'p': p, 'dim': dim}, [In('input', z, rg=True)],
                   lambda x, p=p, dim=dim: Fn.normalize(x, p=p, dim=dim), gout=seeded)
    F.case('normalize/float32', 'normalize', {}, [In('input', x1.float())], lambda x: Fn.normalize(x))


def modules(F):
    """nn.Unflatten, the containers' state_dict names, calculate_gain."""
    x = gvals([2, 12], 'unf/x')
    for dim, sizes in ((1, [3, 4]), (1, [2, -1, 3]), (-1, [12]), (0, [1, 2])):
        F.case('Unflatten/%d/%s' % (dim, '_'.join(map(str, sizes))), 'Unflatten', {'dim': dim, 'sizes': sizes},
               [In('input', x, rg=True)], lambda x, dim=dim, sizes=sizes: nn.Unflatten(dim, sizes)(x), gout=seeded)
    F.case('Unflatten/size_error', 'Unflatten', {'dim': 1, 'sizes': [5, 2]}, [In('input', x)],
           lambda x: nn.Unflatten(1, [5, 2])(x))
    F.case('Unflatten/dim_error', 'Unflatten', {'dim': 2, 'sizes': [2, 6]}, [In('input', x)],
           lambda x: nn.Unflatten(2, [2, 6])(x))

    class Lists(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Identity()
            self.layers = nn.ModuleList([nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)])
            self.layers.insert(1, nn.Linear(4, 4))
            self.layers.extend([nn.Linear(2, 2)])

    class Dicts(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({'cls': nn.Linear(4, 3), 'box': nn.Linear(4, 2), 'aux': nn.Linear(4, 1)})
            self.heads.update({'cls': nn.Linear(4, 5), 'mask': nn.Linear(4, 6)})
            self.heads.pop('box')

    class Params(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = nn.ParameterList([nn.Parameter(torch.zeros(3)), nn.Parameter(torch.zeros(2, 2))])
            self.scales.append(nn.Parameter(torch.zeros(1)))
            self.register_buffer('running', torch.zeros(2))
            self.register_buffer('scratch', torch.zeros(5), persistent=False)
            self.fc = nn.Linear(2, 2)

    for name, cls in (('lists', Lists), ('dicts', Dicts), ('params', Params)):
        sd = cls().state_dict()
        F.case('state_dict/%s' % name, 'state_dict', {'model': name, 'keys': list(sd.keys())}, [],
               lambda sd=sd: torch.tensor([v.numel() for v in sd.values()], dtype=torch.int64))

    for k, (nl, param) in enumerate((('linear', None), ('conv2d', None), ('sigmoid', None), ('tanh', None), ('relu', None),
                                     ('leaky_relu', None), ('leaky_relu', 0.2), ('leaky_relu', 0.0), ('selu', None),
                                     ('conv_transpose3d', None))):
        args = {'nonlinearity': nl}
        if param is not None:
            args['param'] = param
        F.case('calculate_gain/%d/%s' % (k, nl), 'calculate_gain', args, [],
               lambda nl=nl, param=param: torch.tensor(nn.init.calculate_gain(nl, param), dtype=torch.float64))
    for shape in ([5, 3], [4, 3, 2], [6, 2, 3, 5], [2, 7, 1, 1, 4]):
        F.case('fan_in_and_fan_out/%s' % '_'.join(map(str, shape)), 'fan_in_and_fan_out', {}, [In('input', torch.zeros(shape))],
               lambda t: torch.tensor(nn.init._calculate_fan_in_and_fan_out(t), dtype=torch.int64))
    F.case('fan_in_and_fan_out/1d_error', 'fan_in_and_fan_out', {}, [In('input', torch.zeros([4]))],
           lambda t: torch.tensor(nn.init._calculate_fan_in_and_fan_out(t)))
    F.case('calculate_gain/unknown_error', 'calculate_gain', {'nonlinearity': 'softmax'}, [],
           lambda: nn.init.calculate_gain('softmax'))


def generate():
    F = g.Family('nn')
    regression(F)
    binary(F)
    classification(F)
    pairs(F)
    modules(F)
    return F
