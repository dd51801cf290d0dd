"""Golden family `optimizers`: three steps of RMSprop, Adagrad, Adamax, NAdam, RAdam and
Adam/AdamW with amsgrad on two parameters with fixed gradients (float32 and float64, as
gen_optim in generate.py), the same with two parameter groups whose options differ and whose
first group's lr and the second group's weight_decay change between steps, and the
optimizers' argument errors."""

import torch

import generate
from generate import DT, Family, In, gvals

STEPS = 3

CLASSES = {
    'rmsprop': torch.optim.RMSprop, 'adagrad': torch.optim.Adagrad, 'adamax': torch.optim.Adamax,
    'nadam': torch.optim.NAdam, 'radam': torch.optim.RAdam, 'adam': torch.optim.Adam,
    'adamw': torch.optim.AdamW, 'sgd': torch.optim.SGD,
}


def args_of(kw):
    """PyTorch's keyword arguments as the case's arguments (betas as beta1, beta2)."""
    a = {}
    for k, v in kw.items():
        if k == 'betas':
            a['beta1'], a['beta2'] = float(v[0]), float(v[1])
        elif isinstance(v, bool):
            a[k] = v
        else:
            a[k] = float(v)
    return a


def ins_for(d, key, steps=STEPS):
    ins = [In('p0', gvals([2, 3], key + '/p0').to(DT[d])), In('p1', gvals([4], key + '/p1').to(DT[d]))]
    for s in range(steps):
        ins.append(In('g%d.0' % (s + 1), gvals([2, 3], key + '/g0/%d' % s).to(DT[d])))
        ins.append(In('g%d.1' % (s + 1), gvals([4], key + '/g1/%d' % s).to(DT[d])))
    return ins


def run_opt(kind, kw, group1=None, set_lr=None, set_wd=None):
    """Steps the optimizer; with group1, p1 is a second group with those options, with set_lr,
    group 0's lr becomes set_lr after the first step, and with set_wd, group 1's weight_decay
    becomes set_wd after the second."""
    def f(*ts):
        params = [t.detach().clone().requires_grad_(True) for t in ts[:2]]
        if group1 is None:
            opt = CLASSES[kind](params, **kw)
        else:
            opt = CLASSES[kind]([{'params': [params[0]]}, dict(params=[params[1]], **group1)], **kw)
        outs = []
        for s in range((len(ts) - 2) // 2):
            for i, p in enumerate(params):
                p.grad = ts[2 + s * 2 + i].clone()
            opt.step()
            if s == 0 and set_lr is not None:
                opt.param_groups[0]['lr'] = set_lr
            if s == 1 and set_wd is not None:
                opt.param_groups[1]['weight_decay'] = set_wd
            outs.extend(p.detach().clone() for p in params)
        return tuple(outs)
    return f


TABLE = {
    'rmsprop': [dict(), dict(lr=0.01, alpha=0.9, eps=1e-6), dict(lr=0.01, momentum=0.9),
                dict(lr=0.01, centered=True), dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)],
    'adagrad': [dict(), dict(lr=0.1, lr_decay=0.01), dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6),
                dict(lr=0.1, weight_decay=0.1, lr_decay=0.5)],
    'adamax': [dict(), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6), dict(lr=0.01, weight_decay=0.1)],
    'nadam': [dict(), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6), dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)],
    'radam': [dict(), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6), dict(lr=0.01, weight_decay=0.1),
              dict(lr=0.01, betas=(0.9, 0.5))],
    'adam': [dict(amsgrad=True), dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)],
    'adamw': [dict(amsgrad=True), dict(lr=0.01, weight_decay=0.1, amsgrad=True)],
}

GROUPS = [
    ('sgd', dict(lr=0.1, momentum=0.9), dict(lr=0.01, weight_decay=0.1), 0.05),
    ('adam', dict(lr=0.01), dict(lr=0.1, betas=(0.5, 0.9), amsgrad=True), 0.02),
    ('adamw', dict(lr=0.01), dict(lr=0.05, weight_decay=0.5), 0.001),
    ('rmsprop', dict(lr=0.01), dict(lr=0.02, momentum=0.5, centered=True), 0.005),
    ('adagrad', dict(lr=0.1), dict(lr=0.2, lr_decay=0.1), 0.05),
    ('adamax', dict(lr=0.01), dict(lr=0.02, betas=(0.5, 0.6)), 0.005),
    ('nadam', dict(lr=0.01), dict(lr=0.02, momentum_decay=0.1), 0.005),
    ('radam', dict(lr=0.01), dict(lr=0.02, betas=(0.8, 0.5)), 0.005),
]

ERRORS = [
    ('rmsprop', dict(lr=-0.1)), ('rmsprop', dict(eps=-1.0)), ('rmsprop', dict(momentum=-0.5)),
    ('rmsprop', dict(weight_decay=-0.1)), ('rmsprop', dict(alpha=-0.5)),
    ('adagrad', dict(lr=-0.1)), ('adagrad', dict(lr_decay=-0.1)), ('adagrad', dict(weight_decay=-0.1)),
    ('adagrad', dict(initial_accumulator_value=-1.0)), ('adagrad', dict(eps=-1.0)),
    ('adamax', dict(lr=-0.1)), ('adamax', dict(eps=-1.0)), ('adamax', dict(betas=(1.0, 0.999))),
    ('adamax', dict(betas=(0.9, -0.1))), ('adamax', dict(weight_decay=-0.1)),
    ('nadam', dict(lr=-0.1)), ('nadam', dict(betas=(-0.1, 0.999))), ('nadam', dict(momentum_decay=-0.1)),
    ('radam', dict(lr=-0.1)), ('radam', dict(eps=-1.0)), ('radam', dict(betas=(0.9, 1.0))),
    ('radam', dict(weight_decay=-0.1)),
]


def generate():
    F = Family('optimizers')
    for kind, table in TABLE.items():
        for k, kw in enumerate(table):
            for d in ('float32', 'float64'):
                F.case('optimizers/%s/%d/%s' % (kind, k, d), 'optimizer', dict(kind=kind, **args_of(kw)),
                       ins_for(d, 'optimizers/%s/%d' % (kind, k)), run_opt(kind, kw))
    # RAdam rectifies the rate only once its variance estimate is tractable (rho_t > 5), from the
    # seventh step with beta2 0.999: ten steps reach that branch.
    for k, kw in enumerate([dict(lr=0.01), dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1)]):
        for d in ('float32', 'float64'):
            F.case('optimizers/radam/long/%d/%s' % (k, d), 'optimizer', dict(kind='radam', **args_of(kw)),
                   ins_for(d, 'optimizers/radam/long/%d' % k, steps=10), run_opt('radam', kw))
    for kind, kw, group1, set_lr in GROUPS:
        args = dict(kind=kind, **args_of(kw), set_lr=float(set_lr), set_wd=0.05)
        args.update({'g1_' + k: v for k, v in args_of(group1).items()})
        for d in ('float32', 'float64'):
            F.case('optimizers/groups/%s/%s' % (kind, d), 'optimizer_groups', args,
                   ins_for(d, 'optimizers/groups/' + kind), run_opt(kind, kw, group1, set_lr, 0.05))
    for k, (kind, kw) in enumerate(ERRORS):
        F.case('optimizers/%s/error/%d' % (kind, k), 'optimizer', dict(kind=kind, **args_of(kw)),
               ins_for('float32', 'optimizers/err'), run_opt(kind, kw))
    return F
